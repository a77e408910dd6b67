"""Byte layouts of what the saver stores, and their (de)serialization (pure functions).

The serializer's `(type, bytes)` pairs are stored as they are: `type \\0 bytes`, never
re-encoded. Text parts are NUL-separated so the Lua scripts can read a record's header (parent,
run id, channel versions) without understanding the serializer's bytes.

Checkpoint member of the `c` sorted set::

    ns \\0 id \\0 parent_id \\0 run_id \\0 root_id \\0 flags \\0 n \\0 (channel \\0 version \\0)*n
    checkpoint_type \\0 metadata_type \\0 len(checkpoint_bytes) \\0 checkpoint_bytes metadata_bytes

`root_id` is the root-namespace checkpoint a subgraph call started from (`parents[""]`); `flags`
holds `d` when the thread uses a `DeltaChannel`. The `n` pairs are the checkpoint's
`channel_versions`: the blob fields the Lua scripts load with it.

Write member of the `w` sorted set::

    ns \\0 id \\0 task_id \\0 idx \\0 channel \\0 task_path \\0 type \\0 bytes

Channel value in the `b` hash: `V type \\0 bytes` (a value), `E` (the channel is empty at this
version) or `L log,start,end;...` (a list stored as element ranges, see `lists.py`).

The serialized checkpoint body leaves out what the header already says (`compact_body`): the id
and the channel versions that are strings (the others come back with their types).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from checkpointer.keys import SEP, check_name, version_text

Typed = tuple[str, bytes]
Segment = tuple[str, int, int]

VALUE, EMPTY, LIST = ord("V"), ord("E"), ord("L")
EMPTY_RECORD = b"E"
DELTA_FLAG = "d"


def typed(value: Typed) -> bytes:
    """A serializer `(type, bytes)` pair as one string."""
    return check_name("serializer type", value[0]) + SEP + value[1]


def untyped(data: bytes) -> Typed:
    kind, _, payload = data.partition(SEP)
    return kind.decode(), payload


def value_record(value: Typed) -> bytes:
    return b"V" + typed(value)


def list_record(segments: Iterable[Segment]) -> bytes:
    return ("L" + "".join(f"{log},{start},{end};" for log, start, end in segments)).encode()


def parse_segments(record: bytes) -> list[Segment]:
    out: list[Segment] = []
    for part in record[1:].decode().split(";"):
        if part:
            log, start, end = part.split(",")
            out.append((log, int(start), int(end)))
    return out


def element_field(log: str, position: int) -> bytes:
    return f"{log}{position}".encode()


def compact_body(checkpoint: Mapping[str, Any]) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """What the serialized checkpoint body keeps, and the channel versions (record header).

    The id and the versions are in the record as text, so the body keeps only the versions
    that are not strings (to give them back with their type)."""
    body = {k: v for k, v in checkpoint.items() if k not in ("id", "channel_values")}
    current: dict[str, Any] = dict(body["channel_versions"])
    body["channel_versions"] = {ch: v for ch, v in current.items() if not isinstance(v, str)}
    return body, list(current.items())


def expand_body(body: dict[str, Any], record: CheckpointRecord) -> dict[str, Any]:
    """The checkpoint (without values) from a body made by `compact_body` and its record."""
    overrides = body.pop("channel_versions", {})
    body["id"] = record.checkpoint_id
    body["channel_versions"] = {ch: overrides.get(ch, version) for ch, version in record.versions}
    return body


@dataclass(slots=True)
class CheckpointRecord:
    """A decoded checkpoint member."""

    ns: str
    checkpoint_id: str
    parent_id: str | None
    run_id: str
    root_id: str
    flags: str
    versions: list[tuple[str, str]]
    checkpoint: Typed
    metadata: Typed
    member: bytes


def encode_checkpoint(
    *,
    prefix: bytes,
    parent_id: str | None,
    run_id: str,
    root_id: str,
    flags: str,
    versions: Sequence[tuple[str, object]],
    checkpoint: Typed,
    metadata: Typed,
) -> bytes:
    """The `c` member of a checkpoint; `prefix` is `keys.checkpoint_prefix(ns, id)`."""
    head = [
        check_name("parent checkpoint_id", parent_id or ""),
        check_name("run_id", run_id),
        check_name("root checkpoint_id", root_id),
        flags.encode(),
        str(len(versions)).encode(),
    ]
    for channel, version in versions:
        head.append(check_name("channel", channel))
        head.append(check_name("version", version_text(version)))
    head.append(check_name("serializer type", checkpoint[0]))
    head.append(check_name("serializer type", metadata[0]))
    head.append(str(len(checkpoint[1])).encode())
    return prefix + SEP.join(head) + SEP + checkpoint[1] + metadata[1]


def decode_checkpoint(member: bytes) -> CheckpointRecord:
    ns, cid, parent, run, root, flags, count, rest = member.split(SEP, 7)
    n = int(count)
    parts = rest.split(SEP, 2 * n + 3)
    ck_len = int(parts[2 * n + 2])
    payload = parts[2 * n + 3]
    return CheckpointRecord(
        ns=ns.decode(),
        checkpoint_id=cid.decode(),
        parent_id=parent.decode() or None,
        run_id=run.decode(),
        root_id=root.decode(),
        flags=flags.decode(),
        versions=[(parts[2 * i].decode(), parts[2 * i + 1].decode()) for i in range(n)],
        checkpoint=(parts[2 * n].decode(), payload[:ck_len]),
        metadata=(parts[2 * n + 1].decode(), payload[ck_len:]),
        member=member,
    )


def write_prefix(checkpoint_prefix: bytes, task_id: str, idx: int) -> bytes:
    """Start of a write's member: identifies it by (checkpoint, task_id, idx)."""
    return checkpoint_prefix + check_name("task_id", task_id) + SEP + str(idx).encode() + SEP


def encode_write(prefix: bytes, channel: str, task_path: str, value: Typed) -> bytes:
    return (
        prefix
        + check_name("channel", channel)
        + SEP
        + check_name("task_path", task_path)
        + SEP
        + typed(value)
    )


@dataclass(slots=True)
class WriteRecord:
    task_id: str
    idx: int
    channel: str
    task_path: str
    value: Typed


def decode_write(member: bytes) -> WriteRecord:
    _ns, _cid, task_id, idx, channel, task_path, kind, payload = member.split(SEP, 7)
    return WriteRecord(
        task_id=task_id.decode(),
        idx=int(idx),
        channel=channel.decode(),
        task_path=task_path.decode(),
        value=(kind.decode(), payload),
    )
