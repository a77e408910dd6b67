"""Prompts of the coding tools that call a model (generate_code, analyze_error)."""

from __future__ import annotations

from tools.coding.schemas import ExecutionSpec

GENERATE_SYSTEM = """\
You write one Python function for data work, as a complete module.

Rules:
- Answer with ONE ```python code block holding the whole module, then nothing else.
- Put every import at the top of the module. Use only the standard library, pandas and numpy.
- Define the function with exactly the requested name, type hints on every parameter and the
  return value, and a short docstring.
- When the function works on a DataFrame, it receives it as its first parameter.
- Validate the input (missing columns, empty data) and raise ValueError with a clear message;
  handle expected errors with try/except.
- Return a value (never only print). Prefer vectorised pandas/numpy operations over loops.
- Select rows by position with .iloc, by label with .loc; never assume the index is 0..n-1.
- No file, network or process access: the code runs in a sandbox without them.
"""

ANALYZE_SYSTEM = """\
You diagnose why a Python function failed. Be concrete: name the failing expression, the cause,
and the fix. A rule-based analysis of the traceback is given as a starting point; correct it if
it is wrong.
"""


def spec_text(spec: ExecutionSpec) -> str:
    """The execution spec as prompt text."""
    lines = [f"Function name: {spec.function_name}", f"What it does: {spec.description}"]
    if spec.parameters:
        lines.append("Parameters (in order):")
        lines += [f"- {name}: {meaning}" for name, meaning in spec.parameters.items()]
    if spec.returns:
        lines.append(f"Returns: {spec.returns}")
    return "\n".join(lines)


def generate_request(
    spec: ExecutionSpec,
    previous_code: str | None,
    issues_to_fix: list[str],
    data_summary: str | None = None,
) -> str:
    """The user message of a generation: spec, data shape, previous code and its problems."""
    parts = [spec_text(spec)]
    if data_summary:
        parts.append(f"Test data: {data_summary}")
    if previous_code:
        parts.append(f"Previous version:\n```python\n{previous_code.rstrip()}\n```")
    if issues_to_fix:
        parts.append("Fix these problems:\n" + "\n".join(f"- {i}" for i in issues_to_fix))
    parts.append("Write the complete module.")
    return "\n\n".join(parts)


def analyze_request(code: str, error: str, rule_analysis: str) -> str:
    """The user message of an error analysis."""
    return (
        f"Code:\n```python\n{code.rstrip()}\n```\n\nError:\n```\n{error.strip()[-6000:]}\n```\n\n"
        f"Rule-based analysis: {rule_analysis}"
    )
