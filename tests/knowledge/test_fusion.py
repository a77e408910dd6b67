"""The per-query leg weight of hybrid fusion (`tools.knowledge.fusion`): pure functions."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tools.knowledge.fusion import Candidate, FusionParams, fuse, query_lambda, support

PARAMS = FusionParams(agreement_depth=4, agreement_gain=1.0)


def test_support_is_the_share_of_a_legs_best_hits_the_other_leg_found() -> None:
    assert support(["a", "b", "c", "d", "e"], ["d", "a", "x"], depth=4) == 0.5
    assert support([], ["a"], depth=4) == 0.0


def test_the_weight_moves_towards_the_leg_the_other_supports() -> None:
    dense = ["d1", "d2", "d3", "d4", "y1", "y2", "y3", "y4"]
    # the lexical leg retrieved every dense hit (lower down); the dense leg none of its top
    lexical = ["x1", "x2", "x3", "x4", "d1", "d2", "d3", "d4"]
    assert query_lambda(dense, lexical, 0.5, PARAMS) == 0.9  # clipped at max_lambda
    assert query_lambda(lexical, dense, 0.5, PARAMS) == 0.1  # the mirror image
    # agreement (or equal support) keeps the asked weight
    assert query_lambda(dense, dense, 0.5, PARAMS) == 0.5
    # off, a single leg, or an empty leg: the asked weight
    assert query_lambda(dense, lexical, 0.5, FusionParams(adaptive=False)) == 0.5
    assert query_lambda(dense, lexical, 1.0, PARAMS) == 1.0
    assert query_lambda(dense, [], 0.5, PARAMS) == 0.5


def test_a_small_corpus_keeps_the_asked_weight() -> None:
    """A ten-chunk handbook: the dense leg returns every chunk, the lexical leg only the three
    with a query term. "The other leg found it" says nothing there (dense finds everything), so
    both legs are compared over the shorter one's length and the weight stays as asked."""
    dense = ["c4", "c1", "c7", "c2", "c9", "c3", "c5", "c6", "c8", "c0"]
    lexical = ["c2", "c4", "c8"]
    assert query_lambda(dense, lexical, 0.7, PARAMS) == 0.7
    assert query_lambda(lexical, dense, 0.3, PARAMS) == 0.3


@given(
    st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8),
    st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8),
    st.floats(0.0, 1.0),
    st.floats(0.0, 4.0),
)
def test_the_weight_stays_within_its_bounds(
    dense: list[str], lexical: list[str], lam: float, gain: float
) -> None:
    params = FusionParams(agreement_depth=3, agreement_gain=gain)
    got = query_lambda(dense, lexical, lam, params)
    if 0.0 < lam < 1.0 and dense and lexical:
        assert params.min_lambda <= got <= params.max_lambda
    else:
        assert got == lam


def test_fuse_replays_single_legs_and_the_hybrid_head() -> None:
    cands = [
        Candidate("c1", "A", 9.0, 1, 0.20, 3, 0.4),
        Candidate("c2", "B", 5.0, 2, 0.70, 1, 0.5),
        Candidate("c3", "C", None, None, 0.60, 2, 0.0),
    ]
    assert [c.key for c in fuse(cands, PARAMS, mode="lexical")] == ["c1", "c2"]
    assert [c.key for c in fuse(cands, PARAMS, mode="dense")] == ["c2", "c3", "c1"]
    # hybrid: B is strong in both legs and first
    assert fuse(cands, PARAMS)[0].key == "c2"
