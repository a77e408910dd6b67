"""The saver's reads and writes as plans: generators of Redis requests, shared by the sync and
async savers (deletes and copies are in `maintenance.py`).

Round trips: `get_tuple`, `put` and `put_writes` are one script call each. On a single node the
put script also indexes the run; on a cluster a small script of its own does, the first time
this process sees the (thread, run) pair. Both savers fold parked writes into the put
(`combine.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
)

from checkpointer import lua
from checkpointer.context import Context, checkpoint_config, read_loaded, read_tuple
from checkpointer.keys import (
    SEP,
    blob_field,
    check_name,
    checkpoint_prefix,
    checkpoints_pattern,
    run_key,
    thread_keys,
    thread_of_key,
)
from checkpointer.ops import Cmd, Emit, Eval, Plan, Scan, batch
from checkpointer.records import (
    DELTA_FLAG,
    EMPTY_RECORD,
    CheckpointRecord,
    compact_body,
    decode_checkpoint,
    encode_checkpoint,
    encode_write,
    value_record,
    write_prefix,
)

PAGE = 64
_PUT_ATTEMPTS = 3


def get_tuple(ctx: Context, config: RunnableConfig) -> Plan[CheckpointTuple | None]:
    conf = config["configurable"]
    thread_id = conf["thread_id"]
    ns = conf.get("checkpoint_ns", "")
    keys = thread_keys(ctx.prefix, thread_id)
    known_token, known = ctx.elements.hints(keys.thread_id)
    args = (
        check_name("checkpoint_ns", ns),
        get_checkpoint_id(config) or "",
        ctx.read_ttl_ms,
        known_token,
        "".join(f"{log},{upto};" for log, (upto, _data) in known.items()),
    )
    (reply,) = yield batch(Eval(lua.GET, keys.all, args))
    if not reply:
        return None
    member, token, *rest = reply
    skipped = known if known_token and token == known_token else None
    return read_tuple(
        ctx, thread_id, decode_checkpoint(member), iter(rest), token=token, skipped=skipped
    )


def put(
    ctx: Context,
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    new_versions: ChannelVersions,
    writes: Sequence[Any] = (),
) -> Plan[RunnableConfig]:
    """Store a checkpoint; `writes` (from `encode_writes`, same thread) are stored with it."""
    serde = ctx.serde
    conf = config["configurable"]
    thread_id = conf["thread_id"]
    ns = conf.get("checkpoint_ns", "")
    keys = thread_keys(ctx.prefix, thread_id)
    values: dict[str, Any] = checkpoint["channel_values"]
    body, versions = compact_body(checkpoint)
    md = get_checkpoint_metadata(config, metadata)
    run_id = "" if md.get("run_id") is None else str(md.get("run_id"))
    # The run index is written before (or with) the checkpoint, so delete_for_runs never misses
    # a thread: by the put script itself on a single node, by a script of its own on a cluster.
    index_keys: tuple[str, ...] = ()
    if run_id and not ctx.runs.known(keys.thread_id, run_id):
        index_keys = (run_key(ctx.prefix, run_id),)
        if ctx.cluster:
            yield batch(Eval(lua.INDEX_RUN, index_keys, (keys.thread_id, ctx.ttl_ms)))
            ctx.runs.add(keys.thread_id, run_id)
            index_keys = ()

    prefix = checkpoint_prefix(ns, checkpoint["id"])
    ns_bytes = prefix[: prefix.index(SEP)]
    blobs: list[bytes] = []
    lists: list[tuple[bytes, bytes, list[Any]]] = []
    for channel, version in new_versions.items():
        field = blob_field(ns_bytes, channel, version)
        if channel not in values:
            blobs += (field, EMPTY_RECORD)
        elif type(values[channel]) is list and values[channel]:
            lists.append((field, ns_bytes + SEP + channel.encode(), values[channel]))
        else:
            blobs += (field, value_record(serde.dumps_typed(values[channel])))
    parents = md.get("parents")
    root = parents.get("", "") if isinstance(parents, dict) else ""
    member = encode_checkpoint(
        prefix=prefix,
        parent_id=conf.get("checkpoint_id"),
        run_id=run_id,
        root_id=str(root),
        flags=DELTA_FLAG if "counters_since_delta_snapshot" in md else "",
        versions=versions,
        checkpoint=serde.dumps_typed(body),
        metadata=serde.dumps_typed(md),
    )
    for _ in range(_PUT_ATTEMPTS):
        plan = ctx.elements.plan(keys.thread_id, lists, serde.dumps_typed) if lists else None
        records = [part for pair in plan.records for part in pair] if plan else []
        elements = [part for pair in plan.elements for part in pair] if plan else []
        args = (
            prefix,
            member,
            ctx.ttl_ms,
            plan.expected_token if plan else b"",
            plan.new_token if plan else b"",
            (len(blobs) + len(records)) // 2,
            len(elements) // 2,
            keys.thread_id,
            len(writes) // 3,
            *blobs,
            *records,
            *elements,
            *writes,
        )
        ((stored, token),) = yield batch(Eval(lua.PUT, keys.all + index_keys, args))
        if index_keys:
            ctx.runs.add(keys.thread_id, run_id)
        if stored:
            if plan is not None:
                ctx.elements.commit(plan, token)
            return checkpoint_config(thread_id, ns, checkpoint["id"])
        # Elements were deleted (prune, delete_for_runs) since we learnt their positions.
        ctx.elements.drop(keys.thread_id)
    raise RuntimeError(
        f"thread {thread_id!r}: checkpoint {checkpoint['id']!r} was refused {_PUT_ATTEMPTS} times "
        "because its list elements kept being deleted meanwhile; stop pruning the thread while "
        "it runs, then retry"
    )


def encode_writes(
    ctx: Context,
    config: RunnableConfig,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str,
) -> list[Any]:
    """A task's writes as the flat (prefix, member, special) triples the scripts store."""
    conf = config["configurable"]
    prefix = checkpoint_prefix(conf.get("checkpoint_ns", ""), conf["checkpoint_id"])
    out: list[Any] = []
    for idx, (channel, value) in enumerate(writes):
        write_idx = WRITES_IDX_MAP.get(channel, idx)
        wprefix = write_prefix(prefix, task_id, write_idx)
        member = encode_write(wprefix, channel, task_path, ctx.serde.dumps_typed(value))
        out += (wprefix, member, b"1" if write_idx < 0 else b"0")
    return out


