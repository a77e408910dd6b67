"""Code the user pasted in chat: check it, run it in the sandbox, analyse its error — no model.

`review_pasted(message, toolkit)` is what chat answers when no chat model is configured (and
what the model-less coding graph runs): it says that generation needs a model, then checks the
pasted function, runs it on pasted (or given) test data, and explains a failure or a pasted
traceback with the deterministic rules.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from agents.coding.prompts import NO_MODEL_PREFIX, NOTHING_PASTED
from agents.coding.render import render_analysis, render_review
from agents.coding.tools import runtime_error_text
from tools.coding.extract import extract_pasted
from tools.coding.schemas import (
    AnalyzeErrorInput,
    AnalyzeErrorOutput,
    CheckCodeInput,
    CheckCodeOutput,
    CodingResult,
    TestCodeInput,
    TestCodeOutput,
    TestData,
)
from tools.coding.toolkit import CodingToolkit
from tools.sandbox import SandboxUnavailable

NEEDS_DATA = (
    "Not run: the function takes arguments; paste test data as a ```json block (records or "
    "columns) to run it in the sandbox."
)


@dataclass
class PastedReview:
    """The answer to a message with pasted code or a traceback, and what it found."""

    answer: str
    result: CodingResult
    check: CheckCodeOutput | None = None
    run: TestCodeOutput | None = None
    analysis: AnalyzeErrorOutput | None = None


def _needs_arguments(code: str, function_name: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return True
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function_name:
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            required = len(positional) - len(args.defaults)
            required_kw = sum(d is None for d in args.kw_defaults)
            return required > 0 or required_kw > 0
    return True


def _empty(note: str) -> CodingResult:
    return CodingResult(
        generated_code="",
        iteration_count=0,
        is_code_valid=False,
        code_issues=[note],
        runtime_error=None,
        execution_result=None,
    )


async def review_pasted(
    message: str,
    toolkit: CodingToolkit,
    *,
    test_data: TestData | None = None,
    function_name: str | None = None,
) -> PastedReview:
    """Check, run and explain what `message` pasted (see the module docstring).

    `test_data` (e.g. from the request) wins over data pasted in the message. The answer
    starts by saying that generation needs a model when the toolkit has none.
    """
    prefix = f"{NO_MODEL_PREFIX}\n\n" if toolkit.model is None else ""
    pasted = extract_pasted(message, function_name)
    if pasted.code is None or pasted.function_name is None:
        if pasted.traceback:
            found = await toolkit.analyze(AnalyzeErrorInput(error=pasted.traceback[-20_000:]))
            answer = prefix + "About the error you pasted: " + render_analysis(found)
            return PastedReview(answer=answer, result=_empty("no code was given"), analysis=found)
        return PastedReview(answer=prefix + NOTHING_PASTED, result=_empty("no code was given"))
    code, name = pasted.code, pasted.function_name
    try:
        check = await toolkit.check(CheckCodeInput(code=code, function_name=name))
    except ValueError as exc:
        return PastedReview(answer=prefix + str(exc), result=_empty(str(exc)))
    data = test_data if test_data is not None else pasted.test_data
    run: TestCodeOutput | None = None
    skipped = None
    if data is not None or not _needs_arguments(code, name):
        try:
            run = await toolkit.test(TestCodeInput(code=code, function_name=name, test_data=data))
        except (ValueError, SandboxUnavailable) as exc:
            run = TestCodeOutput(success=False, error=str(exc), error_type=type(exc).__name__)
    else:
        skipped = NEEDS_DATA
    analysis: AnalyzeErrorOutput | None = None
    error = runtime_error_text(run) if run is not None else None
    if error and run is not None and run.error_type != "SandboxUnavailable":
        analysis = await toolkit.analyze(
            AnalyzeErrorInput(code=code, error=error[-20_000:], error_type=run.error_type)
        )
    elif pasted.traceback:
        analysis = await toolkit.analyze(
            AnalyzeErrorInput(code=code, error=pasted.traceback[-20_000:])
        )
    result = CodingResult(
        generated_code=code,
        iteration_count=0,
        is_code_valid=check.is_valid and (run.success if run is not None else data is None),
        code_issues=[issue.render() for issue in check.issues],
        runtime_error=error,
        execution_result=run.result if run is not None else None,
    )
    answer = prefix + render_review(name, check, run, analysis, skipped)
    return PastedReview(answer=answer, result=result, check=check, run=run, analysis=analysis)
