"""Plans that delete and copy threads: delete_thread, delete_for_runs, copy_thread, prune.

Each thread is changed by one script (atomic, in its slot); the run index, in other slots, is
updated by separate commands around it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checkpointer import lua, lua_admin
from checkpointer.context import Context
from checkpointer.keys import TOKEN_FIELD, checkpoint_prefix, run_key, thread_keys
from checkpointer.lists import new_token
from checkpointer.ops import Cmd, Eval, Plan, batch
from checkpointer.records import CheckpointRecord, decode_checkpoint, encode_checkpoint

PRUNE_STRATEGIES = ("keep_latest", "delete")


def delete_threads(ctx: Context, thread_ids: Sequence[Any]) -> Plan[None]:
    all_keys = [thread_keys(ctx.prefix, t) for t in thread_ids]
    if not all_keys:
        return
    replies = yield batch(*(Eval(lua_admin.DELETE_THREAD, k.all, ()) for k in all_keys))
    unindex = []
    for keys, runs in zip(all_keys, replies, strict=True):
        ctx.elements.drop(keys.thread_id)
        unindex += [Cmd(("SREM", run_key(ctx.prefix, r.decode()), keys.thread_id)) for r in runs]
    ctx.runs.forget(threads=[k.thread_id for k in all_keys])
    if unindex:
        yield batch(*unindex)


def delete_for_runs(ctx: Context, run_ids: Sequence[Any]) -> Plan[None]:
    runs = [str(r) for r in run_ids]
    if not runs:
        return
    replies = yield batch(*(Cmd(("SMEMBERS", run_key(ctx.prefix, r))) for r in runs))
    threads = sorted({member.decode() for reply in replies for member in reply})
    if threads:
        yield batch(
            *(
                Eval(lua_admin.DELETE_RUNS, thread_keys(ctx.prefix, t).all, (new_token(), *runs))
                for t in threads
            )
        )
    for thread_id in threads:
        ctx.elements.drop(thread_id)
    ctx.runs.forget(runs=runs)
    yield batch(*(Cmd(("UNLINK", run_key(ctx.prefix, r))) for r in runs))


def copy_thread(ctx: Context, source_thread_id: Any, target_thread_id: Any) -> Plan[None]:
    """Merge every checkpoint, write and value of the source thread into the target thread.

    A `thread_id` in checkpoint metadata (langgraph-api stores one) is rewritten to the target.
    """
    src = thread_keys(ctx.prefix, source_thread_id)
    dst = thread_keys(ctx.prefix, target_thread_id)
    if src.thread_id == dst.thread_id:
        return
    members, writes, blobs, elements = yield batch(
        Cmd(("ZRANGE", src.checkpoints, 0, -1)),
        Cmd(("ZRANGE", src.writes, 0, -1)),
        Cmd(("HGETALL", src.blobs)),
        Cmd(("HGETALL", src.elements)),
    )
    if not members and not writes:
        return
    copied: list[bytes] = []
    runs: set[str] = set()
    for member in members:
        record = decode_checkpoint(member)
        if record.run_id:
            runs.add(record.run_id)
        metadata = ctx.serde.loads_typed(record.metadata)
        if str(metadata.get("thread_id")) == src.thread_id:
            metadata["thread_id"] = target_thread_id
            member = _with_metadata(record, ctx.serde.dumps_typed(metadata))
        copied.append(member)
    blob_pairs = [part for pair in blobs.items() for part in pair]
    element_pairs = [part for f, v in elements.items() if f != TOKEN_FIELD for part in (f, v)]
    args = (
        ctx.ttl_ms,
        new_token(),
        len(copied),
        len(writes),
        len(blob_pairs) // 2,
        len(element_pairs) // 2,
        *copied,
        *writes,
        *blob_pairs,
        *element_pairs,
    )
    yield batch(
        *(
            Eval(lua.INDEX_RUN, (run_key(ctx.prefix, r),), (dst.thread_id, ctx.ttl_ms))
            for r in sorted(runs)
        ),
        Eval(lua_admin.IMPORT, dst.all, args),
    )
    ctx.elements.drop(dst.thread_id)


def _with_metadata(record: CheckpointRecord, metadata: tuple[str, bytes]) -> bytes:
    return encode_checkpoint(
        prefix=checkpoint_prefix(record.ns, record.checkpoint_id),
        parent_id=record.parent_id,
        run_id=record.run_id,
        root_id=record.root_id,
        flags=record.flags,
        versions=record.versions,
        checkpoint=record.checkpoint,
        metadata=metadata,
    )


def prune(ctx: Context, thread_ids: Sequence[Any], strategy: str) -> Plan[None]:
    if isinstance(thread_ids, str):
        raise TypeError("thread_ids must be a sequence of thread ids, not a str")
    if strategy not in PRUNE_STRATEGIES:
        raise ValueError(f"Unknown prune strategy {strategy!r}: use one of {PRUNE_STRATEGIES}")
    threads = list(dict.fromkeys(str(t) for t in thread_ids))
    if not threads:
        return
    if strategy == "delete":
        yield from delete_threads(ctx, threads)
        return
    for check in (True, False):
        replies = yield batch(
            *(
                Eval(
                    lua_admin.PRUNE_KEEP_LATEST,
                    thread_keys(ctx.prefix, t).all,
                    (new_token(), "1" if check else "0"),
                )
                for t in threads
            )
        )
        if not check:
            for thread_id in threads:
                ctx.elements.drop(thread_id)
        refused = [t for t, n in zip(threads, replies, strict=True) if n == -1]
        if refused:
            raise NotImplementedError(
                "prune(strategy='keep_latest') can't prune threads that use a DeltaChannel "
                f"(their latest values are rebuilt from older checkpoints): {', '.join(refused)}. "
                "Use strategy='delete' for them, or leave them unpruned"
            )
