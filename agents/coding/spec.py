"""The coding agent in the Switchyard graph: its subgraph and its `AgentSpec`.

    START -> prepare_request -+-> coding_loop ---> END    (a chat model is configured)
                              +-> review_pasted -> END    (no model, or only a traceback)
                              +-> END                     (answered: refused or invalid)

- `prepare_request` reads the turn: a structured request (`agent_input`, validated as a
  `GenerateRequest`: REST's `POST /code/generate`) or the latest chat message; fixes the run's
  bound (the request's `max_iterations`, else the `coding_max_iterations` option, else
  CODING_MAX_ITERATIONS); and picks the path. A structured request without a model is answered
  here (generation needs a model), as is an invalid one.
- `coding_loop` runs the ReAct agent (`build_coding_agent`: create_agent with the four tools and
  the `CodingLoop` bound) on a conversation of its own: the request (plus a few plain earlier
  messages in chat, for follow-ups). Its tool calls and tool messages stay in that nested
  graph; only the answer and the six-field result leave this subgraph. A model that fails
  mid-run ends the run with the best code so far, the failure among its issues.
- `review_pasted` answers without generating: checks and runs (in the sandbox) code the user
  pasted, and explains a pasted traceback (the model explains it when there is one).

Every path answers `agent_answers["coding"]` with `data` = the six fields (`CodingResult`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphBubbleUp
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import ValidationError

from agents.coding.attempts import result_of
from agents.coding.middleware import clamp_iterations
from agents.coding.pasted import review_pasted
from agents.coding.probe import holds_code
from agents.coding.react import build_coding_agent, recursion_limit_for
from agents.coding.render import render_result
from agents.coding.requests import CodingOptions, GenerateRequest
from agents.coding.routing import DESCRIPTION, EXAMPLES, KEYWORDS, NAME
from agents.coding.run import coding_input
from agents.contract.context import AgentServices, RunContext, context_of
from agents.contract.messages import last_user_text
from agents.contract.quality import gated
from agents.contract.spec import AgentCard, AgentGraph, AgentSpec
from agents.contract.state import AgentAnswer, AgentInput, AgentOutput, AgentState
from tools.coding.execute import to_frame
from tools.coding.extract import extract_pasted
from tools.coding.generate import NO_MODEL, answer_text
from tools.coding.schemas import CodingResult
from tools.coding.toolkit import CodingToolkit
from tools.mcp_client import remote_tools_of
from tools.operations import EngineNotOpen, Engines

logger = logging.getLogger(__name__)

Path = Literal["loop", "review", "answered"]
#: Earlier plain (user / final answer) messages the loop's model sees in chat, for follow-ups.
HISTORY_MESSAGES = 4
#: Characters kept of each earlier message.
HISTORY_CHARS = 4000


class CodingTurnState(AgentState, total=False):
    """The coding agent's working state for one turn (never in the root state)."""

    coding_path: Path
    """Where `prepare_request` sent the turn."""
    coding_request: dict[str, Any] | None
    """The validated structured request (`GenerateRequest`), or None in chat."""
    coding_bound: int
    """The run's bound on code generations."""


def empty_result(issue: str) -> CodingResult:
    """The six fields of a request that produced no code."""
    return CodingResult(
        generated_code="",
        iteration_count=0,
        is_code_valid=False,
        code_issues=[issue],
        runtime_error=None,
        execution_result=None,
    )


def answer_update(
    text: str, method: str, result: CodingResult, *, errors: Sequence[str] = ()
) -> dict[str, Any]:
    """The turn's answer: the text, and the six fields as its data."""
    data = result.model_dump(mode="json")
    answer = AgentAnswer(agent=NAME, answer=text, method=method, data=data)
    spec_name = result.generated_code and _function_name(result.generated_code)
    context = {"last_function": spec_name or None, "last_valid": result.is_code_valid}
    update: dict[str, Any] = {"agent_answers": {NAME: answer}, "agent_contexts": {NAME: context}}
    if errors:
        update["errors"] = list(errors)
    return update


