"""JSON for what LangGraph produces: states, messages, interrupts, stream chunks.

The Agent Server API answers with the graph's own values (LangChain messages, ``Interrupt``
objects, pydantic models, tuples). :func:`dumps` turns any of them into JSON text the way
langgraph-api does (a message is its ``model_dump()``, an ``Interrupt`` is ``{"value", "id"}``,
an exception is ``{"error", "message"}``), and never fails: what it cannot represent it writes
as its ``str()``.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import orjson
from langgraph.types import Interrupt, Send

__all__ = ["dumpb", "dumps", "interrupt_view", "jsonable", "loads"]

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def interrupt_view(interrupt: Any) -> dict[str, Any]:
    """An interrupt as the Agent Server shows it: ``{"id", "value"}`` (plus ``response_schema``
    when the graph gave one)."""
    if isinstance(interrupt, Mapping):
        view = {"id": interrupt.get("id"), "value": interrupt.get("value")}
        schema = interrupt.get("response_schema")
    else:
        view = {"id": getattr(interrupt, "id", None), "value": getattr(interrupt, "value", None)}
        schema = getattr(interrupt, "response_schema", None)
    if schema is not None:
        view["response_schema"] = schema
    return view


def _default(obj: Any) -> Any:
    if isinstance(obj, Interrupt):
        return interrupt_view(obj)
    if isinstance(obj, Send):
        return {"node": obj.node, "args": obj.arg}
    if isinstance(obj, BaseException):
        return {"error": type(obj).__name__, "message": str(obj)}
    if hasattr(obj, "model_dump") and callable(obj.model_dump) and not isinstance(obj, type):
        try:
            return obj.model_dump()
        except Exception:
            return str(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if hasattr(obj, "_asdict") and callable(obj._asdict):
        return obj._asdict()
    if isinstance(obj, set | frozenset):
        return list(obj)
    if isinstance(obj, timedelta):
        return obj.total_seconds()
    if isinstance(obj, bytes | bytearray):
        return base64.b64encode(obj).decode()
    return str(obj)


def _clean(obj: Any) -> Any:
    """Strings with lone surrogates become '?' (orjson refuses them, and they are not text)."""
    if isinstance(obj, str):
        return obj.encode("utf-8", "replace").decode("utf-8")
    if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        return None
    if isinstance(obj, Mapping):
        return {_clean(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    return obj


def dumpb(obj: Any) -> bytes:
    """JSON bytes of ``obj`` (LangGraph's and LangChain's types included)."""
    try:
        return orjson.dumps(obj, default=_default, option=_OPTIONS)
    except TypeError:
        # a lone surrogate or an integer beyond 64 bits (orjson refuses both): through the
        # standard library, which takes them, with surrogates replaced and NaN as null
        plain = _clean(json.loads(json.dumps(obj, default=_default)))
        return json.dumps(plain, ensure_ascii=False, separators=(",", ":")).encode()


def dumps(obj: Any) -> str:
    """JSON text of ``obj``."""
    return dumpb(obj).decode()


def jsonable(obj: Any) -> Any:
    """``obj`` as plain JSON values (dicts, lists, strings, numbers, booleans, None)."""
    return orjson.loads(dumpb(obj))


def loads(text: str | bytes) -> Any:
    """Parse JSON text."""
    return orjson.loads(text)
