"""Weighted Reciprocal Rank Fusion of a dense and a lexical ranking.

``rrf(d) = lambda_mult / (k + rank_dense(d)) + (1 - lambda_mult) / (k + rank_lexical(d))``

with 1-based ranks and a leg's term left out when the item is not in that leg's list.
``lambda_mult`` = 1 is pure semantic, 0 pure lexical, and at those extremes the fused order IS
the single leg's order. ``k`` = 60 is the constant of Cormack et al. (2009); Qdrant's built-in
RRF uses k = 2, which lets the top one or two ranks of a single leg dominate.

The fused score is also given normalised to 0..1 by its maximum possible value,
``1 / (k + 1)`` (an item ranked first by every weighted leg), so 1.0 means "top of both lists"
and 0.5 at lambda 0.5 means "top of one list, absent from the other".

Pure functions, no I/O: the store calls them, the tests check the math directly.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

DEFAULT_RRF_K = 60


@dataclass(frozen=True, slots=True)
class Fused(Generic[K]):
    """One fused item: its key, per-leg 1-based ranks (None = absent) and scores."""

    key: K
    rrf: float
    normalised: float
    dense_rank: int | None
    lexical_rank: int | None


def check_lambda(lambda_mult: float) -> float:
    """Validate ``lambda_mult`` (0 = lexical only, 1 = semantic only)."""
    if not 0.0 <= lambda_mult <= 1.0:
        raise ValueError(f"lambda_mult must be between 0 and 1, got {lambda_mult}")
    return float(lambda_mult)


def weighted_rrf(
    dense: Sequence[K],
    lexical: Sequence[K],
    *,
    lambda_mult: float,
    k: int = DEFAULT_RRF_K,
) -> list[Fused[K]]:
    """Fuse two rankings (best first, duplicates ignored after their first position).

    Items are ordered by fused score; ties keep the order of the leg with the larger weight
    (dense on a tie of weights), then the other leg's order, so the result is deterministic.
    A leg with weight 0 contributes nothing, not even candidates: at ``lambda_mult`` = 0 the
    result is exactly the lexical ranking, at 1 exactly the dense ranking.
    """
    lam = check_lambda(lambda_mult)
    if k < 1:
        raise ValueError(f"the RRF constant k must be >= 1, got {k}")
    dense_rank = _ranks(dense) if lam > 0 else {}
    lexical_rank = _ranks(lexical) if lam < 1 else {}
    keys: dict[K, None] = {}
    first, second = (dense_rank, lexical_rank) if lam >= 0.5 else (lexical_rank, dense_rank)
    for key in list(first) + list(second):
        keys.setdefault(key, None)
    best = 1.0 / (k + 1)
    fused: list[Fused[K]] = []
    for key in keys:
        d = dense_rank.get(key)
        lx = lexical_rank.get(key)
        score = (lam / (k + d) if d is not None else 0.0) + (
            (1.0 - lam) / (k + lx) if lx is not None else 0.0
        )
        fused.append(Fused(key, score, score / best, d, lx))
    order = {key: i for i, key in enumerate(keys)}
    fused.sort(key=lambda item: (-item.rrf, order[item.key]))
    return fused


def _ranks(items: Sequence[K]) -> dict[K, int]:
    ranks: dict[K, int] = {}
    for item in items:
        if item not in ranks:
            ranks[item] = len(ranks) + 1
    return ranks
