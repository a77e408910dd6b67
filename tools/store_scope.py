"""How an owner's namespaces live in LangGraph's one shared store.

Every namespace is stored under the owner's id as its first label: the namespace
``("notes", "work")`` of owner ``key-3f…`` is stored as ``("key-3f…", "notes", "work")``. The
store API adds that label on the way in and strips it on the way out, so an owner sees and
reaches only its own namespaces; the agents write the same way (:func:`owned`), so what they
keep about a user is that user's through the API too. Owner ids never contain a dot (they are
``key-<hex>`` or ``anonymous``), so the label is one namespace label.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["owned", "shown"]


def owned(owner: str, namespace: Sequence[str]) -> tuple[str, ...]:
    """The stored namespace of ``owner``'s ``namespace``."""
    if not owner or "." in owner:
        raise ValueError(f"an owner id is a namespace label (no dots, not empty): {owner!r}")
    return (owner, *namespace)


def shown(owner: str, stored: Sequence[str]) -> list[str]:
    """``owner``'s view of a stored namespace (its first label, the owner, removed)."""
    if not stored or stored[0] != owner:
        raise ValueError(f"namespace {tuple(stored)!r} is not owned by {owner!r}")
    return list(stored[1:])
