"""``plan_analysis``: choose the branches, size the work, cut the LLM batches, estimate cost.

The plan is the contract of the fan-out: ``parse_files`` and ``check_rules`` read the files
it lists, one ``review_with_llm`` task runs per batch it lists, and ``assure_quality`` checks
that every planned file and batch came back. In LLM modes the planner must discover the
tests to cut the batches, so it parses (through :class:`FileWork`, running the rules on the
same tree in hybrid mode so no file is parsed twice); in rules-only mode it only sizes the
files and the parse happens inside the fan-out.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any, Literal, cast

from langgraph.runtime import Runtime

from agents.contract.context import RunContext, context_of, services_of
from agents.contract.messages import last_human
from agents.test_analysis.chat_input import extract_test_files
from agents.test_analysis.prompts import NO_CODE_ANSWER, REVIEW_SYSTEM
from agents.test_analysis.state import (
    MODES,
    AnalysisMode,
    AnalysisOptions,
    AnalysisPlan,
    AnalysisRequestData,
    AnalysisState,
    BatchRef,
    Estimate,
    PlannedFile,
)
from config import Settings
from tools.test_analysis.batches import LLMBatch, batch_tests_for_llm, estimate_tokens
from tools.test_analysis.filework import FileWork, base_config
from tools.test_analysis.parsing import ParsedFile, count_lines
from tools.test_analysis.schemas import AnalysisConfig
from tools.test_analysis.validation import AnalysisInputError, LimitExceededError, content_size

__all__ = [
    "AnalysisModeError",
    "effective_config",
    "plan_analysis",
    "resolve_mode",
    "uses_llm",
    "uses_rules",
]

#: Per-call prompt overhead besides the listing: the system prompt and the tool schema.
_CALL_OVERHEAD_TOKENS = estimate_tokens(REVIEW_SYSTEM) + 350


class AnalysisModeError(AnalysisInputError):
    """The requested mode cannot run here (no chat model for an LLM mode)."""

    status_code = 422


def uses_rules(mode: str) -> bool:
    """Whether ``mode`` runs the rule engine."""
    return mode != "llm-only"


def uses_llm(mode: str) -> bool:
    """Whether ``mode`` runs the LLM review."""
    return mode != "rules-only"


def effective_config(settings: Settings, overrides: Mapping[str, Any] | None) -> AnalysisConfig:
    """The settings' config with a request's ``overrides`` (ValidationError when invalid)."""
    base = base_config(settings)
    if not overrides:
        return base
    return AnalysisConfig.model_validate({**base.model_dump(), **overrides})


def resolve_mode(
    requested: str, *, has_model: bool, allow_downgrade: bool
) -> tuple[AnalysisMode, list[str]]:
    """The mode to run and any warnings; :class:`AnalysisModeError` when it cannot run."""
    if requested not in MODES:
        raise AnalysisModeError(f"unknown mode {requested!r}; use one of {', '.join(MODES)}")
    mode = cast(AnalysisMode, requested)
    if not uses_llm(mode) or has_model:
        return mode, []
    if allow_downgrade:
        return "rules-only", [
            f"mode {mode!r} needs a chat model and none is configured (LLM_PROVIDER=none or "
            "no provider answered); ran rules-only instead"
        ]
    raise AnalysisModeError(
        f"mode {mode!r} needs a chat model and none is configured. Configure one "
        "(LLM_PROVIDER with OPENAI_API_KEY/OPENAI_BASE_URL, or Ollama), send mode "
        "'rules-only', or send allow_downgrade: true to run rules-only instead"
    )


def current_request(
    state: AnalysisState, options: AnalysisOptions, settings: Settings
) -> AnalysisRequestData:
    """This turn's request: the API's (the turn's ``agent_input``), else from the message."""
    given = state.get("agent_input")
    if given and given.get("files") is not None:
        return AnalysisRequestData(**{**given, "source": "api"})  # type: ignore[typeddict-item]
    human = last_human(state.get("messages") or [])
    text = human.content if human is not None and isinstance(human.content, str) else ""
    mode = options.analysis_default_mode or settings.analysis.default_mode
    allow = options.analysis_allow_downgrade
    return AnalysisRequestData(
        files=extract_test_files(text),
        mode=mode,
        config={},
        allow_downgrade=settings.analysis.allow_downgrade if allow is None else allow,
        message_id=human.id if human is not None else None,
        source="chat",
    )


def _estimate(settings: Settings, lines: int, batches: list[LLMBatch]) -> Estimate:
    calls = len(batches)
    prompt = sum(b.estimated_tokens + _CALL_OVERHEAD_TOKENS for b in batches)
    waves = math.ceil(calls / settings.llm.max_concurrency) if calls else 0
    parse_s = lines / settings.analysis.rules_lines_per_second
    llm_s = waves * settings.analysis.llm_seconds_per_call
    return Estimate(
        llm_calls=calls,
        prompt_tokens=prompt,
        output_tokens=calls * settings.analysis.llm_output_tokens_per_call,
        # the LLM branch runs beside parsing and rules: the slower one sets the time
        seconds=round(max(parse_s, llm_s), 3),
    )


def _unplanned(
    request: AnalysisRequestData,
    status: Literal["empty", "rejected"],
    problem: str,
    mode: AnalysisMode,
    started: float,
) -> dict[str, Any]:
    plan = AnalysisPlan(
        status=status,
        problem=problem,
        source=request.get("source", "api"),
        mode=mode,
        requested_mode=mode,
        warnings=[],
        config={},
        files=[],
        tests=0,
        batches=[],
        estimate=Estimate(llm_calls=0, prompt_tokens=0, output_tokens=0, seconds=0.0),
        cache_hits=0,
        started_at=started,
    )
    return {
        "analysis_plan": plan,
        "analysis_request": request,
        "analysis_stages": ["plan_analysis"],
    }


def plan_analysis(state: AnalysisState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Choose the mode's branches, size every file, cut the LLM batches, estimate."""
    started = time.time()
    services = services_of(runtime)
    settings = services.settings
    filework = services.engine(FileWork)
    options = context_of(runtime).options(AnalysisOptions)
    request = current_request(state, options, settings)
    source = request.get("source", "api")
    requested = request.get("mode") or settings.analysis.default_mode
    if not request.get("files"):
        return _unplanned(request, "empty", NO_CODE_ANSWER, requested, started)
    allow = request.get("allow_downgrade")
    if allow is None:
        allow = settings.analysis.allow_downgrade
    has_model = services.llm(settings.analysis.llm_role) is not None
    try:
        mode, warnings = resolve_mode(requested, has_model=has_model, allow_downgrade=allow)
    except AnalysisModeError as exc:
        if source == "api":
            raise  # the API validated this already; a model that vanished since is an error
        return _unplanned(request, "rejected", exc.message, requested, started)
    config = effective_config(settings, request.get("config"))
    patterns = config.test_file_patterns
    files: list[PlannedFile] = []
    parsed: list[ParsedFile] = []
    lines = 0
    for entry in request["files"]:
        path, text = entry["path"], entry.get("content") or ""
        if entry.get("decode_error"):
            files.append(PlannedFile(path=path, bytes=0, lines=0, cached=False, decode_error=True))
            continue
        cached = filework.is_cached(path, text, patterns)
        n = count_lines(text)
        lines += n
        files.append(
            PlannedFile(
                path=path, bytes=content_size(text), lines=n, cached=cached, decode_error=False
            )
        )
        if uses_llm(mode):
            rules = config if uses_rules(mode) else None
            parsed.append(filework.parsed(path, text, patterns=patterns, rules=rules))
    batches = batch_tests_for_llm(parsed, config.llm_batch_size) if parsed else []
    cap = settings.quotas.max_llm_batches_per_analysis
    if len(batches) > cap:
        # Every batch is one paid LLM call: one request must not spend without bound.
        tests = sum(len(p.tests) for p in parsed)
        message = (
            f"The analysis needs {len(batches):,} LLM review calls ({tests:,} tests in batches "
            f"of {config.llm_batch_size}); at most {cap:,} are allowed "
            "(MAX_LLM_BATCHES_PER_ANALYSIS). Send fewer files, use mode rules-only, or raise "
            "MAX_LLM_BATCHES_PER_ANALYSIS."
        )
        if source == "api":
            raise LimitExceededError(message)
        return _unplanned(request, "rejected", message, requested, started)
    plan = AnalysisPlan(
        status="ready",
        problem=None,
        source=source,
        mode=mode,
        requested_mode=cast(AnalysisMode, requested),
        warnings=warnings,
        config=config.model_dump(mode="json"),
        files=files,
        tests=sum(len(p.tests) for p in parsed) if uses_llm(mode) else None,
        batches=[
            BatchRef(
                batch_id=b.batch_id,
                index=b.index,
                tests=[f"{u.file}::{u.qualname}" for u in b.tests],
                estimated_tokens=b.estimated_tokens,
            )
            for b in batches
        ],
        estimate=_estimate(settings, lines, batches),
        cache_hits=sum(1 for f in files if f["cached"]),
        started_at=started,
    )
    return {
        "analysis_plan": plan,
        "analysis_request": request,
        "analysis_stages": ["plan_analysis"],
        "llm_batches": [b.model_dump() for b in batches] or None,
    }