def put_writes(ctx: Context, thread_id: Any, encoded: Sequence[Any]) -> Plan[None]:
    """Store writes encoded by `encode_writes` (any checkpoints of one thread)."""
    if not encoded:
        return
    keys = thread_keys(ctx.prefix, thread_id)
    args = (ctx.ttl_ms, len(encoded) // 3, *encoded)
    yield batch(Eval(lua.PUT_WRITES, keys.all, args))


def list_checkpoints(
    ctx: Context,
    config: RunnableConfig | None,
    filter: dict[str, Any] | None,
    before: RunnableConfig | None,
    limit: int | None,
) -> Plan[None]:
    """Emit matching tuples newest first (by checkpoint id; `before` is exclusive)."""
    if limit is not None and limit <= 0:
        return
    before_id = get_checkpoint_id(before) if before else None
    if config is None:
        (found,) = yield batch(Scan(checkpoints_pattern(ctx.prefix)))
        threads: list[Any] = sorted(
            {t for key in found if (t := thread_of_key(ctx.prefix, key)) is not None}
        )
        ns, checkpoint_id = None, None
    else:
        conf = config["configurable"]
        threads = [conf["thread_id"]]
        ns, checkpoint_id = conf.get("checkpoint_ns"), get_checkpoint_id(config)
        if ns is not None and not checkpoint_id:
            yield from _list_namespace(ctx, threads[0], ns, filter, before_id, limit)
            return
    replies = yield batch(
        *(Cmd(("ZRANGE", thread_keys(ctx.prefix, t).checkpoints, 0, -1)) for t in threads)
    )
    found_records: list[tuple[Any, CheckpointRecord]] = []
    for thread_id, members in zip(threads, replies, strict=True):
        for member in members:
            record = decode_checkpoint(member)
            if (
                (ns is None or record.ns == ns)
                and (not checkpoint_id or record.checkpoint_id == checkpoint_id)
                and (not before_id or record.checkpoint_id < before_id)
            ):
                found_records.append((thread_id, record))
    found_records.sort(key=lambda tr: (tr[1].checkpoint_id, str(tr[0]), tr[1].ns), reverse=True)
    matched = [(t, r) for t, r in found_records if _matches(ctx, r, filter)]
    if limit is not None:
        matched = matched[:limit]
    for start in range(0, len(matched), PAGE):
        yield from _load_and_emit(ctx, matched[start : start + PAGE])


def _list_namespace(
    ctx: Context,
    thread_id: Any,
    ns: str,
    filter: dict[str, Any] | None,
    before_id: str | None,
    limit: int | None,
) -> Plan[None]:
    """One namespace, paged newest first straight from the sorted set."""
    keys = thread_keys(ctx.prefix, thread_id)
    ns_bytes = check_name("checkpoint_ns", ns)
    high = b"(" + (ns_bytes + SEP + before_id.encode() + SEP if before_id else ns_bytes + b"\x01")
    low = b"[" + ns_bytes + SEP
    remaining = limit
    while True:
        page = PAGE if filter or remaining is None else min(PAGE, remaining)
        (members,) = yield batch(
            Cmd(("ZRANGE", keys.checkpoints, high, low, "BYLEX", "REV", "LIMIT", 0, page))
        )
        records = [decode_checkpoint(m) for m in members]
        matched = [(thread_id, r) for r in records if _matches(ctx, r, filter)]
        if remaining is not None:
            matched = matched[:remaining]
            remaining -= len(matched)
        yield from _load_and_emit(ctx, matched)
        if remaining == 0 or len(members) < page:
            return
        high = b"(" + members[-1]


def _matches(ctx: Context, record: CheckpointRecord, filter: dict[str, Any] | None) -> bool:
    if not filter:
        return True
    metadata = ctx.serde.loads_typed(record.metadata)
    return all(metadata.get(key) == value for key, value in filter.items())


def _load_and_emit(ctx: Context, chosen: list[tuple[Any, CheckpointRecord]]) -> Plan[None]:
    """Load the chosen checkpoints (one script call per thread, one round trip) and emit them
    in the given order."""
    if not chosen:
        return
    by_thread: dict[str, tuple[Any, list[Any]]] = {}
    for thread_id, record in chosen:
        entry = by_thread.setdefault(str(thread_id), (thread_id, [ctx.read_ttl_ms]))
        entry[1].extend((record.ns.encode(), record.checkpoint_id.encode()))
    replies = yield batch(
        *(
            Eval(lua.LOAD, thread_keys(ctx.prefix, tid).all, tuple(args))
            for tid, args in by_thread.values()
        )
    )
    loaded: dict[tuple[str, str, str], CheckpointTuple] = {}
    for (tid, _args), reply in zip(by_thread.values(), replies, strict=True):
        for record, tup in read_loaded(ctx, tid, reply):
            loaded[(str(tid), record.ns, record.checkpoint_id)] = tup
    for thread_id, record in chosen:
        found = loaded.get((str(thread_id), record.ns, record.checkpoint_id))
        if found is not None:
            yield Emit(found)
