"""Thread ids as a client sees them, and the keys they are stored under: one per owner.

A thread id is chosen by its client (``POST /threads`` with ``thread_id``, a run with
``if_not_exists='create'``) or by the server (a UUID), and it names the thread only within its
owner (API key): the thread is stored under ``<owner>:<thread id>``, the key its record, its
checkpoints, its runs and its lock use. So two keys can each have a thread ``t-1``, neither
learns that the other's exists, and a predictable id cannot be squatted: whatever another key
did with ``t-1``, ``POST /threads`` with ``t-1`` behaves for this key exactly as for an id never
used.

The translation happens at the edge: a client's id becomes a key where a route reads it
(:func:`thread_key`), and a key becomes the client's id where an answer is built
(:func:`client_thread_id`; :func:`shown` for JSON written by LangGraph, such as stream events).
Client ids cannot contain ``:`` (``SESSION_ID_PATTERN``), so the id is what follows the last
``:`` of a key and one owner's key can never be spelled with another owner's id. A thread of a
synchronous request with no record (a throwaway UUID) has no owner part: no client id maps to
it.
"""

from __future__ import annotations

__all__ = ["SEPARATOR", "client_thread_id", "shown", "thread_key"]

SEPARATOR = ":"


def thread_key(owner: str, thread_id: str) -> str:
    """The stored key of ``owner``'s thread ``thread_id`` (a client id: no ``:``)."""
    return f"{owner}{SEPARATOR}{thread_id}"


def client_thread_id(key: str) -> str:
    """The id a client knows a stored thread key by (a key without an owner part: itself)."""
    return key.rpartition(SEPARATOR)[2]


def shown(text: str, key: str) -> str:
    """JSON ``text`` with every string value equal to ``key`` replaced by its client id.

    Exact JSON string tokens only (``"<key>"``): a key is made of letters, digits and
    ``-_:``, which JSON never escapes, so each occurrence is spelled this way, and a longer
    string that merely contains the key (a message's text) is left as it is.
    """
    quoted = f'"{key}"'
    if quoted not in text:
        return text
    return text.replace(quoted, f'"{client_thread_id(key)}"')
