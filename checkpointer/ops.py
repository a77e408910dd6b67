"""The saver's I/O vocabulary: the requests a plan yields and the executors run.

The saver's logic lives in *plans* (`plans.py`): generators that yield a `Batch` of Redis
operations, receive the replies, and finally return a result (or, for `list`, yield `Emit`s with
the tuples they produce). A plan never performs I/O itself, so the sync saver and the async
saver drive the same plans, each with its own small executor (`sync.py`, `aio.py`).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from checkpointer.lua import Lua

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Cmd:
    """One raw Redis command."""

    args: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Eval:
    """One Lua script call (EVALSHA, falling back to EVAL when the server lacks the script)."""

    script: Lua
    keys: tuple[str, ...]
    args: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Scan:
    """Every key matching `match`, on every primary of a cluster. Must be alone in its batch."""

    match: str


Op = Cmd | Eval | Scan


@dataclass(frozen=True, slots=True)
class Batch:
    """Independent operations sent together (one pipeline); replies come back in order."""

    ops: tuple[Op, ...]


@dataclass(frozen=True, slots=True)
class Emit:
    """An item a streaming plan hands to its caller."""

    item: Any


Request = Batch | Emit
Plan = Generator[Request, Any, T]


def batch(*ops: Op) -> Batch:
    return Batch(ops)


def command(op: Op) -> tuple[Any, ...]:
    """The Redis command of a pipelinable op (scripts by SHA: EVALSHA)."""
    if isinstance(op, Cmd):
        return op.args
    if isinstance(op, Eval):
        return ("EVALSHA", op.script.sha, len(op.keys), *op.keys, *op.args)
    raise TypeError("SCAN can't be pipelined")
