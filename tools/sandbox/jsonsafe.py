"""JSON-safe, bounded descriptions of any Python value (the result of sandboxed code).

This module runs in two places: on the host (tests, in-process use) and INSIDE the sandbox,
where the runner copies it next to itself. So it imports only the standard library at module
level; numpy and pandas are looked up lazily (`sys.modules`) and only when the value is theirs.

`describe(value)` returns a dict with a `type` key and, by kind:
- DataFrame: `shape`, `columns`, `dtypes`, `head` (first rows as records), `truncated`;
- Series: `shape`, `name`, `dtype`, `head` (`[index, value]` pairs), `truncated`;
- ndarray: `shape`, `dtype`, `head` (first rows as nested lists), `truncated`;
- dict / list / tuple / set: `length`, `value` (first items), `truncated`;
- scalars (None, bool, int, float, str, numpy scalars, timestamps): `value`;
- anything else: `repr`.
Nested values are plain JSON: NaN and None become `null`, +/-infinity the strings `"inf"` /
`"-inf"`, unknown objects their (truncated) `repr`, so `json.dumps(..., allow_nan=False)` never
fails on the output.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import sys
from typing import Any

DEFAULT_HEAD = 5
DEFAULT_MAX_ITEMS = 50
DEFAULT_MAX_CHARS = 2000
MAX_DEPTH = 6


def _clip(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else text[: max_chars - 1] + "\u2026"


def _float(value: float) -> float | str | None:
    if math.isnan(value):
        return None
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _safe_repr(value: Any, max_chars: int) -> str:
    try:
        return _clip(repr(value), max_chars)
    except Exception as exc:  # a broken __repr__ must not break the result
        return f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"


def _numpy_scalar(value: Any) -> Any:
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.generic):
        try:
            return value.item()
        except Exception:
            return None
    return None


def plain(value: Any, *, max_items: int, max_chars: int, depth: int = 0) -> Any:
    """`value` as plain JSON data (bounded in items, characters and depth)."""
    if value is None or isinstance(value, bool):
        return value
    if _is_missing(value):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return _clip(value, max_chars)
    if isinstance(value, (bytes, bytearray)):
        return _safe_repr(bytes(value[:max_chars]), max_chars)
    if isinstance(value, decimal.Decimal):
        return _float(float(value)) if value.is_finite() else str(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, _dt.timedelta):
        return str(value)
    scalar = _numpy_scalar(value)
    if scalar is not None:
        if isinstance(scalar, (_dt.datetime, _dt.date, _dt.timedelta)) or not isinstance(
            scalar, (bool, int, float, str)
        ):
            return _clip(str(value), max_chars)
        return plain(scalar, max_items=max_items, max_chars=max_chars, depth=depth)
    if _is_pandas_scalar(value):
        return None if _is_missing(value) else str(value)
    if depth >= MAX_DEPTH:
        return _safe_repr(value, max_chars)
    if isinstance(value, dict):
        return {
            _clip(str(key), 200): plain(
                item, max_items=max_items, max_chars=max_chars, depth=depth + 1
            )
            for key, item in _first(value.items(), max_items)
        }
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [
            plain(item, max_items=max_items, max_chars=max_chars, depth=depth + 1)
            for item in _first(items, max_items)
        ]
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and _is_numpy_array(value):
        return plain(
            value[:max_items].tolist() if value.ndim else value.tolist(),
            max_items=max_items,
            max_chars=max_chars,
            depth=depth + 1,
        )
    return _safe_repr(value, max_chars)


def _first(items: Any, limit: int) -> list[Any]:
    out = []
    for index, item in enumerate(items):
        if index >= limit:
            break
        out.append(item)
    return out


def _is_numpy_array(value: Any) -> bool:
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.ndarray)


def _frame(frame: Any, head: int, max_items: int, max_chars: int) -> dict[str, Any]:
    rows, cols = frame.shape
    shown = frame.iloc[:head, :max_items]
    columns = [_clip(str(c), 200) for c in frame.columns[:max_items]]
    records = []
    for row in shown.itertuples(index=False, name=None):
        records.append(
            {
                column: plain(cell, max_items=max_items, max_chars=max_chars, depth=1)
                for column, cell in zip(columns, row, strict=False)
            }
        )
    return {
        "type": "DataFrame",
        "shape": [int(rows), int(cols)],
        "columns": columns,
        "dtypes": {_clip(str(c), 200): str(t) for c, t in list(frame.dtypes.items())[:max_items]},
        "head": records,
        "truncated": rows > head or cols > max_items,
    }


def _series(series: Any, head: int, max_items: int, max_chars: int) -> dict[str, Any]:
    pairs = [
        [
            plain(index, max_items=max_items, max_chars=200, depth=1),
            plain(item, max_items=max_items, max_chars=max_chars, depth=1),
        ]
        for index, item in series.iloc[:head].items()
    ]
    return {
        "type": "Series",
        "shape": [int(len(series))],
        "name": plain(series.name, max_items=max_items, max_chars=200, depth=1),
        "dtype": str(series.dtype),
        "head": pairs,
        "truncated": len(series) > head,
    }


def _array(array: Any, head: int, max_items: int, max_chars: int) -> dict[str, Any]:
    shown = array[:head] if array.ndim else array
    if array.ndim > 1:
        shown = shown.reshape(shown.shape[0], -1)[:, :max_items]
    return {
        "type": "ndarray",
        "shape": [int(n) for n in array.shape],
        "dtype": str(array.dtype),
        "head": plain(shown.tolist(), max_items=max_items, max_chars=max_chars, depth=1),
        "truncated": bool(array.ndim and (array.shape[0] > head or array.size > head * max_items)),
    }


def describe(
    value: Any,
    *,
    head: int = DEFAULT_HEAD,
    max_items: int = DEFAULT_MAX_ITEMS,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> dict[str, Any]:
    """A JSON-safe description of `value` (see the module docstring for its shape)."""
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(value, pandas.DataFrame):
        return _frame(value, head, max_items, max_chars)
    if pandas is not None and isinstance(value, pandas.Series):
        return _series(value, head, max_items, max_chars)
    if _is_numpy_array(value):
        return _array(value, head, max_items, max_chars)
    kind = type(value).__name__
    if isinstance(value, dict):
        return {
            "type": "dict",
            "length": len(value),
            "value": plain(value, max_items=max_items, max_chars=max_chars),
            "truncated": len(value) > max_items,
        }
    if isinstance(value, (list, tuple, set, frozenset)):
        return {
            "type": kind,
            "length": len(value),
            "value": plain(value, max_items=max_items, max_chars=max_chars),
            "truncated": len(value) > max_items,
        }
    if _is_scalar(value):
        return {"type": kind, "value": plain(value, max_items=max_items, max_chars=max_chars)}
    return {"type": kind, "repr": _safe_repr(value, max_chars)}


_SCALARS = (bool, int, float, str, bytes, decimal.Decimal, _dt.date, _dt.time, _dt.timedelta)


def _is_scalar(value: Any) -> bool:
    if value is None or isinstance(value, _SCALARS):
        return True
    numpy = sys.modules.get("numpy")
    return (numpy is not None and isinstance(value, numpy.generic)) or _is_pandas_scalar(value)


def _is_pandas_scalar(value: Any) -> bool:
    pandas = sys.modules.get("pandas")
    if pandas is None:
        return False
    return (
        value is pandas.NaT
        or value is pandas.NA
        or isinstance(value, (pandas.Timestamp, pandas.Timedelta, pandas.Period))
    )


def _is_missing(value: Any) -> bool:
    pandas = sys.modules.get("pandas")
    return pandas is not None and (value is pandas.NaT or value is pandas.NA)
