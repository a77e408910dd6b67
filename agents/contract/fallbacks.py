"""The model, else the offline strategy: one LangChain ``with_fallbacks`` chain per stage.

Every step an LLM can do has a deterministic twin (see ARCHITECTURE §3). A stage runs the
model's step when a model is configured and falls back to its twin when there is none or when
the model's step fails; a failure is reported as one ``errors`` line naming the stage, the
error and the fallback used, so the turn still answers and says how.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from langchain_core.runnables import RunnableLambda

log = logging.getLogger(__name__)

T = TypeVar("T")


class NoModel(Exception):
    """No chat model is configured: the offline strategy runs, and that is not an error."""


class ModelDeclined(Exception):
    """The model answered, but not usably (e.g. it repeated an earlier query)."""


@dataclass
class Outcome(Generic[T]):
    """What a stage produced, whether the model produced it, and the errors on the way."""

    value: T
    by_model: bool
    errors: list[str] = field(default_factory=list)
    note: str = ""


def failure(stage: str, exc: BaseException, fallback: str) -> str:
    """The ``errors`` line of a model call that failed and was replaced by a fallback."""
    return f"{stage}: the language model failed ({type(exc).__name__}: {exc}); used {fallback}"


async def model_or_offline(
    model_step: Callable[[], Awaitable[T]] | None,
    offline_step: Callable[[], T | Awaitable[T]],
    *,
    stage: str,
    fallback: str,
) -> Outcome[T]:
    """Run ``model_step`` (None: no model), falling back to ``offline_step``."""
    errors: list[str] = []
    notes: list[str] = []

    async def primary(_: dict[str, Any]) -> tuple[T, bool]:
        if model_step is None:
            raise NoModel
        return await model_step(), True

    async def secondary(inputs: dict[str, Any]) -> tuple[T, bool]:
        exc = inputs.get("error")
        if isinstance(exc, ModelDeclined):
            notes.append(str(exc))
        elif exc is not None and not isinstance(exc, NoModel):
            log.warning("%s: the model step failed (%s); using %s", stage, exc, fallback)
            errors.append(failure(stage, exc, fallback))
        value = offline_step()
        if inspect.isawaitable(value):
            value = await value
        return value, False

    chain = RunnableLambda(primary).with_fallbacks(
        [RunnableLambda(secondary)], exception_key="error"
    )
    value, by_model = await chain.ainvoke({}, {"run_name": stage})
    return Outcome(value, by_model, errors, "; ".join(notes))
