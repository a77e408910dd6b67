"""Each coding tool alone: check_code, generate_code, test_code (real sandbox), analyze_error
(the operations over them, served as tools, are in test_operations.py)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from tests.support.scripted import ScriptedChatModel
from tools.coding import (
    CheckCodeInput,
    CodingMetrics,
    CodingToolkit,
    ExecutionSpec,
    TestCodeInput,
)
from tools.coding.diagnose import analyze_error, analyze_with_rules
from tools.coding.execute import CodeLimits, to_frame
from tools.coding.extract import extract_code, extract_pasted, tidy_imports
from tools.coding.generate import generate_code
from tools.coding.static_check import check_code
from tools.sandbox import Sandbox, SandboxLimits, SandboxUnavailable
from tools.sandbox.layout import allowed_import_names

ALLOWED = allowed_import_names(("pandas", "numpy"))
GOOD = '''
import pandas as pd


def total(df: pd.DataFrame) -> float:
    """Sum of the amounts."""
    if "amount" not in df.columns:
        raise ValueError("no amount column")
    return float(df["amount"].sum())
'''


def _codes(code: str, name: str = "total") -> dict[str, str]:
    result = check_code(code, name, allowed_modules=ALLOWED)
    return {issue.code: issue.severity for issue in result.issues}


# --- check_code --------------------------------------------------------------------------------
def test_check_accepts_good_code() -> None:
    result = check_code(GOOD, "total", allowed_modules=ALLOWED)
    assert result.is_valid and result.issues == []


@pytest.mark.parametrize(
    ("code", "finding", "severity"),
    [
        ("def total(df:\n", "syntax", "error"),
        ("def other(df):\n    return 1\n", "missing-function", "error"),
        ("def total(df: int) -> None:\n    print(df)\n", "no-return", "error"),
        ("async def total(df: int) -> int:\n    return df\n", "async-function", "error"),
        ("def total(df: int) -> int:\n    yield df\n", "generator", "error"),
        ("def total(df):\n    try:\n        return df\n    except KeyError:\n        raise\n",
         "type-hints", "warning"),
        ("def total(df: int) -> int:\n    return df\n", "no-error-handling", "warning"),
        ("import requests\n\ndef total(df: int) -> int:\n    return requests.get(df)\n",
         "unavailable-module", "error"),
        ("import subprocess\n\ndef total(df: int) -> int:\n    return subprocess.call(df)\n",
         "sandbox", "warning"),
        ("def total(df: int) -> int:\n    return pd.Series(df).sum()\n", "ruff:F821", "error"),
        ("import os\n\ndef total(df: int) -> int:\n    return df\n", "ruff:F401", "warning"),
    ],
)  # fmt: skip
def test_check_finds(code: str, finding: str, severity: str) -> None:
    found = _codes(code)
    assert found.get(finding) == severity, found
    assert check_code(code, "total", allowed_modules=ALLOWED).is_valid is (
        "error" not in found.values()
    )


def test_check_issue_rendering_names_the_line() -> None:
    result = check_code("def total(df: int) -> int:\n    return pd.x\n", "total")
    assert any(issue.render().startswith("line 2: error:") for issue in result.issues)


# --- extraction and generate_code ------------------------------------------------------------
def test_extract_prefers_the_python_block_defining_the_function() -> None:
    text = (
        "```\nnot code\n```\n```python\ndef helper():\n    return 1\n```\n"
        "```py\ndef f(x):\n    return x\n```"
    )
    assert extract_code(text, "f") == "def f(x):\n    return x\n"
    assert extract_code("no code here", "f") is None


def test_tidy_imports_hoists_and_adds_missing() -> None:
    code = 'def f(df):\n    return np.mean(df["a"]) + pd.NA\n\nimport math\nimport math\n'
    tidy = tidy_imports(code)
    head = tidy.split("\n\n\n")[0].splitlines()
    assert head == ["import numpy as np", "import pandas as pd", "import math"]
    assert tidy.count("import math") == 1 and "def f(df):" in tidy


async def test_generate_extracts_code_and_tidies_imports() -> None:
    answer = "Sure!\n```python\ndef total(df):\n    return pd.to_numeric(df.a).sum()\n```\nDone."
    model = ScriptedChatModel(script=[answer])
    spec = ExecutionSpec(function_name="total", description="sum of a")
    output = await generate_code(model, spec, "def total(df): pass", ["it returned None"])
    assert output.success and output.code.startswith("import pandas as pd\n")
    prompt = str(model.calls[0][-1].content)
    assert "def total(df): pass" in prompt and "it returned None" in prompt


async def test_generate_reports_malformed_output_and_failures() -> None:
    spec = ExecutionSpec(function_name="total", description="sum")
    prose = await generate_code(ScriptedChatModel(script=["I cannot."]), spec)
    assert not prose.success and "no Python code defining `total`" in prose.message
    wrong = await generate_code(
        ScriptedChatModel(script=["```python\ndef other(): ...\n```"]), spec
    )
    assert not wrong.success
    broken = await generate_code(ScriptedChatModel(script=[RuntimeError("boom")]), spec)
    assert not broken.success and "boom" in broken.message
    refused = await generate_code(None, spec)
    assert not refused.success and "needs a chat model" in refused.message


# --- test_code -----------------------------------------------------------------------------------
def test_test_data_records_and_columns_become_frames() -> None:
    limits = CodeLimits(max_rows=3, max_columns=2)
    records = to_frame([{"a": 1, "b": "x"}, {"a": 2}], limits)
    assert list(records.columns) == ["a", "b"] and len(records) == 2
    columns = to_frame({"a": [1.5, None], "b": ["x", "y"]}, limits)
    assert columns["a"].isna().tolist() == [False, True]
    with pytest.raises(ValueError, match="different lengths"):
        to_frame({"a": [1], "b": [1, 2]}, limits)
    with pytest.raises(ValueError, match="CODING_MAX_TEST_ROWS"):
        to_frame([{"a": i} for i in range(4)], limits)
    with pytest.raises(ValueError, match="CODING_MAX_TEST_COLUMNS"):
        to_frame({"a": [1], "b": [2], "c": [3]}, limits)


@pytest.fixture
def toolkit(sandbox: Sandbox) -> CodingToolkit:
    return CodingToolkit(sandbox=sandbox, allowed_modules=ALLOWED, metrics=CodingMetrics())


async def test_test_code_runs_in_the_sandbox(toolkit: CodingToolkit) -> None:
    data: Any = {"region": ["n", "s", "n"], "amount": [1.0, 2.5, float("nan")]}
    code = (
        "import pandas as pd\n\n"
        "def by_region(df: pd.DataFrame) -> pd.DataFrame:\n"
        "    print('rows', len(df))\n"
        "    return df.groupby('region', as_index=False)['amount'].sum()\n"
    )
    output = await toolkit.test(TestCodeInput(code=code, function_name="by_region", test_data=data))
    assert output.success and output.stdout == "rows 3\n" and output.duration_ms > 0
    assert output.result is not None
    assert output.result == {
        "type": "DataFrame",
        "shape": [2, 2],
        "columns": ["region", "amount"],
        "dtypes": {"region": output.result["dtypes"]["region"], "amount": "float64"},
        "head": [{"region": "n", "amount": 1.0}, {"region": "s", "amount": 2.5}],
        "truncated": False,
    }


async def test_test_code_reports_the_exception(toolkit: CodingToolkit) -> None:
    code = "def f(df):\n    return df['missing']\n"
    output = await toolkit.test(TestCodeInput(code=code, function_name="f", test_data=[{"a": 1}]))
    assert not output.success and output.error_type == "KeyError"
    assert output.traceback and 'File "user_code.py", line 2, in f' in output.traceback


async def test_test_code_without_data_calls_without_arguments(toolkit: CodingToolkit) -> None:
    output = await toolkit.test(
        TestCodeInput(code="def f():\n    return [1, 2]\n", function_name="f")
    )
    assert output.success and output.result == {
        "type": "list", "length": 2, "value": [1, 2], "truncated": False
    }  # fmt: skip


async def test_code_size_limit(toolkit: CodingToolkit) -> None:
    toolkit.limits = CodeLimits(max_code_chars=100)
    with pytest.raises(ValueError, match="CODING_MAX_CODE_CHARS"):
        await toolkit.check(CheckCodeInput(code="#" * 101 + "\ndef f(): ...", function_name="f"))


def test_missing_bwrap_refuses_with_the_fix() -> None:
    box = Sandbox(SandboxLimits(bwrap_path="/nonexistent/bwrap"))
    with pytest.raises(SandboxUnavailable, match="apt-get install -y bubblewrap"):
        box.run("def f():\n    return 1\n", "f")
    assert box.status()["available"] is False
    assert box.stats.snapshot()["by_status"] == {"refused": 1}


# --- analyze_error -------------------------------------------------------------------------------
LOC_TRACEBACK = """Traceback (most recent call last):
  File "user_code.py", line 4, in first
    return df.loc[0, "amount"]
           ~~~~~~^^^^^^^^^^^^^
  File "/opt/site/pandas/core/indexing.py", line 1334, in __getitem__
    raise KeyError(key) from err
