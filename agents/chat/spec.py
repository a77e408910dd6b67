"""The chat agent: answers with the configured model, or explains what works without one.

Without a model it first asks the agents that can answer from the user's own data
(`AgentCard.answer_from_data`: the knowledge agent's confident passage of the knowledge base)
and gives that answer, quoted and cited, saying so; only otherwise does it list what the
agents can do (`offline_answer`).

With a model, the other agents are offered as transfer tools (LangGraph's handoff pattern):
a call to `transfer_to_<agent>` hands the turn to that agent through `detect_handoff`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langchain_core.runnables import Runnable
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from agents.chat.prompts import (
    ASK_AGENT,
    ASK_HOW,
    CHAT_SYSTEM,
    DATA_ANSWER,
    NO_AGENT_MATCHED,
    NO_MODEL_ANSWER,
)
from agents.contract.context import AgentServices, RunContext, context_of, services_of
from agents.contract.messages import last_user_text
from agents.contract.quality import gated
from agents.contract.spec import AgentCard, AgentGraph, AgentSpec
from agents.contract.state import AgentAnswer, AgentInput, AgentOutput, AgentState
from tools.providers.chat_models import message_text

log = logging.getLogger(__name__)

NAME = "chat"
TRANSFER_PREFIX = "transfer_to_"
#: Characters of the user's message repeated in the offline answer's ready-made requests.
ASK_MESSAGE_CHARS = 200


class Transfer(BaseModel):
    """Arguments of a transfer tool."""

    reason: str = Field(default="", description="Why the other agent should handle this.")


def transfer_tools(peers: Sequence[AgentCard]) -> list[dict[str, Any]]:
    """One OpenAI-format tool per specialist agent."""
    return [
        {
            "type": "function",
            "function": {
                "name": f"{TRANSFER_PREFIX}{agent.name}",
                "description": f"Hand the request to the {agent.name} agent: {agent.description}",
                "parameters": Transfer.model_json_schema(),
            },
        }
        for agent in peers
        if agent.name != NAME
    ]


def capabilities(peers: Sequence[AgentCard]) -> str:
    lines = []
    for agent in peers:
        if agent.name == NAME:
            continue
        example = f' For example: "{agent.examples[0]}"' if agent.examples else ""
        lines.append(f"- {agent.name}: {agent.description}{example}")
    return "\n".join(lines) or "- (no specialist agents are registered)"


Client = Literal["rest", "agent_server"] | None


def ask_request(agent: str, message: str, client: Client = "rest") -> str:
    """The exact request that sends ``message`` to ``agent`` in the client the user is in: a
    /chat body (REST), the assistant id to pick (Agent Server clients such as agent-chat-ui,
    which cannot set request fields), or the graph's input (the graph used directly)."""
    if client == "agent_server":
        return f"assistant id `{agent}`"
    text = " ".join(message.split())
    if len(text) > ASK_MESSAGE_CHARS:
        text = text[: ASK_MESSAGE_CHARS - 1].rstrip() + "…"
    text = text or "<your message>"
    if client == "rest":
        return json.dumps({"message": text, "agent": agent}, ensure_ascii=False)
    body = {"messages": [{"type": "human", "content": text}], "target_agent": agent}
    return json.dumps(body, ensure_ascii=False)


def offline_answer(
    state: AgentState, peers: Sequence[AgentCard], provider: str, client: Client = "rest"
) -> str:
    """What chat says without a model: that it cannot converse, why the message came here,
    and for every other agent what it does and the exact request that asks it directly in
    the client at hand, so a message another agent can answer never ends here."""
    route = state.get("route")
    # the router's reason says why (for the default: the closest data match, if any)
    routing = f"Your message came to me: {route['reason']}." if route else NO_AGENT_MATCHED
    message = last_user_text(state.get("messages", []))
    lines = [
        ASK_AGENT.format(
            name=agent.name,
            description=agent.description,
            request=ask_request(agent.name, message, client),
            example=f'\n  For example: "{agent.examples[0]}"' if agent.examples else "",
        )
        for agent in peers
        if agent.name != NAME
    ]
    return NO_MODEL_ANSWER.format(
        provider=provider,
        routing=routing,
        how=ASK_HOW[client],
        capabilities="\n".join(lines) or "- (no specialist agents are registered)",
    )


