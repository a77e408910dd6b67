"""The strict profile's precision, recall and F1 per smell on labelled fixtures.

``python -m bench.strict_f1`` analyses the files of ``bench/data/strict_corpus/`` with
``profile="strict"``. A ``# ^ <smell-id>`` comment labels the line above it: the strict
profile must report that smell there. Every finding without a label is a false positive and
every label without a finding a false negative, for every smell on every fixture (a smell is
scored on the other smells' fixtures too). Aim (issue 12): F1 >= 0.95 per smell.
"""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass
from pathlib import Path

from tools.test_analysis.catalogue import SMELLS
from tools.test_analysis.parsing import parse_file
from tools.test_analysis.rules import check_file
from tools.test_analysis.schemas import AnalysisConfig

CORPUS = Path(__file__).resolve().parent / "data" / "strict_corpus"
TARGET_F1 = 0.95
_LABEL = re.compile(r"^\s*#\s*\^\s*([a-z-]+)\s*$")
Key = tuple[str, int, str]


@dataclass
class Score:
    """Counts of one smell."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def labels(path: Path, text: str) -> set[Key]:
    """(file, line, smell) of every label: the line above a ``# ^ smell`` comment (labels
    stacked under one line all refer to it)."""
    out: set[Key] = set()
    target = 0
    # lines as Python numbers them (``text`` is read with universal newlines: "\n" ends each);
    # str.splitlines() would also break at "\f", "\v", U+0085, U+2028, ... inside a line
    for number, line in enumerate(text.split("\n"), start=1):
        match = _LABEL.match(line)
        if match:
            out.add((path.name, target, match.group(1)))
        else:
            target = number
    return out


def evaluate(corpus: Path = CORPUS) -> tuple[dict[str, Score], list[str]]:
    """Scores per smell, and a line per disagreement."""
    config = AnalysisConfig(profile="strict")
    expected: set[Key] = set()
    found: set[Key] = set()
    for path in sorted(corpus.glob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        expected |= labels(path, text)
        parsed = parse_file(f"tests/{path.name}", text, cache=None)
        found |= {(path.name, f.line, f.smell) for f in check_file(parsed, config, strict=True)}
    scores: dict[str, Score] = collections.defaultdict(Score)
    problems = []
    for key in found | expected:
        score = scores[key[2]]
        if key in found and key in expected:
            score.tp += 1
        elif key in found:
            score.fp += 1
            problems.append(f"false positive {key[2]} at {key[0]}:{key[1]}")
        else:
            score.fn += 1
            problems.append(f"false negative {key[2]} at {key[0]}:{key[1]}")
    return dict(scores), sorted(problems)


def main() -> None:
    """Print the table."""
    scores, problems = evaluate()
    print(f"strict profile on the labelled fixtures of {CORPUS}:")
    print(
        f"    {'smell':22} {'TP':>4} {'FP':>4} {'FN':>4} {'precision':>9} {'recall':>7} {'F1':>6}"
    )
    total = Score()
    for smell in sorted(SMELLS):
        s = scores.get(smell, Score())
        total.tp, total.fp, total.fn = total.tp + s.tp, total.fp + s.fp, total.fn + s.fn
        flag = (
            "" if s.f1 >= TARGET_F1 and s.tp else "  <- below target" if s.tp else "  (no fixture)"
        )
        print(
            f"    {smell:22} {s.tp:>4} {s.fp:>4} {s.fn:>4} {s.precision:>9.2f} {s.recall:>7.2f} "
            f"{s.f1:>6.2f}{flag}"
        )
    print(
        f"    {'all smells (micro)':22} {total.tp:>4} {total.fp:>4} {total.fn:>4} "
        f"{total.precision:>9.2f} {total.recall:>7.2f} {total.f1:>6.2f}   target F1 >= {TARGET_F1}"
    )
    for problem in problems:
        print("    " + problem)


if __name__ == "__main__":
    main()
