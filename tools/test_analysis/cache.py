"""The parse cache: LRU of 1000 entries with a 5-minute TTL, keyed by a hash of path + content.

A small class rather than a dependency: it needs an injectable clock (tests expire entries
without sleeping), per-instance hit/miss counters for the API's ``metrics.cache_hits``, and a
lock, because the graph's fan-out may parse and check the same files from several threads.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_PARSE_CACHE", "CacheStats", "ParseCache", "cache_key"]


def cache_key(path: str, content: str, extra: Hashable = ()) -> bytes:
    """BLAKE2b digest of path + content (+ ``extra``, e.g. discovery patterns).

    A digest rather than the text itself, so the cache index does not hold a second copy of
    every source; NUL separators keep ``("a", "bc")`` and ``("ab", "c")`` apart.
    """
    h = hashlib.blake2b(digest_size=20)
    h.update(path.encode("utf-8", "surrogatepass"))
    h.update(b"\0")
    h.update(content.encode("utf-8", "surrogatepass"))
    h.update(b"\0")
    h.update(repr(extra).encode("utf-8", "surrogatepass"))
    return h.digest()


@dataclass(frozen=True, slots=True)
class CacheStats:
    """A snapshot of the counters."""

    hits: int
    misses: int
    evictions: int
    expirations: int
    size: int
    maxsize: int
    ttl_seconds: float


class ParseCache:
    """Thread-safe LRU cache with a per-entry time-to-live.

    ``get`` refreshes recency but not the TTL: an entry lives ``ttl`` seconds from its ``put``,
    so an edited-and-reverted file is reparsed at most every ``ttl`` seconds.
    """

    def __init__(
        self,
        maxsize: int = 1000,
        ttl: float = 300.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be >= 1, got {maxsize}")
        if ttl <= 0:
            raise ValueError(f"ttl must be > 0 seconds, got {ttl}")
        self.maxsize = maxsize
        self.ttl = ttl
        self._clock = clock
        self._data: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        self.expirations = 0

    def get(self, key: Hashable) -> Any | None:
        """The cached value, or None when absent or expired (counted as a miss)."""
        now = self._clock()
        with self._lock:
            entry = self._data.get(key)
            if entry is None:
                self.misses += 1
                return None
            expires, value = entry
            if now >= expires:
                del self._data[key]
                self.expirations += 1
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return value

    def __contains__(self, key: object) -> bool:
        """Whether a live entry exists for ``key``; neither counted nor refreshed (the
        planner peeks to report ``cache_hits`` without disturbing the LRU order)."""
        with self._lock:
            entry = self._data.get(key)
            return entry is not None and self._clock() < entry[0]

    def put(self, key: Hashable, value: Any) -> None:
        """Store ``value``; evicts expired entries first, then the least recently used."""
        now = self._clock()
        with self._lock:
            self._data[key] = (now + self.ttl, value)
            self._data.move_to_end(key)
            if len(self._data) > self.maxsize:
                self._purge_expired(now)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)
                self.evictions += 1

    def _purge_expired(self, now: float) -> None:
        expired = [k for k, (expires, _) in self._data.items() if now >= expires]
        for k in expired:
            del self._data[k]
        self.expirations += len(expired)

    def clear(self) -> None:
        """Drop every entry (counters are kept)."""
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)

    def stats(self) -> CacheStats:
        """Counters and size at this moment."""
        with self._lock:
            return CacheStats(
                self.hits,
                self.misses,
                self.evictions,
                self.expirations,
                len(self._data),
                self.maxsize,
                self.ttl,
            )


#: The process-wide cache used by default (the graph's parse and rule nodes share it).
DEFAULT_PARSE_CACHE = ParseCache()
