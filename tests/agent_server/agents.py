"""Two small agents for the Agent Server tests, added through the public contract only.

- ``approval``: proposes an action, asks for approval with LangGraph's ``interrupt()``, then
  answers with what it was told (resume with ``Command(resume=...)``);
- ``steps``: four steps in a row; each counts its executions in Redis
  (``sy-test:steps:<thread>:<step>``) and, while ``sy-test:hold:<step>`` exists, waits there.
  A test holds a step, waits until its counter shows it started, kills the process: the
  counters then show which steps ran again after the restart.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aredis
from langgraph.config import get_stream_writer
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from agents.contract.context import AgentServices, RunContext, services_of
from agents.contract.messages import last_user_text
from agents.contract.spec import AgentCard, AgentGraph, AgentSpec
from agents.contract.state import AgentAnswer, AgentInput, AgentOutput, AgentState

STEPS = ("step_1", "step_2", "step_3", "step_4")


class ApprovalState(AgentState, total=False):
    proposal: str
    decision: Any


def propose(state: ApprovalState) -> dict[str, Any]:
    return {"proposal": f"do: {last_user_text(state.get('messages', []))}"}


def ask(state: ApprovalState) -> dict[str, Any]:
    decision = interrupt({"question": "Approve?", "proposal": state.get("proposal")})
    return {"decision": decision}


def apply(state: ApprovalState) -> dict[str, Any]:
    decision = state.get("decision")
    text = f"{state.get('proposal')} -> {decision}"
    answer = AgentAnswer(agent="approval", answer=text, method="rules", data={"decision": decision})
    return {"agent_answers": {"approval": answer}}


def build_approval(peers: Sequence[AgentCard], services: AgentServices) -> AgentGraph:
    builder = StateGraph(ApprovalState, input_schema=AgentInput, output_schema=AgentOutput)
    builder.add_node("propose", propose)
    builder.add_node("ask", ask)
    builder.add_node("apply", apply)
    builder.add_edge(START, "propose")
    builder.add_edge("propose", "ask")
    builder.add_edge("ask", "apply")
    return builder.compile(name="approval")


def approval_agent() -> AgentSpec:
    return AgentSpec(
        name="approval",
        description="Asks a human to approve an action before doing it.",
        keywords=("approve",),
        examples=("Please approve the deployment.",),
        build=build_approval,
    )


class StepsState(AgentState, total=False):
    done: list[str]


def make_step(name: str) -> Any:
    async def step(state: StepsState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        url = services_of(runtime).settings.storage.redis_url or ""
        thread = state.get("session_id") or "none"
        client = aredis.Redis.from_url(url)
        try:
            await client.incr(f"sy-test:steps:{thread}:{name}")
            get_stream_writer()({"step": name, "started": True})
            while await client.exists(f"sy-test:hold:{name}"):
                await asyncio.sleep(0.02)
        finally:
            await client.aclose()
        done = [*state.get("done", []), name]
        if name != STEPS[-1]:
            return {"done": done}
        answer = AgentAnswer(agent="steps", answer=" ".join(done), method="rules", data={})
        return {"done": done, "agent_answers": {"steps": answer}}

    return step


def build_steps(peers: Sequence[AgentCard], services: AgentServices) -> AgentGraph:
    builder = StateGraph(StepsState, input_schema=AgentInput, output_schema=AgentOutput)
    previous = START
    for name in STEPS:
        builder.add_node(name, make_step(name))
        builder.add_edge(previous, name)
        previous = name
    return builder.compile(name="steps")


def steps_agent() -> AgentSpec:
    return AgentSpec(
        name="steps",
        description="Runs four counted steps (a test agent).",
        keywords=("steps",),
        examples=("Run the steps.",),
        build=build_steps,
    )
