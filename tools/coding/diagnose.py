"""`analyze_error`'s engine: why code failed, and how to fix it.

Without a model (or when the model fails) the analysis is deterministic: the exception type,
the failing line of the user's code and its expression (from the traceback's frames and
Python 3.11's `^^^` markers), and known pitfalls — pandas' label vs position indexing
(`df.loc[i]` vs `df.iloc[i]`), missing columns, ambiguous truth values of a Series, removed
pandas APIs, dtype mix-ups, and the sandbox's own limits. With a model, it gets the code, the
error and that rule analysis, and answers with structured output.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from tools.coding.prompts import ANALYZE_SYSTEM, analyze_request
from tools.coding.schemas import AnalyzeErrorOutput

logger = logging.getLogger(__name__)

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_LAST_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s?(?P<message>.*))?$")
_CARETS = re.compile(r"^\s*[~^]*\^[~^]*\s*$")
USER_FILES = ("user_code.py", "<string>", "<stdin>")
LIBRARY_FILE = re.compile(r"site-packages|dist-packages|/opt/site/|/lib/python3")


@dataclass
class ParsedError:
    """What a traceback says."""

    error_type: str | None = None
    message: str = ""
    line: int | None = None
    code_line: str | None = None
    expression: str | None = None
    frames: list[tuple[str, int]] = field(default_factory=list)


def parse_error(error: str, code: str = "", error_type: str | None = None) -> ParsedError:
    """The exception type, message, failing user line and expression of a traceback."""
    parsed = ParsedError(error_type=error_type)
    lines = error.strip().splitlines()
    located: list[tuple[int, int]] = []  # (index of the frame line, line number)
    user_frames: list[tuple[int, int]] = []
    for index, text in enumerate(lines):
        match = _FRAME.search(text)
        if not match:
            continue
        number = int(match.group("line"))
        parsed.frames.append((match.group("file"), number))
        if not LIBRARY_FILE.search(match.group("file")):
            located.append((index, number))
        if match.group("file") in USER_FILES:
            user_frames.append((index, number))
    # The user's innermost frame; in a traceback of other code, its innermost non-library one.
    chosen = user_frames[-1] if user_frames else (located[-1] if located else None)
    if chosen is not None:
        index, parsed.line = chosen
        source = lines[index + 1] if index + 1 < len(lines) else ""
        carets = lines[index + 2] if index + 2 < len(lines) else ""
        if _CARETS.match(carets) and source.strip():
            start = len(carets) - len(carets.lstrip())
            parsed.expression = source[start : len(carets.rstrip())].strip() or None
        elif not code and source.strip() and not _FRAME.search(source):
            parsed.code_line = source.strip()
    for text in reversed(lines):
        match = _LAST_EXCEPTION.match(text.strip())
        if match and (match.group("message") is not None or text.strip().endswith("Error")):
            parsed.error_type = parsed.error_type or match.group("type").split(".")[-1]
            parsed.message = (match.group("message") or "").strip()
            break
    else:
        parsed.message = lines[-1].strip() if lines else ""
    code_lines = code.splitlines()
    if user_frames and parsed.line is not None and 0 < parsed.line <= len(code_lines):
        parsed.code_line = code_lines[parsed.line - 1].strip()
    if parsed.expression is None:
        parsed.expression = parsed.code_line
    if parsed.line is None and code and parsed.error_type == "KeyError":
        # No frame: find the first indexing of the key in the code.
        key = parsed.message.strip("'\"")
        for number, text in enumerate(code_lines, 1):
            if key and (f"[{key}]" in text or f"['{key}']" in text or f'["{key}"]' in text):
                parsed.line, parsed.code_line = number, text.strip()
                parsed.expression = parsed.code_line
                break
    return parsed


def _pitfalls(parsed: ParsedError) -> list[tuple[str, str]]:
    """(finding, suggestion) pairs of known mistakes matching the error."""
    kind = parsed.error_type or ""
    message = parsed.message
    expression = parsed.expression or parsed.code_line or ""
    found: list[tuple[str, str]] = []
    if kind == "KeyError" and ".loc[" in expression and re.fullmatch(r"-?\d+", message.strip("'")):
        found.append(
            (
                f"`.loc[{message}]` looks the label {message} up in the index, and the index has "
                "no such label (after filtering or sorting, labels are not positions)",
                "use `.iloc[...]` to select by position, or `.reset_index(drop=True)` first",
            )
        )
    elif kind == "KeyError" and re.fullmatch(r"-?\d+", message.strip("'")) and "[" in expression:
        found.append(
            (
                f"indexing with {message} looked up a label, not a position",
                "use `.iloc[...]` for positions, or check the index with `df.index`",
            )
        )
    elif kind == "KeyError":
        column = message.strip("'\"")
        found.append(
            (
                f"the column or key {column!r} does not exist in the data",
                f"check `df.columns` (names are case- and space-sensitive); guard with "
                f"`if {column!r} in df.columns`",
            )
        )
    if kind == "IndexError" and "out-of-bounds" in message:
        found.append(
            (
                "a positional index (`.iloc`) is past the end of the data (empty or short frame?)",
                "check `len(df)` before indexing, or handle the empty case",
            )
        )
    if kind == "ValueError" and "truth value of a" in message and "ambiguous" in message:
        found.append(
            (
                "a Series/array was used where one True/False is needed (`if`, `and`, `or`)",
                "combine conditions with `&` / `|` and parentheses, or use `.any()` / `.all()`",
            )
        )
    if kind == "AttributeError" and re.search(
        r"'DataFrame' object has no attribute 'append'", message
    ):
        found.append(("`DataFrame.append` was removed in pandas 2", "use `pd.concat([df, other])`"))
    if kind == "AttributeError" and re.search(r"has no attribute '(iteritems|ix)'", message):
        found.append(
            ("`.iteritems` / `.ix` were removed from pandas", "use `.items()` / `.loc` or `.iloc`")
        )
    if kind == "AttributeError" and "'NoneType' object has no attribute" in message:
        found.append(
            (
                "a value is None where an object was expected (an in-place pandas method "
                "returns None)",
                "do not assign the result of `inplace=True` calls; drop `inplace=True` instead",
            )
        )
    if kind == "TypeError" and (
        "unsupported operand" in message or "can only concatenate" in message
    ):
        found.append(
            (
                "values of different types were combined (often numbers stored as text)",
                "convert first: `pd.to_numeric(df[col], errors='coerce')` or `astype(float)`",
            )
        )
    if kind == "TypeError" and "positional argument" in message:
        found.append(
            (
                "the function's parameters do not match how it is called (it gets the DataFrame "
                "as its only argument)",
                "define it as `def name(df: pd.DataFrame) -> ...` with other parameters optional",
            )
        )
    if kind == "ZeroDivisionError":
        found.append(("a division by zero (an empty group or a zero count?)", "guard the divisor"))
    if kind == "NameError":
        name = re.search(r"name '(\w+)' is not defined", message)
        missing = name.group(1) if name else "a name"
        hint = {"pd": "import pandas as pd", "np": "import numpy as np"}.get(missing)
        found.append(
            (
                f"{missing!r} is used but never defined or imported",
                f"add `{hint}` at the top" if hint else f"define or import {missing!r}",
            )
        )
    if kind in ("ModuleNotFoundError", "ImportError"):
        found.append(
            (
                "the module is not available: the sandbox offers the standard library and its "
                "allowed packages (pandas, numpy by default)",
                "use pandas / numpy / the standard library instead",
            )
        )
    if kind == "MemoryError":
        found.append(
            (
                "the code needed more memory than the sandbox allows",
                "avoid materialising huge intermediates (cross joins, repeated copies)",
            )
        )
    if kind in ("CpuTimeExceeded", "TimeoutError"):
        found.append(
            (
                "the code ran out of time (an endless loop, or row-by-row work on big data)",
                "check loop conditions; use vectorised pandas operations instead of loops",
            )
        )
    if kind == "PermissionError" and "processes" in message:
        found.append(("the code tried to start a process", "compute in-process; no subprocesses"))
    if kind == "RecursionError":
        found.append(
            ("the recursion never reaches its base case", "use a loop or fix the base case")
        )
    if kind == "OutputLimitExceeded":
        found.append(("the code printed too much", "return results instead of printing them"))
    return found


def analyze_with_rules(code: str, error: str, error_type: str | None = None) -> AnalyzeErrorOutput:
    """The deterministic analysis of `error` (a message or traceback) raised by `code`."""
    parsed = parse_error(error, code, error_type)
    kind = parsed.error_type or "an error"
    where = f" at line {parsed.line}" if parsed.line else ""
    failing = f" in `{parsed.expression}`" if parsed.expression else ""
    message = f": {parsed.message}" if parsed.message else ""
    sentences = [f"{kind}{where}{failing}{message}."]
    pitfalls = _pitfalls(parsed)
    sentences += [f"Likely cause: {finding}." for finding, _ in pitfalls]
    suggestions = [suggestion for _, suggestion in pitfalls]
    if not suggestions:
        suggestions.append(
            f"read line {parsed.line} and check the values it uses"
            if parsed.line
            else "reproduce with a small input and check each step's values"
        )
    return AnalyzeErrorOutput(
        analysis=" ".join(sentences),
        suggestions=suggestions,
        error_type=parsed.error_type,
        line=parsed.line,
        expression=parsed.expression,
        method="rules",
    )


class _ModelAnalysis(BaseModel):
    """The model's analysis of an error."""

    analysis: str = Field(description="What went wrong and why, in 1-3 sentences.")
    suggestions: list[str] = Field(description="Concrete fixes, most likely first.")


async def analyze_error(
    code: str,
    error: str,
    error_type: str | None = None,
    *,
    model: BaseChatModel | None = None,
) -> AnalyzeErrorOutput:
    """Analyse `error` raised by `code`: with `model` when given (falling back to the rules if
    it fails or answers nothing usable), else with the deterministic rules."""
    rules = analyze_with_rules(code, error, error_type)
    if model is None:
        return rules
    try:
        structured = model.with_structured_output(_ModelAnalysis, method="function_calling")
        answer = await structured.ainvoke(
            [
                SystemMessage(ANALYZE_SYSTEM),
                HumanMessage(analyze_request(code, error, rules.analysis)),
            ]
        )
        answer = _ModelAnalysis.model_validate(answer)
    except Exception as exc:  # a model failure degrades to the rules, it never fails the loop
        logger.warning("analyze_error: the model failed (%s); using the traceback rules", exc)
        return rules
    if not answer.analysis.strip():
        return rules
    return rules.model_copy(
        update={
            "analysis": answer.analysis.strip(),
            "suggestions": [s for s in answer.suggestions if s.strip()][:10] or rules.suggestions,
            "method": "model",
        }
    )
