"""Redis key names and hash/sorted-set field names of the saver (pure functions).

Every key of a thread is `<prefix>:{<thread>}:<kind>`, so the `{<thread>}` hash tag puts the
whole thread in one Redis Cluster slot. `<thread>` is the thread id with `%`, `{` and `}`
percent-encoded: a brace inside the id would otherwise end (or empty) the hash tag and scatter
the thread's keys over several slots. The four kinds:

- `c` sorted set (all scores 0, ordered by member bytes): one member per checkpoint,
  `ns \\0 checkpoint_id \\0 <record>`, so a namespace's checkpoints are a contiguous,
  id-ordered range (ZRANGE BYLEX) and the record comes back with the range;
- `w` sorted set: one member per pending write, `ns \\0 checkpoint_id \\0 task_id \\0 idx \\0 ...`;
- `b` hash: channel values, field `ns \\0 channel \\0 version`;
- `e` hash: elements of list-valued channels, field `<log id><position>` (see `lists.py`).

The run index `<prefix>:run:{<run id>}` (a set of thread ids) is the only cross-thread key.
"""

from __future__ import annotations

from dataclasses import dataclass

SEP = b"\x00"
#: Field of the `e` hash holding the thread's element token (see `lists.py`).
TOKEN_FIELD = b"tok"
DEFAULT_PREFIX = "cp"


def _escape(value: str) -> str:
    escaped = value.replace("%", "%25").replace("{", "%7B").replace("}", "%7D")
    # An empty hash tag `{}` would hash the whole key name: give it a content no id maps to.
    return escaped or "%"


def _unescape(value: str) -> str:
    if value == "%":
        return ""
    return value.replace("%7D", "}").replace("%7B", "{").replace("%25", "%")


def check_prefix(prefix: str) -> str:
    """Validate a key prefix: braces would hijack the hash tag, glob characters break SCAN."""
    if not prefix or any(ch in prefix for ch in "{}*?[]\\"):
        raise ValueError(
            f"key_prefix {prefix!r} must be non-empty and contain none of {{ }} * ? [ ] \\; "
            "pick a plain name such as 'cp' or 'switchyard:cp'"
        )
    return prefix


def check_name(kind: str, value: str) -> bytes:
    """`value` as UTF-8, refusing NUL, which separates the parts of fields and members."""
    if "\x00" in value:
        raise ValueError(f"{kind} {value!r} contains a NUL character; remove it")
    return value.encode()


@dataclass(frozen=True, slots=True)
class ThreadKeys:
    """The four keys of one thread (same hash slot)."""

    thread_id: str
    checkpoints: str
    writes: str
    blobs: str
    elements: str

    @property
    def all(self) -> tuple[str, str, str, str]:
        """The keys in the order every Lua script takes them: c, w, b, e."""
        return (self.checkpoints, self.writes, self.blobs, self.elements)


def thread_keys(prefix: str, thread_id: object) -> ThreadKeys:
    """The keys of `thread_id` (any value; it is used as `str(thread_id)`)."""
    tid = str(thread_id)
    base = f"{prefix}:{{{_escape(tid)}}}:"
    return ThreadKeys(tid, base + "c", base + "w", base + "b", base + "e")


def checkpoints_pattern(prefix: str) -> str:
    """SCAN MATCH pattern of every thread's checkpoint key."""
    return f"{prefix}:{{*}}:c"


def thread_of_key(prefix: str, key: bytes | str) -> str | None:
    """The thread id of a checkpoint key found by SCAN, or None if it is not one of ours."""
    text = key.decode() if isinstance(key, bytes) else key
    head = f"{prefix}:{{"
    if not (text.startswith(head) and text.endswith("}:c")):
        return None
    inner = text[len(head) : -3]
    if "{" in inner or "}" in inner:
        return None
    return _unescape(inner)


def run_key(prefix: str, run_id: object) -> str:
    """The run index key: the set of threads where run `run_id` saved checkpoints."""
    return f"{prefix}:run:{{{_escape(str(run_id))}}}"


def version_text(version: object) -> str:
    """A channel version as stored in field names (versions are str, int or float)."""
    return version if isinstance(version, str) else repr(version)


def checkpoint_prefix(ns: str, checkpoint_id: str) -> bytes:
    """Start of a checkpoint's member in `c` and of its writes' members in `w`."""
    return check_name("checkpoint_ns", ns) + SEP + check_name("checkpoint_id", checkpoint_id) + SEP


def blob_field(ns: bytes, channel: str, version: object) -> bytes:
    """Field of one channel value in the `b` hash; `ns` is already encoded."""
    return (
        ns
        + SEP
        + check_name("channel", channel)
        + SEP
        + check_name("version", version_text(version))
    )


def range_end(prefix: bytes) -> bytes:
    """Exclusive upper bound of every member starting with `prefix` (which ends with NUL)."""
    return prefix[:-1] + b"\x01"
