"""Properties of the coding agent (from the seed), checked with hypothesis.

- The output always has the six fields with their types, and iteration_count <= max_iterations.
- Any exception the code raises appears in runtime_error.
- Serialisation is JSON-safe for any DataFrame / array / dict / list of floats, NaN and inf
  included (in-process, and through the sandbox).
"""

from __future__ import annotations

import asyncio
import json
import math
import string
from typing import Any

import httpx
import numpy as np
import pandas as pd
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis.extra import pandas as hpd
from langchain_openai import ChatOpenAI

from agents.coding import run_coding
from agents.coding.tools import runtime_error_text
from config import Settings
from tests.coding.scripted_coder import ScriptedCoder, fenced
from tests.support.stub_openai import StubOpenAI
from tools.coding import CodingMetrics, CodingResult, CodingToolkit, TestCodeInput
from tools.sandbox import Sandbox, describe
from tools.sandbox.layout import allowed_import_names

FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)
EXCEPTIONS = [
    "ValueError",
    "KeyError",
    "TypeError",
    "ZeroDivisionError",
    "RuntimeError",
    "LookupError",
    "AssertionError",
    "NotImplementedError",
    "CustomFailure",
]
MESSAGES = st.text(
    alphabet=string.ascii_letters + string.digits + " .,:-_", min_size=1, max_size=40
)


def _json_roundtrip(value: Any) -> Any:
    text = json.dumps(value, allow_nan=False)  # raises on NaN / inf / non-JSON types
    return json.loads(text)


# --- serialisation -------------------------------------------------------------------------------
nested_floats = st.recursive(
    FLOATS | st.none() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=5), children, max_size=6)
    ),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(nested_floats)
def test_describe_is_json_safe_for_nested_floats(value: Any) -> None:
    described = _json_roundtrip(describe(value))
    assert "type" in described


@settings(max_examples=100, deadline=None)
@given(
    hnp.arrays(
        dtype=st.sampled_from([np.float64, np.float32, np.int64, np.bool_]),
        shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=12),
        elements=None,
    )
)
def test_describe_is_json_safe_for_arrays(array: np.ndarray) -> None:
    described = _json_roundtrip(describe(array, head=3, max_items=10))
    assert described["type"] == "ndarray" and described["shape"] == list(array.shape)


@settings(max_examples=100, deadline=None)
@given(
    hpd.data_frames(
        columns=[
            hpd.column("x", elements=FLOATS),
            hpd.column("y", dtype=object, elements=FLOATS | st.none() | st.text(max_size=4)),
            hpd.column("z", dtype=np.int64),
        ],
        index=hpd.range_indexes(max_size=30),
    )
)
def test_describe_is_json_safe_for_frames(frame: pd.DataFrame) -> None:
    described = _json_roundtrip(describe(frame, head=5))
    assert described["shape"] == [len(frame), 3]
    assert len(described["head"]) == min(5, len(frame))
    for row, (_, source) in zip(described["head"], frame.head(5).iterrows(), strict=True):
        value = source["x"]
        expected = None if math.isnan(value) else value
        if isinstance(value, float) and math.isinf(value):
            expected = "inf" if value > 0 else "-inf"
        assert row["x"] == expected


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.lists(FLOATS, max_size=8), max_size=6))
def test_describe_is_json_safe_for_series_of_floats(columns: dict[str, list[float]]) -> None:
    for values in columns.values():
        _json_roundtrip(describe(pd.Series(values, dtype=float)))
    _json_roundtrip(describe(columns))


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(columns=st.dictionaries(st.sampled_from("abcd"), st.lists(FLOATS, min_size=3, max_size=3),
                               min_size=1, max_size=4))  # fmt: skip
def test_sandbox_results_are_json_safe(sandbox: Sandbox, columns: dict[str, list[float]]) -> None:
    code = (
        "import numpy as np\n"
        "def f(df):\n"
        "    return {'frame': df, 'array': df.to_numpy(), 'sums': df.sum().to_dict()}\n"
    )
    outcome = sandbox.run(code, "f", pd.DataFrame(columns))
    assert outcome.success, outcome.error
    _json_roundtrip(outcome.model_dump(mode="json"))


