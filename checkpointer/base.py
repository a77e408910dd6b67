"""What the sync and async savers share: options, TTL, versions and the plan context."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from typing import Any, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.base import SerializerProtocol

from checkpointer.context import Context
from checkpointer.keys import DEFAULT_PREFIX, check_prefix
from checkpointer.lists import ElementRegistry


class TTLConfig(TypedDict, total=False):
    """LangGraph's TTL convention: `default_ttl` in minutes, `refresh_on_read` (default True)."""

    default_ttl: float | None
    refresh_on_read: bool


TTL = float | TTLConfig | Mapping[str, Any] | None


def parse_ttl(ttl: TTL) -> tuple[int, bool]:
    """(TTL in milliseconds or 0 for none, refresh on read) from a TTL option."""
    if ttl is None:
        return 0, False
    if isinstance(ttl, Mapping):
        minutes = ttl.get("default_ttl")
        refresh = bool(ttl.get("refresh_on_read", True))
    else:
        minutes, refresh = ttl, True
    if minutes is None:
        return 0, False
    if isinstance(minutes, bool) or not isinstance(minutes, int | float) or minutes <= 0:
        raise ValueError(
            f"ttl must be a positive number of minutes (got {minutes!r}); pass ttl=None to keep "
            "checkpoints forever"
        )
    return max(1, round(minutes * 60_000)), refresh


class RedisSaverBase(BaseCheckpointSaver[str]):
    """Options shared by `RedisSaver` and `AsyncRedisSaver`.

    Args:
        serde: Serializer of checkpoints, metadata, values and writes (default: LangGraph's
            `JsonPlusSerializer`). Its `(type, bytes)` output is stored as is.
        ttl: Expire a thread's keys this many minutes after its last write, or a
            `{"default_ttl": minutes, "refresh_on_read": bool}` mapping; reads re-arm the TTL
            when `refresh_on_read` (the default). `None` keeps checkpoints forever.
        key_prefix: Prefix of every key the saver writes (default `cp`).
        cache_threads: Threads whose list elements the saver remembers, to store only new
            elements at each step (see `checkpointer.lists`).
    """

    def __init__(
        self,
        *,
        serde: SerializerProtocol | None = None,
        ttl: TTL = None,
        key_prefix: str = DEFAULT_PREFIX,
        cache_threads: int = 128,
    ) -> None:
        super().__init__(serde=serde)
        ttl_ms, refresh = parse_ttl(ttl)
        self._ctx = Context(
            prefix=check_prefix(key_prefix),
            serde=self.serde,
            ttl_ms=ttl_ms,
            refresh_on_read=refresh,
            elements=ElementRegistry(max_threads=cache_threads),
        )

    @property
    def key_prefix(self) -> str:
        return self._ctx.prefix

    @property
    def ttl_ms(self) -> int:
        """The TTL given to a thread's keys, in milliseconds (0: none)."""
        return self._ctx.ttl_ms

    def context(self) -> Context:
        """The plan context, following `self.serde`: `with_allowlist` (called when a graph is
        compiled) swaps it on a shallow copy, which then gets a context of its own sharing the
        caches."""
        ctx = self._ctx
        if ctx.serde is not self.serde:
            ctx = self._ctx = dataclasses.replace(ctx, serde=self.serde)
        return ctx

    def get_next_version(self, current: str | int | None, channel: None) -> str:
        """`<counter>.<random>`: increasing, and unique per fork (time travel never reuses a
        version another branch stored). Shorter than InMemorySaver's, as every checkpoint
        stores every channel's version. An int `current` (checkpoints written by savers with
        integer versions) continues from that counter."""
        if current is None:
            counter = 0
        elif isinstance(current, int):
            counter = current
        else:
            counter = int(str(current).split(".")[0])
        return f"{counter + 1:010d}.{random.getrandbits(24):06x}"
