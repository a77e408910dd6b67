"""The smell catalogue of ``/work/shared/SMELLS.md``: ids, names, default severities.

The ids are the public contract (API ``smell`` field, ``# noqa: <id>``, the ignore list, the
LLM's structured output), so they are spelled exactly as in SMELLS.md. Two *meta* ids describe
files that could not be analysed at all; they are not smells and an LLM may not report them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    """Finding severity, ordered ``low < medium < high < critical`` (not alphabetically)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        """0 for low up to 3 for critical; the sort key for prioritising findings."""
        return _SEVERITY_RANK[self]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Severity):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Severity):
            return NotImplemented
        return self.rank <= other.rank

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Severity):
            return NotImplemented
        return self.rank > other.rank

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Severity):
            return NotImplemented
        return self.rank >= other.rank


_SEVERITY_RANK = {Severity.LOW: 0, Severity.MEDIUM: 1, Severity.HIGH: 2, Severity.CRITICAL: 3}


@dataclass(frozen=True, slots=True)
class Smell:
    """One catalogue entry."""

    id: str
    name: str
    severity: Severity
    fires_when: str
    #: Findings of scope smells describe a whole test or class and sit on its ``def``/``class``
    #: line; a noqa comment must be on that line (not anywhere inside the body).
    scope: bool = False


_L, _M, _H = Severity.LOW, Severity.MEDIUM, Severity.HIGH

SMELLS: dict[str, Smell] = {
    s.id: s
    for s in (
        Smell(
            "assertion-roulette",
            "Assertion Roulette",
            _L,
            "a test has 2+ assertions and at least one of them carries no message",
            True,
        ),
        Smell(
            "conditional-logic",
            "Conditional Test Logic",
            _M,
            "an if, for, while or comprehension in a test body contains an assertion",
        ),
        Smell(
            "constructor-init",
            "Constructor Initialization",
            _M,
            "a test class defines __init__",
            True,
        ),
        Smell(
            "default-test",
            "Default Test",
            _L,
            "a test class keeps a template name such as MyTestCase",
            True,
        ),
        Smell(
            "duplicate-assert",
            "Duplicate Assert",
            _M,
            "the same assertion appears twice in one test",
        ),
        Smell(
            "empty-test", "Empty Test", _H, "the body is only pass, ... and/or a docstring", True
        ),
        Smell(
            "exception-handling",
            "Exception Handling",
            _M,
            "a test contains try/except or raise instead of pytest.raises/assertRaises",
        ),
        Smell(
            "general-fixture",
            "General Fixture",
            _L,
            "a setUp/class fixture sets attributes that some tests never use",
            True,
        ),
        Smell(
            "ignored-test",
            "Ignored Test",
            _L,
            "a skip marker/decorator without a reason, or an unconditional skip",
        ),
        Smell(
            "lack-of-cohesion",
            "Lack of Cohesion",
            _L,
            "test methods of one class are textually unrelated",
            True,
        ),
        Smell(
            "magic-number",
            "Magic Number",
            _L,
            "a numeric literal other than -1, 0-10, 100 is an argument of an assertion",
        ),
        Smell(
            "mystery-guest",
            "Mystery Guest",
            _M,
            "a test opens real files, sockets, databases or network URLs directly",
        ),
        Smell(
            "obscure-setup",
            "Obscure In-Line Setup",
            _L,
            "more than N distinct local variables are assigned in a test",
            True,
        ),
        Smell(
            "redundant-assertion", "Redundant Assertion", _H, "an assertion whose outcome is fixed"
        ),
        Smell("redundant-print", "Redundant Print", _L, "a test calls print"),
        Smell(
            "sensitive-equality",
            "Sensitive Equality",
            _L,
            "an assertion compares str(x) / repr(x) / x.__str__() output",
        ),
        Smell(
            "sleepy-test",
            "Sleepy Test",
            _M,
            "a test calls time.sleep (or asyncio.sleep > 0) without a comment on that line",
        ),
        Smell(
            "suboptimal-assert",
            "Suboptimal Assert",
            _L,
            "an assertion a more specific assert method expresses better",
        ),
        Smell(
            "test-maverick",
            "Test Maverick",
            _L,
            "setUp defines fields and a test uses none of them",
            True,
        ),
        Smell(
            "unknown-test",
            "Unknown Test (assertion-free)",
            _H,
            "a test contains no assertion at all",
            True,
        ),
        Smell(
            "verbose-test",
            "Verbose Test",
            _L,
            "a test body is longer than the configured number of statements",
            True,
        ),
    )
}

#: A file that does not parse (reported once, at the error's line).
SYNTAX_ERROR = "syntax-error"
#: Bytes content that is neither UTF-8 nor in the encoding its PEP 263 cookie declares.
ENCODING_ERROR = "encoding-error"

META_SMELLS: dict[str, Smell] = {
    SYNTAX_ERROR: Smell(
        SYNTAX_ERROR,
        "Syntax Error",
        Severity.CRITICAL,
        "the file does not parse, so none of its tests can run or be analysed",
    ),
    ENCODING_ERROR: Smell(
        ENCODING_ERROR,
        "Encoding Error",
        Severity.CRITICAL,
        "the file is not valid UTF-8 (and declares no other encoding)",
    ),
}

ALL_SMELLS: dict[str, Smell] = {**SMELLS, **META_SMELLS}


def smell(smell_id: str) -> Smell:
    """The catalogue entry for ``smell_id`` (smells and meta ids); KeyError names the valid ids."""
    try:
        return ALL_SMELLS[smell_id]
    except KeyError:
        raise KeyError(
            f"unknown smell id {smell_id!r}; valid ids: {', '.join(sorted(ALL_SMELLS))}"
        ) from None
