"""A LangGraph checkpoint saver on plain Redis (no modules), sync and async.

`RedisSaver` (sync) and `AsyncRedisSaver` (async) implement the whole `BaseCheckpointSaver`
contract on Redis >= 6.2, Valkey and Redis Cluster, with nothing but core commands and Lua.

Key layout (`keys.py`, `records.py`)
    Each thread has four keys, `<prefix>:{<thread id>}:c|w|b|e`: checkpoints (a sorted set
    ordered by `ns \\0 checkpoint_id`, the record inside the member), pending writes (a sorted
    set keyed by checkpoint, task and index), channel values (a hash keyed by namespace, channel
    and version) and list elements (a hash). The `{thread id}` hash tag puts a thread in one
    Cluster slot, so every operation on a thread is one Lua script, atomic, in one round trip:
    `get_tuple` (checkpoint, values, writes), `put` and `put_writes`. A channel value is stored
    once per (thread, namespace, channel, version); an unchanged channel is never rewritten.
    The serializer's `(type, bytes)` is stored as is.

Lists stored as element ranges (`lists.py`)
    A list-valued channel such as `messages` would otherwise store the whole conversation at
    every step (quadratic growth). Each element is stored once and each version of the list is
    a small record of element ranges, so a thread's size grows like its messages. The saver
    remembers the elements of recently used threads, so a put sends only new elements and
    `get_tuple` receives only the elements it has not seen (values are still deserialized
    afresh at each read).

Round trips
    `get_tuple`, `put` and `put_writes` are one script call each, and both savers go further: a
    task's writes wait a few milliseconds for the step's checkpoint and are stored in the same
    call (`combine.py`), so a graph step costs one round trip. LangGraph's sync loop calls
    `put_writes` and `put` from worker threads, where the parked writes wait on a future; its
    async loop awaits them on the event loop.

Cross-thread operations and Redis Cluster
    Only two operations span threads. `list(None)` finds threads with SCAN on every primary (a
    rare, administrative call; no global index to keep consistent or to expire).
    `delete_for_runs` reads a run index, `<prefix>:run:{<run id>}`, the set of threads where
    the run saved checkpoints (added once per thread and run per process). It lives in the
    run's slot, not the thread's: on a single server the put script writes it too, before the
    checkpoint; on a cluster a separate script writes it just before the put. A failure in
    between leaves an index entry without checkpoints, which `delete_for_runs` tolerates, never
    checkpoints missing from the index. With a TTL it expires like the threads (counted from
    the run's first checkpoint in the thread). `copy_thread` reads the source thread and writes
    the target in two steps, as the two threads may sit on different nodes.

TTL
    With `ttl`, every script that writes to a thread gives all its keys the same TTL (run
    index keys too), and reads re-arm it when `refresh_on_read`; so no key of a thread is ever
    left without a TTL, nor outlives the others.
"""

from checkpointer.aio import AsyncRedisSaver
from checkpointer.base import TTLConfig
from checkpointer.context import CorruptThreadError
from checkpointer.errors import RedisUnavailableError
from checkpointer.sync import RedisSaver

__all__ = [
    "AsyncRedisSaver",
    "CorruptThreadError",
    "RedisSaver",
    "RedisUnavailableError",
    "TTLConfig",
]