async def answer_from_data(
    state: AgentState, peers: Sequence[AgentCard], context: RunContext
) -> AgentAnswer | None:
    """Without a model: the first confident answer another agent finds in the run's own data
    for the message (the knowledge agent: a passage of the documents the run searches, its
    owner's and the shared ones narrowed by its ``filters``, quoted and cited), or None. An
    answerer that fails is skipped: the capability list still answers."""
    message = last_user_text(state.get("messages", []))
    if not message.strip():
        return None
    services, client = context.require_services(), context.client
    for agent in peers:
        if agent.name == NAME or agent.answer_from_data is None:
            continue
        try:
            found = await agent.answer_from_data(message, context)
        except Exception as exc:  # the data answer is a bonus: never cost the user the reply
            log.warning("the %s agent's data answer failed (%s: %s); listing the agents",
                        agent.name, type(exc).__name__, exc)  # fmt: skip
            continue
        if found is None:
            continue
        text = DATA_ANSWER.format(
            provider=services.provider,
            score=found.score,
            threshold=found.threshold,
            setting=found.setting,
            text=found.text,
            agent=agent.name,
            how=ASK_HOW[client].replace("the agent's name", f"`{agent.name}`"),
        )
        data = {
            "answered_from": agent.name,
            "score": found.score,
            "threshold": found.threshold,
            "citations": list(found.citations),
        }
        return AgentAnswer(agent=NAME, answer=text, method="extractive", data=data)
    return None


class _BoundModels:
    """The chat model bound to the transfer tools, built once per model (the peers are fixed
    when the graph is built; binding and the tools' JSON schemas cost milliseconds a turn)."""

    def __init__(self, tools: list[dict[str, Any]]) -> None:
        self.tools = tools
        self._model: BaseChatModel | None = None
        self._bound: Runnable[Any, Any] | None = None
        self._lock = threading.Lock()

    def get(self, model: BaseChatModel) -> Runnable[Any, Any]:
        with self._lock:
            if self._bound is None or self._model is not model:
                self._model = model
                self._bound = model.bind_tools(self.tools) if self.tools else model
            return self._bound


def make_chat_node(peers: Sequence[AgentCard]) -> Any:
    bound_models = _BoundModels(transfer_tools(peers))
    system = SystemMessage(CHAT_SYSTEM.format(agents=capabilities(peers)))

    async def chat(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        """Answer the conversation (or hand off), with the model or without one."""
        services = services_of(runtime)
        model = services.llm("chat")
        if model is None:
            context = context_of(runtime)
            answer = await answer_from_data(state, peers, context) or AgentAnswer(
                agent=NAME,
                answer=offline_answer(state, peers, services.provider, context.client),
                method="offline",
            )
            return {"agent_answers": {NAME: answer}}
        reply = await bound_models.get(model).ainvoke([system, *state.get("messages", [])])
        for call in getattr(reply, "tool_calls", None) or []:
            if call["name"].startswith(TRANSFER_PREFIX):
                target = call["name"].removeprefix(TRANSFER_PREFIX)
                reason = str((call.get("args") or {}).get("reason") or "the model transferred")
                return {
                    "agent_answers": {
                        NAME: AgentAnswer(
                            agent=NAME,
                            answer="",
                            method="llm",
                            handoff_to=target,
                            handoff_reason=reason,
                        )
                    }
                }
        answer = AgentAnswer(
            agent=NAME, answer=message_text(reply), method="llm", message_id=reply.id
        )
        return {"agent_answers": {NAME: answer}}

    return chat


def build(peers: Sequence[AgentCard], services: AgentServices | None = None) -> AgentGraph:
    """The chat agent's subgraph: one node. It gets the other agents' cards to describe them
    and to offer them as transfer tools."""
    builder = StateGraph(AgentState, input_schema=AgentInput, output_schema=AgentOutput)
    builder.add_node("chat", gated("chat", make_chat_node(peers)))
    builder.add_edge(START, "chat")
    return builder.compile(name=NAME)


def chat_agent() -> AgentSpec:
    """The chat agent's registration."""
    return AgentSpec(
        name=NAME,
        description="General conversation: greetings, questions about Switchyard itself, and "
        "anything no specialist agent handles.",
        keywords=("hello", "hi", "thanks", "thank you", "help", "who are you"),
        examples=(
            "Hello, who are you?",
            "What can you do?",
            "Thanks, that was helpful.",
            "Tell me a joke.",
        ),
        build=build,
        answer_nodes=frozenset({"chat"}),
    )
