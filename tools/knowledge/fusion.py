"""How much each leg counts for one query: the per-query agreement weight of hybrid search.

Weighted RRF and the relevance rerank after it (`tools.knowledge.retriever`) weight the legs
by ``lambda``: 0.5 by default, the same for every query. On corpora where one leg is much
weaker than the other that costs the hybrid its edge: on two held-out corpora it ranked below
its dense leg (nDCG@10 0.492 vs 0.511 with BM25 at 0.381; 0.788 vs 0.805), because a weak
leg's top hits (a rare term matched in an unrelated text) got as much credit as the strong
leg's.

The signal: **cross-leg support**. A leg's support is the share of its top ``agreement_depth``
hits that the OTHER leg retrieved within its first ``agreement_pool`` (50: the depth each leg
has for the agent's searches). A leg whose best
hits the other leg also finds is on topic; one whose best hits the other leg does not see is
matching noise (BM25 on a term the relevant texts do not use; the dense model on a vague
neighbour of a query about a code or a name). The query's weight moves towards the better
supported leg:

    lambda_q = clip(lambda + agreement_gain * (support_dense - support_lexical) / 2,
                    min_lambda, max_lambda)

Equal support (both legs agree, or both are lost) keeps ``lambda``. No per-corpus tuning:
the constants were chosen once on SciFact's train queries (`bench.fusion_tune`), and the
held-out corpora are only measured. ``lambda_q`` is then used for both the RRF and the
relevance rerank. At lambda 0 or 1 there is one leg and nothing is weighted.

Pure functions over ranks (no I/O); `fuse` replays the whole ordering offline for the tuner.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tools.hybrid import weighted_rrf


@dataclass(frozen=True, slots=True)
class FusionParams:
    """The fusion's constants (the defaults are the shipped ones; settings override them)."""

    adaptive: bool = True
    agreement_depth: int = 20
    agreement_gain: float = 2.0
    agreement_pool: int = 50
    min_lambda: float = 0.1
    max_lambda: float = 0.9
    rrf_k: int = 60
    head: int = 15
    dense_floor: float = 0.15
    dense_ceiling: float = 0.65


def support(top: Sequence[str], other: Sequence[str], depth: int) -> float:
    """The share of the first `depth` of `top` that `other` holds (0 when `top` is empty)."""
    head = list(top[:depth])
    if not head:
        return 0.0
    seen = set(other)
    return sum(1 for key in head if key in seen) / len(head)


def query_lambda(
    dense: Sequence[str], lexical: Sequence[str], lam: float, params: FusionParams
) -> float:
    """This query's dense weight from the legs' chunk rankings (see the module docstring).
    Each leg's support is counted in the other leg's first `agreement_pool` hits, so the
    weight does not depend on how deep a caller asked the legs to go."""
    if not params.adaptive or not 0.0 < lam < 1.0 or not dense or not lexical:
        return lam
    depth, pool = params.agreement_depth, params.agreement_pool
    if len(dense) < pool:
        # A dense leg shorter than the pool returned every chunk it could see (a ten-page
        # handbook, a narrow filter), and the lexical leg only those with a query term: "the
        # other leg found it" would then always favour the lexical leg. Compare like with like
        # over the shorter leg's length (both supports become the overlap of the same two sets,
        # and the weight stays as asked). Over a corpus larger than the pool nothing changes.
        pool = min(len(dense), len(lexical))
        depth = min(depth, pool)
    shift = support(dense, lexical[:pool], depth) - support(lexical, dense[:pool], depth)
    moved = lam + params.agreement_gain * shift / 2
    return round(min(params.max_lambda, max(params.min_lambda, moved)), 6)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One chunk with both legs' evidence (a leg's rank/score None: that leg did not find it)."""

    key: str
    document: str
    bm25: float | None
    lexical_rank: int | None
    cosine: float
    dense_rank: int | None
    coverage: float


def dense_relevance(cosine: float, params: FusionParams) -> float:
    """The cosine mapped linearly from [floor, ceiling] to [0, 1]."""
    span = params.dense_ceiling - params.dense_floor
    return min(1.0, max(0.0, (cosine - params.dense_floor) / span))


def fuse(
    candidates: Sequence[Candidate], params: FusionParams, *, mode: str = "hybrid",
    lam: float = 0.5,
) -> list[Candidate]:  # fmt: skip
    """The retriever's ordering replayed offline: one leg alone (``lexical``/``dense``), or
    ``lambda_q``, weighted RRF, the head reordered by relevance, the tail in RRF order."""
    by_key = {c.key: c for c in candidates}
    dense = [c.key for c in sorted(candidates, key=lambda c: c.dense_rank or 0) if c.dense_rank]
    lexical = [
        c.key for c in sorted(candidates, key=lambda c: c.lexical_rank or 0) if c.lexical_rank
    ]
    if mode == "dense":
        return [by_key[k] for k in dense]
    if mode == "lexical":
        return [by_key[k] for k in lexical]
    lam_q = query_lambda(dense, lexical, lam, params)
    fused = [by_key[f.key] for f in weighted_rrf(dense, lexical, lambda_mult=lam_q, k=params.rrf_k)]
    seen: set[str] = set()
    distinct = []
    for c in fused:  # each document's best chunk, as the bench searches
        if c.document not in seen:
            seen.add(c.document)
            distinct.append(c)
    head, tail = distinct[: params.head], distinct[params.head :]

    def relevance(c: Candidate) -> float:
        return lam_q * dense_relevance(c.cosine, params) + (1 - lam_q) * c.coverage

    head.sort(key=lambda c: -round(relevance(c), 6))
    return head + tail
