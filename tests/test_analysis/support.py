"""Helpers for the analysis tests: run the rule engine on a snippet."""

from __future__ import annotations

import textwrap

from tools.test_analysis.parsing import parse_file
from tools.test_analysis.rules import check_file
from tools.test_analysis.schemas import AnalysisConfig, Finding

STRICT = AnalysisConfig(profile="strict")
DEFAULT = AnalysisConfig()


def run_rules(
    source: str, *, path: str = "tests/test_sample.py", config: AnalysisConfig | None = None
) -> list[Finding]:
    """Findings of ``source`` (dedented; line 1 is its first non-empty line), rule bugs
    re-raised, sorted by line. Without ``config``: the strict profile (the catalogue's
    literal definitions, which most rule tests pin down)."""
    parsed = parse_file(path, textwrap.dedent(source).lstrip("\n"), cache=None)
    found = check_file(parsed, config or STRICT, strict=True)
    return sorted(found, key=lambda f: (f.line, f.smell))


def lines_of(source: str, smell: str, **kwargs: object) -> list[int]:
    """Lines where ``smell`` fires in ``source``."""
    return [f.line for f in run_rules(source, **kwargs) if f.smell == smell]  # type: ignore[arg-type]