KeyError: 0
"""


def test_rules_explain_loc_vs_iloc() -> None:
    code = 'import pandas as pd\n\ndef first(df):\n    return df.loc[0, "amount"]\n'
    output = analyze_with_rules(code, LOC_TRACEBACK)
    assert output.error_type == "KeyError" and output.line == 4 and output.method == "rules"
    assert output.expression == 'df.loc[0, "amount"]'
    assert ".iloc" in " ".join(output.suggestions)


@pytest.mark.parametrize(
    ("error", "error_type", "expected"),
    [
        ("KeyError: 'revenue'", None, "df.columns"),
        ("ValueError: The truth value of a Series is ambiguous. Use a.empty, a.bool()", None, "&"),
        ("AttributeError: 'DataFrame' object has no attribute 'append'", None, "pd.concat"),
        ("NameError: name 'pd' is not defined", None, "import pandas as pd"),
        ("TypeError: unsupported operand type(s) for +: 'int' and 'str'", None, "to_numeric"),
        ("No module named 'requests'", "ModuleNotFoundError", "pandas"),
        ("the CPU-time limit of the sandbox was reached", "CpuTimeExceeded", "vectorised"),
        ("IndexError: single positional indexer is out-of-bounds", None, "len(df)"),
    ],
)
def test_rules_know_common_pitfalls(error: str, error_type: str | None, expected: str) -> None:
    output = analyze_with_rules("", error, error_type)
    assert expected in " ".join(output.suggestions), output


async def test_analysis_with_a_model_and_its_fallback() -> None:
    answer = {"analysis": "Label 0 is gone after filtering.", "suggestions": ["use .iloc[0]"]}
    model = ScriptedChatModel(script=[answer])
    output = await analyze_error("", LOC_TRACEBACK, model=model)
    assert output.method == "model" and output.suggestions == ["use .iloc[0]"]
    assert output.line == 4  # the rules' parse stays
    failing = ScriptedChatModel(script=[RuntimeError("down")])
    fallback = await analyze_error("", LOC_TRACEBACK, model=failing)
    assert fallback.method == "rules" and ".iloc" in " ".join(fallback.suggestions)


def test_pasted_code_extraction() -> None:
    message = (
        "This fails, why? `summary` should work\n```python\ndef helper(x):\n    return x\n\n"
        "def summary(df):\n    return df.describe()\n```\n"
        '```json\n{"a": [1, 2]}\n```\n' + LOC_TRACEBACK
    )
    pasted = extract_pasted(message)
    assert pasted.function_name == "summary" and pasted.test_data == {"a": [1, 2]}
    assert pasted.traceback is not None and "KeyError: 0" in pasted.traceback
    assert pd.DataFrame(pasted.test_data).shape == (2, 1)