def _function_name(code: str) -> str | None:
    for line in code.splitlines():
        stripped = line.strip()
        if stripped.startswith("def ") and "(" in stripped:
            return stripped[4 : stripped.index("(")].strip() or None
    return None


def _history(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """Earlier plain messages (user text, final answers), newest last, without the current."""
    plain: list[AnyMessage] = []
    for message in messages[:-1]:
        text = answer_text(message.content).strip()
        if not text:
            continue
        if isinstance(message, HumanMessage):
            plain.append(HumanMessage(text[:HISTORY_CHARS]))
        elif isinstance(message, AIMessage) and not message.tool_calls:
            plain.append(AIMessage(text[:HISTORY_CHARS]))
    return plain[-HISTORY_MESSAGES:]


def make_nodes(
    engines: Engines, model: BaseChatModel | None, settings_bound: int
) -> dict[str, Any]:
    """The subgraph's node functions. The toolkit is the coding component's engine, found when
    a node or tool runs (`engines.engine`): while it is not open, a turn is answered with the
    EngineNotOpen message."""
    loop = (
        build_coding_agent(
            model,
            engines,
            default_max_iterations=settings_bound,
            name="react",
            # the operator's MCP servers' tools (none unless MCP_CLIENT_SERVERS is set)
            extra_tools=remote_tools_of(engines),
        )
        if model is not None
        else None
    )
    # Decided here, not by testing `loop` in `prepare_request`: a node that refers to the loop
    # would be taken for its parent graph (Studio's xray would draw the loop inside it).
    generates = loop is not None

    def prepare_request(state: CodingTurnState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        """Validate the turn's request, fix the bound, choose the path."""
        options = context_of(runtime).options(CodingOptions)
        try:
            toolkit = engines.engine(CodingToolkit)
        except EngineNotOpen as exc:
            return {
                "coding_path": "answered",
                **answer_update(str(exc), "engine_not_open", empty_result(str(exc))),
            }
        raw = state.get("agent_input")
        request: GenerateRequest | None = None
        if raw is not None:
            try:
                request = GenerateRequest.model_validate(raw)
                if request.test_data is not None:
                    to_frame(request.test_data, toolkit.limits)
            except (ValidationError, ValueError) as exc:
                problem = f"The coding request is invalid: {exc}"
                return {
                    "coding_path": "answered",
                    **answer_update(problem, "invalid_request", empty_result(problem)),
                }
        wanted = (request.max_iterations if request else None) or options.coding_max_iterations
        bound = clamp_iterations(wanted, settings_bound)
        update: dict[str, Any] = {
            "coding_bound": bound,
            "coding_request": request.model_dump(mode="json") if request else None,
        }
        if request is not None and not generates:
            return {
                **update,
                "coding_path": "answered",
                **answer_update(NO_MODEL, "no_model", empty_result(NO_MODEL)),
            }
        if request is None:
            pasted = extract_pasted(last_user_text(state.get("messages", [])))
            only_traceback = pasted.traceback is not None and pasted.code is None
            if not generates or only_traceback:
                return {**update, "coding_path": "review"}
        return {**update, "coding_path": "loop"}

    async def coding_loop(state: CodingTurnState) -> dict[str, Any]:
        """Run the ReAct loop on its own conversation; answer with its best code."""
        assert loop is not None  # the path exists only with a model
        bound = int(state.get("coding_bound") or settings_bound)
        raw = state.get("coding_request")
        if raw is not None:
            request = GenerateRequest.model_validate(raw)
            toolkit = engines.engine(CodingToolkit)  # prepare_request found it open
            inp = coding_input(request.execution_spec, request.test_data, bound, toolkit)
        else:
            messages = state.get("messages", [])
            inp = {
                "messages": [*_history(messages), HumanMessage(last_user_text(messages))],
                "execution_spec": None,
                "test_data": None,
                "max_iterations": bound,
            }
        final: dict[str, Any] = {}
        config: RunnableConfig = {"recursion_limit": recursion_limit_for(bound)}
        try:
            async for values in loop.astream(inp, config, stream_mode="values"):
                final = values
        except GraphBubbleUp:
            raise
        except Exception as exc:  # the model (or its transport) failed: keep the best code
            logger.warning("coding loop stopped: %s: %s", type(exc).__name__, exc)
            stopped = f"the run stopped early: {type(exc).__name__}: {str(exc)[:500]}"
            result = result_of(final, note=stopped)
            if stopped not in result.code_issues:
                result = result.model_copy(update={"code_issues": [*result.code_issues, stopped]})
            text = f"The coding run stopped early ({type(exc).__name__}).\n\n" + render_result(
                result
            )
            return answer_update(text, "llm", result, errors=[f"coding_loop: {stopped}"])
        result = CodingResult.model_validate(
            {key: final.get(key) for key in CodingResult.model_fields}
        )
        last = (final.get("messages") or [None])[-1]
        text = answer_text(last.content).strip() if isinstance(last, AIMessage) else ""
        return answer_update(text or render_result(result), "llm", result)

    async def review(state: CodingTurnState) -> dict[str, Any]:
        """Check / run / explain what the user pasted, without generating code."""
        toolkit = engines.engine(CodingToolkit)  # prepare_request found it open
        found = await review_pasted(last_user_text(state.get("messages", [])), toolkit)
        method = "pasted_review" if model is None else "pasted_review_llm"
        return answer_update(found.answer, method, found.result)

    return {"prepare_request": prepare_request, "coding_loop": coding_loop, "review": review}


def _has_messages(state: Mapping[str, Any]) -> str | None:
    return None if isinstance(state.get("messages"), list) else "the state has no messages"


def _answered(update: Mapping[str, Any]) -> str | None:
    answer = (update.get("agent_answers") or {}).get(NAME) or {}
    data = answer.get("data") or {}
    missing = [key for key in CodingResult.model_fields if key not in data]
    return f"the answer lacks {', '.join(missing)}" if missing else None


def _next(state: CodingTurnState) -> str:
    path = state.get("coding_path")
    return {"loop": "coding_loop", "review": "review_pasted"}.get(str(path), END)


def build(peers: Sequence[AgentCard], services: AgentServices) -> AgentGraph:
    """The coding agent's subgraph (see the module docstring)."""
    model = services.llm("chat")
    nodes = make_nodes(services, model, services.settings.coding.max_iterations)
    builder = StateGraph(CodingTurnState, input_schema=AgentInput, output_schema=AgentOutput)
    builder.add_node(
        "prepare_request",
        gated("prepare_request", nodes["prepare_request"], check_input=_has_messages),
    )
    targets: list[str] = ["review_pasted", END]
    if model is not None:
        builder.add_node(
            "coding_loop", gated("coding_loop", nodes["coding_loop"], check_output=_answered)
        )
        targets.insert(0, "coding_loop")
    builder.add_node(
        "review_pasted", gated("review_pasted", nodes["review"], check_output=_answered)
    )
    builder.add_edge(START, "prepare_request")
    builder.add_conditional_edges("prepare_request", _next, targets)
    return builder.compile(name=NAME)


def coding_agent() -> AgentSpec:
    """The coding agent's registration: routed to by "write a function that ...", pasted code
    and tracebacks (keywords), code inline in a message or Python named with what to write
    (its data probe); the ReAct loop's model tokens stream as the answer."""
    return AgentSpec(
        name=NAME,
        description=DESCRIPTION,
        keywords=KEYWORDS,
        examples=EXAMPLES,
        build=build,
        answer_nodes=frozenset({"model"}),
        options=CodingOptions,
        probe=holds_code,
    )