# --- exceptions -------------------------------------------------------------------------------
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(kind=st.sampled_from(EXCEPTIONS), message=MESSAGES)
@example(kind="ValueError", message=" ")  # a blank message once lost the ": " after the kind
def test_any_raised_exception_appears_in_runtime_error(
    sandbox: Sandbox, kind: str, message: str
) -> None:
    code = (
        f"class CustomFailure(Exception):\n    pass\n\ndef f(df):\n    raise {kind}({message!r})\n"
    )
    toolkit = CodingToolkit(sandbox=sandbox)
    output = asyncio.run(
        toolkit.test(TestCodeInput(code=code, function_name="f", test_data=[{"a": 1}]))
    )
    error = runtime_error_text(output)
    assert error is not None and error.startswith(f"{kind}: ")
    assert message in error


# --- the loop -----------------------------------------------------------------------------------
def _module(body: str) -> str:
    return (
        "import pandas as pd\n\n\n"
        "def total(df: pd.DataFrame) -> float:\n"
        '    """Sum of a."""\n'
        "    if df.empty:\n"
        "        raise ValueError('empty')\n"
        f"    {body}\n"
    )


GENERATIONS = {
    "good": fenced(_module("return float(df['a'].sum())")),
    "raises": fenced(_module("return float(df.loc[99, 'a'])")),
    "zero": fenced(_module("return 1 / 0")),
    "invalid": fenced(_module("return float(undefined_name)")),
    "garbage": "I would rather not write code today.",
}


async def _run_loop(
    stub: StubOpenAI, sandbox: Sandbox, script: list[str], bound: int
) -> CodingResult:
    coder = ScriptedCoder(generations=[GENERATIONS[name] for name in script])
    stub.responder = coder
    async with httpx.AsyncClient() as http:
        model = ChatOpenAI(
            base_url=stub.base_url, api_key="sk-t", model="stub", max_retries=0,
            http_async_client=http,
        )  # fmt: skip
        toolkit = CodingToolkit(
            sandbox=sandbox, model=model, allowed_modules=allowed_import_names(("pandas",)),
            metrics=CodingMetrics(),
        )  # fmt: skip
        result = await run_coding(
            {"function_name": "total", "description": "sum of a"},
            {"a": [1.0, 2.0]},
            model=model,
            toolkit=toolkit,
            settings=Settings(_env_file=None, llm_provider="none"),
            max_iterations=bound,
        )
    assert coder.generation_calls <= bound
    return result


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    script=st.lists(st.sampled_from(sorted(GENERATIONS)), min_size=1, max_size=4),
    bound=st.integers(min_value=1, max_value=4),
)
def test_loop_output_shape_and_bound(
    stub_openai: StubOpenAI, sandbox: Sandbox, script: list[str], bound: int
) -> None:
    result = asyncio.run(_run_loop(stub_openai, sandbox, script, bound))
    fields = result.model_dump()
    assert set(fields) == {
        "generated_code", "iteration_count", "is_code_valid", "code_issues", "runtime_error",
        "execution_result",
    }  # fmt: skip
    assert isinstance(result.generated_code, str) and isinstance(result.iteration_count, int)
    assert isinstance(result.is_code_valid, bool) and isinstance(result.code_issues, list)
    assert result.runtime_error is None or isinstance(result.runtime_error, str)
    assert result.execution_result is None or isinstance(result.execution_result, dict)
    assert 0 <= result.iteration_count <= bound
    json.dumps(fields, allow_nan=False)
    used = [script[min(i, len(script) - 1)] for i in range(result.iteration_count)]
    if "good" in used:
        assert result.is_code_valid and result.runtime_error is None
        assert result.execution_result == {"type": "float", "value": 3.0}
    if "df.loc[99" in result.generated_code:
        assert result.runtime_error is not None and "KeyError: 99" in result.runtime_error
    if not result.is_code_valid and "1 / 0" in result.generated_code:
        assert result.runtime_error is not None
        assert result.runtime_error.startswith("ZeroDivisionError")
