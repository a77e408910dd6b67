"""Collections and filters: which chunks one caller's search may see.

Every document belongs to ONE collection (the ``collection`` column of the knowledge tables):

- ``private:<owner>``: an API key's private collection (the default of ``POST /documents``),
  shown to its key as ``private``; only that key reads and changes it;
- a shared collection (``shared``, the default of ``main.py ingest``, or any other name matching
  `COLLECTION_NAME`): every key reads it; the owners in KNOWLEDGE_SHARED_WRITERS (and the
  anonymous owner of a server without API keys) write it.

A caller's search covers its private collection plus every shared collection (`Scope`), as ONE
ranking: the engine computes BM25's N, avgdl and df over exactly that set (so another key's
private documents never move this key's scores), and the dense leg searches the same set.

Filters (`Filters`) narrow a search INSIDE both legs (an SQL condition on the chunk's document,
in the BM25 statement and in the dense query), never after the top-k cut: equality, ``in`` and
numeric ranges on the upload's ``metadata``, and ``collection``, ``source``, ``title``. A
``collection`` filter narrows the searched set itself (the statistics follow it); the others
only decide which chunks may be returned, like a Lucene filter clause, so the scores of the
chunks they keep do not change.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: The shared collection every deployment has (``main.py ingest`` and the migration write it).
SHARED = "shared"
#: How a caller names its own private collection (in filters, uploads and listings).
PRIVATE = "private"
#: Stored name of an owner's private collection: ``private:<owner>`` (never a shared name).
PRIVATE_PREFIX = "private:"
#: Names of shared collections.
COLLECTION_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
#: Values listed in one ``in`` condition, and conditions in one filter (bounds reach SQL).
MAX_IN_VALUES = 100
MAX_CONDITIONS = 32

#: Largest magnitude of a number in a filter: well inside float8's exact integers (2**53), and
#: a bound in the schema like every other number the API takes.
MAX_FILTER_NUMBER = 1e15
Number = Annotated[float, Field(ge=-MAX_FILTER_NUMBER, le=MAX_FILTER_NUMBER)]
Integer = Annotated[int, Field(ge=-MAX_FILTER_NUMBER, le=MAX_FILTER_NUMBER)]
Scalar = str | bool | Integer | Number


def private_collection(owner: str) -> str:
    """The stored name of ``owner``'s private collection."""
    return f"{PRIVATE_PREFIX}{owner}"


def is_private(collection: str) -> bool:
    """Whether a stored collection name is a private one."""
    return collection.startswith(PRIVATE_PREFIX)


def public_name(collection: str) -> str:
    """The name a caller sees: ``private`` for its own private collection (the only private one
    it can see), the name itself for a shared one."""
    return PRIVATE if is_private(collection) else collection


def check_shared_name(name: str) -> str:
    """``name`` if it can name a shared collection; ValueError naming the rule otherwise."""
    if name == PRIVATE or not COLLECTION_NAME.match(name):
        raise ValueError(
            f"{name!r} is not a shared collection name: use 'private' for your own collection, "
            "or lowercase letters, digits, '-' and '_' (at most 63, e.g. 'shared')"
        )
    return name


@dataclass(frozen=True)
class Target:
    """What one engine read covers: stored collection names, and an optional SQL condition on
    the chunk's document (alias ``d``) with its parameters (named ``f_<n>``)."""

    collections: tuple[str, ...]
    where: str = ""
    params: dict[str, Any] = field(default_factory=dict)


# --- filters ------------------------------------------------------------------------------------


