"""Input processing: path normalisation, request limits, per-file decoding.

Every error here is an :class:`AnalysisInputError` carrying the HTTP status the API should
answer with, and a message that names the fix. Unsafe paths are *rejected*, never rewritten:
a client sending ``../../etc/passwd`` gets a 400 that says so, not an analysis of
``etc/passwd``.
"""

from __future__ import annotations

import codecs
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass
from io import BytesIO

#: Defaults of the issue; the API passes the values from settings.
DEFAULT_MAX_FILES = 1000
DEFAULT_MAX_TOTAL_BYTES = 10 * 1024 * 1024
MAX_PATH_LENGTH = 1024


class AnalysisInputError(ValueError):
    """Base of the input errors; ``status_code`` is the HTTP status the API should use."""

    status_code = 400

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path


class UnsafePathError(AnalysisInputError):
    """A file path that is absolute, escapes its root (``..``, ``~``) or is malformed."""

    status_code = 400


class DuplicatePathError(AnalysisInputError):
    """Two files of one request name the same (normalised) path."""

    status_code = 400


class LimitExceededError(AnalysisInputError):
    """Too many files or too many bytes in one request."""

    status_code = 413


_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def normalize_path(raw: str) -> str:
    """Return ``raw`` as a clean relative POSIX path, or raise :class:`UnsafePathError`.

    Accepted rewrites are cosmetic only: ``\\`` becomes ``/`` (Windows clients), and empty and
    ``.`` segments are dropped (``./tests//test_a.py`` -> ``tests/test_a.py``). Anything that
    could point outside the analysed tree is rejected: absolute paths (``/x``, ``C:\\x``,
    ``\\\\server\\share``), ``..`` segments (with either separator), a leading ``~`` segment,
    NUL and other control characters. Backslashes count as separators *before* the check, so
    ``..\\..\\etc\\passwd`` is traversal, not a file name containing backslashes.
    """
    if not isinstance(raw, str):
        raise UnsafePathError(f"file path must be a string, got {type(raw).__name__}")
    shown = raw if len(raw) <= 80 else raw[:77] + "..."
    if not raw or not raw.strip():
        raise UnsafePathError("file path is empty; send a relative path such as tests/test_x.py")
    if len(raw) > MAX_PATH_LENGTH:
        raise UnsafePathError(
            f"file path is {len(raw)} characters long; the limit is {MAX_PATH_LENGTH}",
            path=shown,
        )
    if "\x00" in raw:
        raise UnsafePathError(f"file path {shown!r} contains a NUL byte; remove it", path=shown)
    if _CONTROL.search(raw):
        raise UnsafePathError(
            f"file path {shown!r} contains a control character (newline, tab, ...); remove it",
            path=shown,
        )
    unified = raw.replace("\\", "/")
    if unified.startswith("/") or _DRIVE.match(unified):
        raise UnsafePathError(
            f"file path {shown!r} is absolute; send it relative to the project root "
            "(for example tests/test_x.py)",
            path=shown,
        )
    segments = unified.split("/")
    if segments[0].startswith("~"):
        raise UnsafePathError(
            f"file path {shown!r} starts with '~' (a home directory); send it relative to the "
            "project root",
            path=shown,
        )
    if any(seg == ".." for seg in segments):
        raise UnsafePathError(
            f"file path {shown!r} contains a '..' segment (path traversal); send the path "
            "relative to the project root without '..'",
            path=shown,
        )
    if unified.endswith("/"):
        raise UnsafePathError(
            f"file path {shown!r} names a directory; send one entry per file", path=shown
        )
    kept = [seg for seg in segments if seg not in ("", ".")]
    if not kept:
        raise UnsafePathError(f"file path {shown!r} names no file", path=shown)
    return "/".join(kept)


def content_size(content: str | bytes) -> int:
    """Size of ``content`` in bytes as sent (UTF-8 for text; lone surrogates count 3 bytes)."""
    if isinstance(content, bytes):
        return len(content)
    if content.isascii():
        return len(content)
    return len(content.encode("utf-8", "surrogatepass"))


def check_limits(
    sizes: Iterable[tuple[str, int]],
    *,
    max_files: int = DEFAULT_MAX_FILES,
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
) -> None:
    """Raise :class:`LimitExceededError` when ``(path, size)`` pairs exceed either limit.

    Also rejects two files with the same path (:class:`DuplicatePathError`): the results are
    keyed by path, so one of them would silently disappear.
    """
    count = 0
    total = 0
    seen: set[str] = set()
    for path, size in sizes:
        count += 1
        total += size
        if path in seen:
            raise DuplicatePathError(
                f"file path {path!r} appears twice in the request (after normalisation); "
                "send each file once",
                path=path,
            )
        seen.add(path)
    if count > max_files:
        raise LimitExceededError(
            f"request has {count} files; the limit is {max_files}. Split it into smaller analyses"
        )
    if total > max_total_bytes:
        raise LimitExceededError(
            f"request has {total} bytes of source; the limit is {max_total_bytes} bytes. "
            "Split it into smaller analyses"
        )


@dataclass(frozen=True, slots=True)
class DecodeProblem:
    """Why a file's content is not usable text: a message and the 1-based line of the problem."""

    message: str
    line: int


def decode_content(content: str | bytes) -> str | DecodeProblem:
    """Text of ``content``: bytes decode as UTF-8 (BOM allowed) or per a PEP 263 cookie.

    Text (``str``) passes through unless it holds lone surrogates (which JSON can carry as
    ``\\udc80`` but which no Python file can contain). Never raises.
    """
    if isinstance(content, str):
        if content.isascii():
            return content
        try:
            content.encode("utf-8")
        except UnicodeEncodeError as exc:
            line = content.count("\n", 0, exc.start) + 1
            return DecodeProblem(
                f"content is not valid UTF-8 text (lone surrogate at line {line}); send the "
                "file as UTF-8",
                line,
            )
        return content
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        utf8_error = exc
    # Not UTF-8: a valid Python file may still declare its encoding in a coding cookie.
    try:
        encoding, _ = tokenize.detect_encoding(BytesIO(content).readline)
        if codecs.lookup(encoding).name != "utf-8":
            return content.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        pass
    line = content.count(b"\n", 0, utf8_error.start) + 1
    return DecodeProblem(
        f"content is not UTF-8 (byte 0x{content[utf8_error.start]:02x} at line {line}) and "
        "declares no other encoding; re-save the file as UTF-8 or add a '# -*- coding: ... -*-' "
        "line",
        line,
    )
