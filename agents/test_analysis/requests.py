"""Input processing of the analysis API: the request schema and its validation.

Everything a request can get wrong is found here, before the graph runs, and answered with a
4xx whose message names the fix: schema (422), unknown config keys (422), file count and total
size (413), unsafe paths (400, never rewritten), duplicate paths (400), invalid base64 (422),
an LLM mode without a model and without ``allow_downgrade`` (422). Content that is not UTF-8 is
not an error: the file gets an ``encoding-error`` finding and the others are analysed.
"""

from __future__ import annotations

import base64
import binascii
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.test_analysis.planning import effective_config, resolve_mode
from agents.test_analysis.state import AnalysisMode, AnalysisRequestData, SourceEntry
from config import Settings
from tools.test_analysis.pipeline import validate_files
from tools.test_analysis.schemas import AnalysisConfig
from tools.test_analysis.validation import AnalysisInputError, DecodeProblem, decode_content

__all__ = ["AnalyzeRequest", "FileIn", "InvalidRequestError", "prepare"]


class InvalidRequestError(AnalysisInputError):
    """A request that passed the schema but not its rules (config, base64)."""

    status_code = 422


class FileIn(BaseModel):
    """One file to analyse."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        description="Path relative to the project root, e.g. tests/test_cart.py. Absolute "
        "paths, '..' and '~' are rejected (400)."
    )
    content: str = Field(description="The file's text, or base64 of its bytes (see encoding).")
    encoding: Literal["utf-8", "base64"] = Field(
        "utf-8",
        description="base64: content is the file's raw bytes, base64-encoded (bytes that are "
        "not UTF-8 are reported as an encoding-error finding for that file).",
    )


class AnalyzeRequest(BaseModel):
    """An analysis request: files, mode and per-request settings."""

    model_config = ConfigDict(extra="forbid")

    files: list[FileIn] = Field(min_length=1, description="The files (MAX_FILES at most).")
    mode: AnalysisMode | None = Field(
        None, description="rules-only | llm-only | hybrid (default: ANALYSIS_DEFAULT_MODE)."
    )
    config: AnalysisConfig | None = Field(
        None,
        description="Overrides of the rule and review settings; fields left out keep "
        "the server's settings.",
    )
    allow_downgrade: bool | None = Field(
        None,
        description="Run rules-only when an LLM mode is asked for and no chat model is "
        "configured (default: ANALYSIS_ALLOW_DOWNGRADE).",
    )


def _content(item: FileIn) -> str | bytes:
    if item.encoding == "utf-8":
        return item.content
    try:
        return base64.b64decode(item.content, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidRequestError(
            f"file {item.path!r}: content is not valid base64; send the bytes base64-encoded, "
            "or the text with encoding utf-8",
            path=item.path,
        ) from None


def prepare(
    body: AnalyzeRequest, settings: Settings, *, has_model: bool
) -> tuple[AnalysisRequestData, AnalysisMode, list[str]]:
    """Validate ``body`` into the request the graph runs: (request, mode, warnings).

    Raises :class:`AnalysisInputError` subclasses carrying the HTTP status.
    """
    raw = [{"path": item.path, "content": _content(item)} for item in body.files]
    sources = validate_files(
        raw, max_files=settings.api.max_files, max_total_bytes=settings.api.max_request_bytes
    )
    files: list[SourceEntry] = []
    for source in sources:
        text = decode_content(source.content)
        if isinstance(text, DecodeProblem):
            files.append(
                SourceEntry(
                    path=source.path,
                    content="",
                    decode_error={"message": text.message, "line": text.line},
                )
            )
        else:
            files.append(SourceEntry(path=source.path, content=text, decode_error=None))
    overrides = (
        body.config.model_dump(mode="json", include=body.config.model_fields_set)
        if body.config is not None
        else {}
    )
    try:
        effective_config(settings, overrides)  # fail here, not in the graph
    except ValidationError as exc:
        raise InvalidRequestError(f"invalid config: {exc.errors()[0]['msg']}") from None
    requested = body.mode or settings.analysis.default_mode
    allow = (
        settings.analysis.allow_downgrade if body.allow_downgrade is None else body.allow_downgrade
    )
    mode, warnings = resolve_mode(requested, has_model=has_model, allow_downgrade=allow)
    request = AnalysisRequestData(
        files=files,
        mode=requested,
        config=overrides,
        allow_downgrade=allow,
        message_id=None,
        source="api",
    )
    return request, mode, warnings
