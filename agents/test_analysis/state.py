"""The test-analysis agent's own state: its subgraph's schema (the root state never holds it).

Every value is plain data (dicts, lists, str, numbers): the Redis saver checkpoints it after
every step, and pydantic objects would need the serializer's allowlist on every load. Parsed
files and ASTs never enter the state; they live in the per-process parse cache
(:mod:`tools.test_analysis.filework`), keyed by path + content, so a resumed run in another
process simply parses again.

Lifecycle: ``plan_analysis`` sets ``analysis_request`` from the turn's ``agent_input`` (the
API's validated request) or from the chat message; the subgraph starts from a fresh state every
turn, so a thread that runs several analyses (a chat session) never mixes two of them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict

from agents.contract.context import AgentOptions, override
from agents.contract.state import AgentState

AnalysisMode = Literal["rules-only", "llm-only", "hybrid"]
MODES: tuple[AnalysisMode, ...] = ("rules-only", "llm-only", "hybrid")
#: A finding as stored in the state: ``Finding.model_dump(mode="json")`` (context included).
FindingData = dict[str, Any]


class DecodeErrorInfo(TypedDict):
    """Why a file's bytes are not text (reported as an ``encoding-error`` finding)."""

    message: str
    line: int


class SourceEntry(TypedDict, total=False):
    """One input file: a normalised relative path and its text (or why it has none)."""

    path: str
    content: str
    decode_error: DecodeErrorInfo | None


class AnalysisRequestData(TypedDict, total=False):
    """What to analyse and how, as validated by the API or extracted from a chat message."""

    files: list[SourceEntry]
    mode: AnalysisMode | None
    config: dict[str, Any]
    allow_downgrade: bool | None
    message_id: str | None
    source: Literal["api", "chat"]


class PlannedFile(TypedDict, total=False):
    """A file as the planner sized it."""

    path: str
    bytes: int
    lines: int
    cached: bool
    decode_error: bool


class BatchRef(TypedDict):
    """An LLM batch as the plan lists it (the sources travel in the batch's Send packet)."""

    batch_id: str
    index: int
    tests: list[str]
    estimated_tokens: int


class Estimate(TypedDict):
    """What the planner expects the analysis to cost."""

    llm_calls: int
    prompt_tokens: int
    output_tokens: int
    seconds: float


class AnalysisPlan(TypedDict, total=False):
    """The plan: which branches run, over which files and batches, at what expected cost."""

    status: Literal["ready", "empty", "rejected"]
    problem: str | None
    source: Literal["api", "chat"]
    mode: AnalysisMode
    requested_mode: AnalysisMode
    warnings: list[str]
    config: dict[str, Any]
    files: list[PlannedFile]
    tests: int | None
    batches: list[BatchRef]
    estimate: Estimate
    cache_hits: int
    started_at: float


class ReviewTask(TypedDict):
    """The payload of one ``review_with_llm`` Send: a batch and how to judge its answer."""

    batch: dict[str, Any]
    min_confidence: float


class BatchReview(TypedDict, total=False):
    """The outcome of one LLM batch."""

    batch_id: str
    index: int
    status: Literal["ok", "malformed"]
    findings: list[FindingData]
    dropped: int
    calls: int
    error: str | None


# --- reducers --------------------------------------------------------------------------------


def merge_reviews(
    left: dict[str, BatchReview] | None, right: dict[str, BatchReview] | None
) -> dict[str, BatchReview]:
    """Collect batch reviews by batch id (every ``review_with_llm`` task adds its own)."""
    return {**(left or {}), **(right or {})}


def add_stages(left: list[str] | None, right: list[str] | None) -> list[str]:
    """Append finished stages once each (35 review tasks are one stage)."""
    merged = list(left or [])
    for stage in right or []:
        if stage not in merged:
            merged.append(stage)
    return merged


# --- the section -----------------------------------------------------------------------------


class AnalysisOptions(AgentOptions):
    """Per-run overrides of the test-analysis agent's settings (unset = the setting)."""

    analysis_default_mode: AnalysisMode | None = override("analysis_default_mode")
    analysis_allow_downgrade: bool | None = override("analysis_allow_downgrade")


class AnalysisState(AgentState, total=False):
    """The test-analysis agent's working state within a run."""

    analysis_request: AnalysisRequestData | None
    """The files, mode and config to analyse (the API's request or from a chat message)."""
    analysis_plan: AnalysisPlan | None
    """What `plan_analysis` decided: mode, files, LLM batches, estimates."""
    llm_batches: list[dict[str, Any]] | None
    """The LLM batches with their test sources, read by the fan-out; cleared after synthesis."""
    analysis_files: list[dict[str, Any]] | None
    """One report per input file (status, lines, tests), from `parse_files`."""
    rule_findings: list[FindingData] | None
    """Findings of the rule engine, from `check_rules`."""
    llm_reviews: Annotated[dict[str, BatchReview], merge_reviews]
    """LLM review outcome per batch id, one entry per finished `review_with_llm` task."""
    analysis_findings: list[FindingData] | None
    """Merged, deduplicated, sorted findings (synthesis), then with fixes and examples."""
    analysis_summary: dict[str, Any] | None
    """Counts over the findings, from `synthesize_findings`."""
    analysis_result: dict[str, Any] | None
    """The checked response: issues, summary, metrics, files (from `assure_quality`)."""
    analysis_stages: Annotated[list[str], add_stages]
    """Stages of the current analysis that have finished, in order."""


#: The agent's registry name (routing, `agent_answers` key).
AGENT = "test_analysis"
#: The agent's stage nodes, in pipeline order (the names Studio shows).
STAGES = (
    "plan_analysis",
    "parse_files",
    "check_rules",
    "review_with_llm",
    "synthesize_findings",
    "enhance_findings",
    "assure_quality",
)
