"""The chat agent: answers with the configured model, or explains what works without one.

With a model, the other agents are offered as transfer tools (LangGraph's handoff pattern):
a call to `transfer_to_<agent>` hands the turn to that agent through `detect_handoff`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from pydantic import BaseModel, Field

from agents.chat.prompts import CHAT_SYSTEM, NO_AGENT_MATCHED, NO_MODEL_ANSWER
from agents.models import message_text
from graph.registry import AgentRegistry, AgentSpec
from graph.state import AgentAnswer, MultiAgentState

NAME = "chat"
TRANSFER_PREFIX = "transfer_to_"


class Transfer(BaseModel):
    """Arguments of a transfer tool."""

    reason: str = Field(default="", description="Why the other agent should handle this.")


def transfer_tools(registry: AgentRegistry) -> list[dict[str, Any]]:
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
        for agent in registry
        if agent.name != NAME
    ]


def capabilities(registry: AgentRegistry) -> str:
    lines = []
    for agent in registry:
        if agent.name == NAME:
            continue
        example = f' For example: "{agent.examples[0]}"' if agent.examples else ""
        lines.append(f"- {agent.name}: {agent.description}{example}")
    return "\n".join(lines) or "- (no specialist agents are registered)"


def offline_answer(state: MultiAgentState, registry: AgentRegistry, provider: str) -> str:
    route = state.get("route")
    if route is None or route["method"] == "default":
        routing = NO_AGENT_MATCHED
    else:
        routing = f"Your message was routed to me ({route['reason']})."
    return NO_MODEL_ANSWER.format(
        provider=provider, routing=routing, capabilities=capabilities(registry)
    )


def make_chat_node(
    registry: AgentRegistry,
    llm: Callable[[], BaseChatModel | None],
    provider: Callable[[], str],
) -> Callable[[MultiAgentState], Awaitable[dict[str, Any]]]:
    async def chat(state: MultiAgentState) -> dict[str, Any]:
        """Answer the conversation (or hand off), with the model or without one."""
        model = llm()
        if model is None:
            answer = AgentAnswer(
                agent=NAME, answer=offline_answer(state, registry, provider()), method="offline"
            )
            return {"agent_answers": {NAME: answer}}
        tools = transfer_tools(registry)
        bound = model.bind_tools(tools) if tools else model
        system = SystemMessage(CHAT_SYSTEM.format(agents=capabilities(registry)))
        reply = await bound.ainvoke([system, *state.get("messages", [])])
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
        answer = AgentAnswer(agent=NAME, answer=message_text(reply), method="llm")
        return {"agent_answers": {NAME: answer}}

    return chat


def chat_agent(registry: AgentRegistry) -> AgentSpec:
    """The chat agent's registration. It needs the registry to describe the other agents."""

    def install(builder: Any, deps: Any) -> None:
        from graph.quality import gated

        builder.add_node(
            "chat",
            gated("chat", make_chat_node(registry, deps.llm, lambda: _provider(deps))),
        )

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
        entry="chat",
        exit="chat",
        install=install,
        nodes=("chat",),
    )


def _provider(deps: Any) -> str:
    factory = deps.llm_factory
    return factory.provider if factory is not None else deps.settings.llm_provider
