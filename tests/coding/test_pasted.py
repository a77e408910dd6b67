"""Without a model: chat checks and runs pasted code, explains pasted tracebacks, and says that
generation needs a model — directly and through the model-less coding graph."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from agents.coding import build_coding_graph, review_pasted
from tools.coding import CodingMetrics, CodingToolkit
from tools.sandbox import Sandbox
from tools.sandbox.layout import allowed_import_names

FAILING = """```python
import pandas as pd

def first_big(df: pd.DataFrame) -> float:
    big = df[df["amount"] > 1.8]
    return float(big.loc[0, "amount"])
```"""
DATA = '```json\n{"amount": [1.5, 2.0, 3.5]}\n```'


def _toolkit(sandbox: Sandbox) -> CodingToolkit:
    return CodingToolkit(
        sandbox=sandbox, allowed_modules=allowed_import_names(("pandas",)), metrics=CodingMetrics()
    )


async def test_pasted_code_and_data_are_checked_run_and_explained(sandbox: Sandbox) -> None:
    review = await review_pasted(f"Why does this fail?\n{FAILING}\n{DATA}", _toolkit(sandbox))
    assert review.answer.startswith("Generating code needs a chat model")
    assert review.check is not None and review.check.is_valid
    assert review.run is not None and review.run.error_type == "KeyError"
    assert review.analysis is not None and review.analysis.line == 5
    assert ".iloc" in review.answer
    result = review.result
    assert not result.is_code_valid and result.iteration_count == 0
    assert result.runtime_error is not None and result.runtime_error.startswith("KeyError: 0")


async def test_working_pasted_code_runs(sandbox: Sandbox) -> None:
    fixed = FAILING.replace('big.loc[0, "amount"]', 'big["amount"].iloc[0]')
    review = await review_pasted(f"{fixed}\n{DATA}", _toolkit(sandbox))
    assert review.result.is_code_valid
    assert review.result.execution_result == {"type": "float", "value": 2.0}
    assert "ran in the sandbox" in review.answer


async def test_code_that_needs_data_is_not_run_without_it(sandbox: Sandbox) -> None:
    review = await review_pasted(FAILING, _toolkit(sandbox))
    assert review.run is None and "paste test data" in review.answer
    no_args = await review_pasted("```python\ndef answer():\n    return 42\n```", _toolkit(sandbox))
    assert no_args.run is not None and no_args.result.execution_result == {
        "type": "int", "value": 42
    }  # fmt: skip


async def test_pasted_traceback_alone_is_analysed(sandbox: Sandbox) -> None:
    message = (
        "I get this:\nTraceback (most recent call last):\n"
        '  File "/home/me/job.py", line 9, in <module>\n    if df["x"] > 0:\n'
        "ValueError: The truth value of a Series is ambiguous. Use a.empty, a.bool(), a.item()"
    )
    review = await review_pasted(message, _toolkit(sandbox))
    assert review.analysis is not None and review.analysis.line == 9
    assert "`&` / `|`" in review.answer and review.result.generated_code == ""


async def test_nothing_pasted_says_what_works(sandbox: Sandbox) -> None:
    review = await review_pasted("write a function that sums amounts", _toolkit(sandbox))
    assert "needs a chat model" in review.answer and "```python" in review.answer


async def test_model_less_graph_answers_with_the_six_fields(sandbox: Sandbox) -> None:
    graph = build_coding_graph(None, _toolkit(sandbox), default_max_iterations=3)
    state = await graph.ainvoke({"messages": [HumanMessage(f"Check this\n{FAILING}\n{DATA}")]})
    for key in ("generated_code", "iteration_count", "is_code_valid", "code_issues",
                "runtime_error", "execution_result"):  # fmt: skip
        assert key in state
    assert state["iteration_count"] == 0 and state["runtime_error"].startswith("KeyError")
    answer = state["messages"][-1]
    assert isinstance(answer, AIMessage) and "needs a chat model" in str(answer.content)
