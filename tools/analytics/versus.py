""" "X versus Y": both measures, and how they relate, not the first one alone.

"Units built versus planned by plant" asks for units built, units planned and built as a share
of planned. Two things make that hard for the alias matcher: the second measure is often said
elliptically ("planned" for "units planned": it borrows the first one's noun), and the relation
is a third column. `elliptic_metric` completes the elliptic side from the first metric's
aliases; `relation` gives the catalogue metric that is exactly "X per Y" when there is one
(build-plan attainment), else "X as % of Y" for two additive measures of the same unit, and
nothing for two rates (a rate of rates means nothing; both columns stand side by side).
"""

from __future__ import annotations

import re

from tools.analytics.catalogue import METRICS, Metric

#: A "versus" and the word right after it (a blanked span in between breaks the match).
VERSUS = re.compile(
    r"\b(?:vs\.?|versus|against|compared (?:to|with)|relative to)\s(?:the\s)?([a-z&]+)\b"
)
#: A "versus" anywhere (the question compares two things).
ASKS_VERSUS = re.compile(r"\b(?:vs\.?|versus|against|compared (?:to|with)|relative to)\b")
_FILLER = frozenset("the a an of and or to in on at for by per total number".split())


def _words(alias: str) -> set[str]:
    return {w for w in alias.split() if w not in _FILLER}


def elliptic_metric(
    work: str, first: Metric, metrics: tuple[Metric, ...] = METRICS
) -> tuple[Metric, tuple[int, int]] | None:
    """The metric an elliptic "<first> versus <word>" names, and the word's span: a metric of
    the same table with an alias holding <word> and sharing another word with one of `first`'s
    aliases ("units built versus planned" -> "units planned"), among `metrics`."""
    match = VERSUS.search(work)
    if match is None:
        return None
    word = match[1]
    nouns = set().union(*(_words(a) for a in first.aliases))
    best: tuple[int, Metric] | None = None
    for metric in metrics:
        if metric.fact != first.fact or metric.key == first.key:
            continue
        for alias in metric.aliases:
            words = _words(alias)
            if word in words and words - {word} and (words - {word}) <= nouns:
                shared = len(words & nouns)
                if best is None or shared > best[0]:
                    best = (shared, metric)
    return (best[1], match.span(1)) if best else None


def relation(first: Metric, second: Metric, metrics: tuple[Metric, ...] = METRICS) -> Metric | None:
    """The column relating `first` to `second`: the catalogue's own "first per second" metric,
    else first as % of second for two additive measures of one unit, else None."""
    if not (first.additive and second.additive) or first.fact != second.fact:
        return None
    for metric in metrics:
        if metric.numerator == first.numerator and metric.denominator == second.numerator:
            return metric
    if first.unit != second.unit:
        return None
    return Metric(
        key=f"{first.key}_pct_of_{second.key}",
        label=f"{first.label} as % of {second.label.lower()}",
        fact=first.fact,
        numerator=first.numerator,
        denominator=second.numerator,
        unit="percent",
        aliases=(),
        scale=100,
    )
