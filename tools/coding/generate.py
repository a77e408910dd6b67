"""`generate_code`'s engine: ask the model for the module, take its code block, tidy imports."""

from __future__ import annotations

import logging

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from tools.coding.extract import extract_code, tidy_imports
from tools.coding.prompts import GENERATE_SYSTEM, generate_request
from tools.coding.schemas import ExecutionSpec, GenerateCodeOutput

logger = logging.getLogger(__name__)

NO_MODEL = (
    "Generating code needs a chat model, and none is configured (set LLM_PROVIDER with "
    "OPENAI_BASE_URL / OPENAI_API_KEY, or run Ollama). Checking and running code you give "
    "works without one."
)


def answer_text(content: object) -> str:
    """The text of a model answer's content (a string or a list of content blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "".join(parts)
    return str(content or "")


async def generate_code(
    model: BaseChatModel | None,
    spec: ExecutionSpec,
    previous_code: str | None = None,
    issues_to_fix: list[str] | None = None,
    *,
    data_summary: str | None = None,
) -> GenerateCodeOutput:
    """Ask `model` for a module defining `spec.function_name`.

    Never raises for a bad answer: a model failure or an answer without usable code is
    `success=False` with a message saying what came back. Without a model, generation is
    refused with a message saying that it needs one.
    """
    if model is None:
        return GenerateCodeOutput(code="", success=False, message=NO_MODEL)
    request = generate_request(spec, previous_code, list(issues_to_fix or []), data_summary)
    try:
        answer = await model.ainvoke([SystemMessage(GENERATE_SYSTEM), HumanMessage(request)])
    except Exception as exc:  # the loop records the failure and may try again
        logger.warning("generate_code: the model failed: %s", exc)
        return GenerateCodeOutput(
            code="", success=False, message=f"the model failed: {type(exc).__name__}: {exc}"
        )
    text = answer_text(answer.content)
    code = extract_code(text, spec.function_name)
    if code is None:
        shown = text.strip().replace("\n", " ")[:200] or "(empty)"
        return GenerateCodeOutput(
            code="",
            success=False,
            message=f"the model's answer held no Python code defining `{spec.function_name}` "
            f"(it began: {shown!r})",
        )
    return GenerateCodeOutput(
        code=tidy_imports(code),
        success=True,
        message=f"generated `{spec.function_name}` ({len(code.splitlines())} lines)",
    )