class Condition(BaseModel):
    """A condition on one field: ``eq``, ``in``, and numeric ``gt``/``gte``/``lt``/``lte``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    eq: Scalar | None = None
    in_: list[Scalar] | None = Field(None, alias="in", min_length=1, max_length=MAX_IN_VALUES)
    gt: Number | None = None
    gte: Number | None = None
    lt: Number | None = None
    lte: Number | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> Condition:
        if all(v is None for v in (self.eq, self.in_, self.gt, self.gte, self.lt, self.lte)):
            raise ValueError("a condition needs one of eq, in, gt, gte, lt, lte")
        for value in [self.eq, *(self.in_ or []), self.gt, self.gte, self.lt, self.lte]:
            check_value(value, "a condition value")
        return self

    def is_range(self) -> bool:
        return any(v is not None for v in (self.gt, self.gte, self.lt, self.lte))


def check_value(value: Any, what: str) -> None:
    """ValueError for what Postgres cannot store or compare in text or jsonb: a NUL character,
    a number that is not finite."""
    if isinstance(value, str) and "\x00" in value:
        raise ValueError(f"{what} holds a NUL character")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{what} is not a finite number")


def _condition(value: Any) -> Any:
    """A bare value is equality, a list is ``in``; an object is a `Condition`."""
    if isinstance(value, dict):
        return value
    if isinstance(value, list):
        return {"in": value}
    return {"eq": value}


class Filters(BaseModel):
    """Which documents a search may return.

    ``metadata``: ``{key: value}`` (equality), ``{key: [v1, v2]}`` or ``{key: {"in": [...]}}``,
    ``{key: {"gte": 2020, "lt": 2024}}`` (numbers); ``collection`` / ``source`` / ``title``: a
    string or a list of strings (``collection`` ``private`` is the caller's own)."""

    model_config = ConfigDict(extra="forbid")

    collection: str | list[str] | None = Field(
        None, description="Collection name(s): 'private' (your own) or a shared collection."
    )
    source: str | list[str] | None = Field(None, description="Document source(s), exact.")
    title: str | list[str] | None = Field(None, description="Document title(s), exact.")
    metadata: dict[str, Condition] = Field(
        default_factory=dict,
        description="Conditions on upload metadata: value, list (in), or {eq, in, gt, gte, lt, "
        "lte}.",
    )

    @field_validator("metadata", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, dict):
            if len(value) > MAX_CONDITIONS:
                raise ValueError(f"at most {MAX_CONDITIONS} metadata conditions")
            for key in value:
                check_value(key, "a metadata key")
            return {k: _condition(v) for k, v in value.items()}
        return value

    @field_validator("collection", "source", "title")
    @classmethod
    def _bounded(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list) and not 1 <= len(value) <= MAX_IN_VALUES:
            raise ValueError(f"give 1 to {MAX_IN_VALUES} values")
        for item in [] if value is None else _values(value):
            check_value(item, "a value")
        return value

    @field_validator("collection")
    @classmethod
    def _names(cls, value: str | list[str] | None) -> str | list[str] | None:
        for name in [] if value is None else _values(value):
            if name != PRIVATE:
                check_shared_name(name)
        return value

    def collections(self) -> list[str] | None:
        """The collection names asked for (None: no collection filter)."""
        if self.collection is None:
            return None
        return [self.collection] if isinstance(self.collection, str) else list(self.collection)


def _values(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def compile_filters(filters: Filters | None) -> tuple[str, dict[str, Any]]:
    """The SQL condition (on the document ``d``) and parameters of ``filters`` without their
    collection part (which narrows the searched set instead); ``("", {})`` for none.

    Built from constants and ``%(f_n)s`` placeholders only: no value reaches the SQL text."""
    if filters is None:
        return "", {}
    parts: list[str] = []
    params: dict[str, Any] = {}

    def param(value: Any) -> str:
        name = f"f_{len(params)}"
        params[name] = value
        return f"%({name})s"

    for column in ("source", "title"):
        value = getattr(filters, column)
        if value is not None:
            parts.append(f"d.{column} = ANY({param(_values(value))}::text[])")
    for key, cond in filters.metadata.items():
        field_sql = f"d.metadata -> {param(key)}::text"
        if cond.eq is not None:
            parts.append(f"d.metadata @> {param(json.dumps({key: cond.eq}))}::jsonb")
        if cond.in_ is not None:
            values = [json.dumps(v) for v in cond.in_]
            parts.append(f"{field_sql} = ANY({param(values)}::jsonb[])")
        if cond.is_range():
            number = (
                f"(CASE WHEN jsonb_typeof({field_sql}) = 'number'"
                f" THEN (d.metadata ->> {param(key)}::text)::float8 END)"
            )
            for op, bound in (("gt", ">"), ("gte", ">="), ("lt", "<"), ("lte", "<=")):
                limit = getattr(cond, op)
                if limit is not None:
                    parts.append(f"{number} {bound} {param(float(limit))}")
    return " AND ".join(parts), params


# --- who reads and writes what ------------------------------------------------------------------


@dataclass(frozen=True)
class Scope:
    """Who searches (``owner``: its private collection is searched too; None: the operator's CLI
    and benches, which see the shared collections only) and the filters of the search."""

    owner: str | None = None
    filters: Filters | None = None


#: The operator's scope (``main.py ingest``, benches): the shared collections, no filter.
OPERATOR = Scope()


def searched(scope: Scope, shared: Sequence[str]) -> list[str]:
    """The stored collections a search in ``scope`` covers, given the shared ones that exist:
    the owner's private collection and every shared one, narrowed by a ``collection`` filter.

    Raises ValueError for a collection filter naming something the caller cannot read."""
    readable = list(shared)
    if scope.owner is not None:
        readable.insert(0, private_collection(scope.owner))
    asked = scope.filters.collections() if scope.filters else None
    if asked is None:
        return readable
    chosen: list[str] = []
    for name in asked:
        if name == PRIVATE:
            if scope.owner is None:
                raise ValueError("'private' names an API key's collection; this caller has none")
            chosen.append(private_collection(scope.owner))
        else:
            check_shared_name(name)
            if name in readable:
                chosen.append(name)
            # a shared collection with no documents yet: nothing to search, not an error
    return list(dict.fromkeys(chosen))
