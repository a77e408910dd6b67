"""Precision of the default profile on real test suites, judged by hand.

First (issue 28), the independent judged set ``bench/data/frozen/smells`` (written by a
labeler who never read the rules; see ``bench/data/frozen/README.md``): for its ``frozen``
split (the accuracy figure, never used for tuning) and its ``calibration`` split (with the
second calibration set, ``calibration2_judgments.jsonl``: click, more-itertools, dateutil, and
the third, ``calibration3a/3b_judgments.jsonl``: boltons, cattrs, structlog, tenacity, deepdiff,
filelock, natsort, soupsieve, tabulate; each round also printed alone), how many
judged findings of each verdict (worth-fixing / noise / wrong) the default profile keeps (a
finding is kept when the default profile reports it at the same file, line and smell), then
the strict profile's F1 on the labelled fixtures (``bench/strict_f1.py``).
``--independent-only`` stops there; ``--calibration-detail`` lists the calibration split's
findings one by one (the frozen split's are only counted, never listed);
``--calibration-only`` leaves the frozen split out (for tuning runs).

``python -m bench.precision [--cache DIR]`` downloads the source distributions of the suites
below (``pip download --no-deps --no-binary :all: <pkg>==<ver>``, cached), runs the rules-only
analysis over each suite's test folder with the default profile, matches the findings with
the hand judgments of ``bench/data/precision_judgments.jsonl`` and prints precision per smell
and overall (TRUE / judged), for the held-out suites the judgments come from.

Judging: a stratified random sample of the held-out suites' default findings (``--draw N``
prints one with the code around each finding), each read in its code and given a verdict:

- TRUE: a maintainer would fix it (the smell is there and the suggested fix helps);
- DISMISS: it matches the catalogue's wording, but a maintainer would not act on it;
- WRONG: the finding is false (the code does not do what the message says).

Rounds. Each round judges a stratified sample of suites the rules were never run on before
the sample was drawn; after judging, the precision classes found there are fixed and those
suites become tuning suites, and the next round takes fresh suites. Round 1: click, httpx,
dateutil, jinja2. Round 2: sqlparse, marshmallow, more-itertools, pyparsing, cachetools.
Round 3: packaging, simplejson, toolz, pluggy, mock, six. Round 4 (``ROUND``, the current
held-out figure): freezegun, responses, wrapt, parso, isort, blinker, humanize. Earlier
rounds are printed as judged (from the data: their verdicts do not change when the rules
do). A current-round judgment the analysis no longer produces is listed as stale: re-judge
before quoting figures.

Over 400 lines because it is one benchmark script: fetching the judged suites, running the profiles
and printing the report are one run that nothing else imports.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import random
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from bench import strict_f1
from tools.test_analysis.pipeline import analyze_files
from tools.test_analysis.schemas import AnalysisConfig, Issue, SourceFile

DATA = Path(__file__).resolve().parent / "data" / "precision_judgments.jsonl"
FROZEN = Path(__file__).resolve().parent / "data" / "frozen" / "smells" / "judgments.jsonl"
#: A second calibration set by another labeler (bench/data/frozen/smells/CALIBRATION2.md):
#: tuning data only; its projects were earlier tuning suites (other versions).
CALIBRATION2 = FROZEN.with_name("calibration2_judgments.jsonl")
#: The third calibration round by two more labelers (CALIBRATION3A.md, CALIBRATION3B.md): projects
#: no earlier round used; tuning data only from the moment it was first measured.
CALIBRATION3 = (
    FROZEN.with_name("calibration3a_judgments.jsonl"),
    FROZEN.with_name("calibration3b_judgments.jsonl"),
)
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "switchyard-bench"
TARGET = 0.80  # issue 12: >= 0.80 of default-profile findings are TRUE
#: Issue 28: the default profile keeps >= 80 % of the worth-fixing findings, <= 20 % of noise.
KEEP_TARGET = 0.80
NOISE_TARGET = 0.20


@dataclass(frozen=True)
class Suite:
    """One sdist's test folder."""

    package: str
    version: str
    tests: str  # folder inside the unpacked sdist
    split: str  # "held-out" (judged) | "tuning" (rules were adjusted on it)

    @property
    def dirname(self) -> str:
        return f"{self.package}-{self.version}"


#: The round whose suites are held out now (earlier rounds' suites became tuning suites).
ROUND = 4

SUITES = (
    Suite("freezegun", "1.5.1", "tests", "held-out"),
    Suite("responses", "0.25.3", "responses/tests", "held-out"),
    Suite("wrapt", "1.16.0", "tests", "held-out"),
    Suite("parso", "0.8.4", "test", "held-out"),
    Suite("isort", "5.13.2", "tests", "held-out"),
    Suite("blinker", "1.8.2", "tests", "held-out"),
    Suite("humanize", "4.10.0", "tests", "held-out"),
    # round 3's held-out suites: judged on the rules of that round, then used for tuning
    Suite("packaging", "24.1", "tests", "round-3"),
    Suite("simplejson", "3.19.3", "simplejson/tests", "round-3"),
    Suite("toolz", "0.12.1", "toolz/tests", "round-3"),
    Suite("pluggy", "1.5.0", "testing", "round-3"),
    Suite("mock", "5.1.0", "mock/tests", "round-3"),
    Suite("six", "1.16.0", ".", "round-3"),
    # round 2's held-out suites: judged on the rules of that round, then used for tuning
    Suite("sqlparse", "0.5.1", "tests", "round-2"),
    Suite("marshmallow", "3.22.0", "tests", "round-2"),
    Suite("more-itertools", "10.5.0", "tests", "round-2"),
    Suite("pyparsing", "3.1.4", "tests", "round-2"),
    Suite("cachetools", "5.5.0", "tests", "round-2"),
    # round 1's held-out suites: judged on the rules of that round, then used for tuning
    Suite("click", "8.1.7", "tests", "round-1"),
    Suite("httpx", "0.27.2", "tests", "round-1"),
    Suite("python-dateutil", "2.9.0.post0", "tests", "round-1"),
    Suite("jinja2", "3.1.4", "tests", "round-1"),
    Suite("tornado", "6.4.1", "tornado/test", "tuning"),
    Suite("attrs", "24.2.0", "tests", "tuning"),
    Suite("requests", "2.32.3", "tests", "tuning"),
    Suite("flask", "3.0.3", "tests", "tuning"),
    Suite("werkzeug", "3.0.4", "tests", "tuning"),
)


#: The independent judged set of issue 28 (bench/data/frozen/README.md): its projects, each
#: sdist's test folder, and the split (``frozen`` is never used for tuning).
INDEPENDENT = (
    Suite("arrow", "1.3.0", "tests", "frozen"),
    Suite("markdown", "3.7", "tests", "frozen"),
    Suite("werkzeug", "3.1.3", "tests", "frozen"),
    Suite("bleach", "6.2.0", "tests", "frozen"),
    Suite("itsdangerous", "2.2.0", "tests", "frozen"),
    Suite("tomlkit", "0.13.2", "tests", "calibration"),
    Suite("jsonschema", "4.23.0", "jsonschema/tests", "calibration"),
    Suite("click", "8.5.1", "tests", "calibration"),
    Suite("more-itertools", "11.2.1", "tests", "calibration"),
    Suite("python-dateutil", "4.0.0", "tests", "calibration"),
    # round 3 (CALIBRATION3A.md): cattrs' three PEP 695 files do not parse on 3.11; they give
    # a syntax-error finding each, as they did for the labeler
    Suite("boltons", "26.2.0", "tests", "calibration"),
    Suite("cattrs", "26.2.1", "tests", "calibration"),
    Suite("structlog", "26.1.0", "tests", "calibration"),
    Suite("tenacity", "9.2.1", "tests", "calibration"),
    # round 3 (CALIBRATION3B.md): deepdiff's root conftest.py is outside tests/ and was not
    # analysed (only files under the test folder are)
    Suite("deepdiff", "9.1.0", "tests", "calibration"),
    Suite("filelock", "4.2.9", "tests", "calibration"),
    Suite("natsort", "8.4.0", "tests", "calibration"),
    Suite("soupsieve", "4.1.3", "tests", "calibration"),
    Suite("tabulate", "0.10.0", "test", "calibration"),
)
#: Calibration rounds, printed apart (a round is unseen data for the rules until it is first
#: measured; round 1's rows, in ``judgments.jsonl``, carry no round).
CALIBRATION_ROUNDS = {
    1: "tomlkit, jsonschema",
    2: "click, more-itertools, dateutil",
    3: "boltons, cattrs, structlog, tenacity, deepdiff, filelock, natsort, soupsieve, tabulate",
}
VERDICTS = ("worth-fixing", "noise", "wrong")


def fetch(suite: Suite, cache: Path) -> Path:
    """The unpacked sdist (downloaded and unpacked on first use)."""
    root = cache / suite.dirname
    if root.is_dir():
        return root
    cache.mkdir(parents=True, exist_ok=True)
    found = glob.glob(str(cache / f"{suite.package}-{suite.version}.tar.gz")) or glob.glob(
        str(cache / f"{suite.package.replace('-', '_')}-{suite.version}.tar.gz")
    )
    if not found:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"{suite.package}=={suite.version}",
                "-d",
                str(cache),
            ],
            check=True,
        )
        found = glob.glob(str(cache / f"*{suite.version}.tar.gz"))
        found = [f for f in found if Path(f).name.lower().startswith(suite.package[:4].lower())]
    with tarfile.open(found[0]) as archive:
        archive.extractall(cache, filter="data")
    unpacked = cache / Path(found[0]).name.removesuffix(".tar.gz")
    if unpacked != root:
        unpacked.rename(root)
    return root


def analyse(suite: Suite, root: Path, profile: str = "default") -> tuple[list[Issue], int]:
    """Findings of the suite's test folder (paths relative to the sdist root), and lines."""
    paths = sorted(glob.glob(str(root / suite.tests / "**" / "*.py"), recursive=True))
    paths = [p for p in paths if "/build/" not in p and ".egg-info" not in p]
    files = [
        # bytes: a file that is not UTF-8 (parso ships some) is an encoding-error finding
        SourceFile(path=os.path.relpath(p, root), content=Path(p).read_bytes())
        for p in paths
    ]
    result = analyze_files(
        files,
        AnalysisConfig(profile=profile, max_findings=None),
        cache=None,
        max_files=len(files) + 1,
        max_total_bytes=1 << 30,
    )
    return list(result.issues), result.metrics.lines_analyzed


def independent_files(suite: Suite, root: Path) -> list[SourceFile]:
    """The files the independent set was judged on: every ``test_*.py``, ``*_test.py`` and
    ``conftest.py`` under the test folder, with its path inside the sdist."""
    paths = sorted(glob.glob(str(root / suite.tests / "**" / "*.py"), recursive=True))
    names = [
        p
        for p in paths
        if (lambda n: n.startswith("test_") or n.endswith("_test.py") or n == "conftest.py")(
            os.path.basename(p)
        )
    ]
    return [SourceFile(path=os.path.relpath(p, root), content=Path(p).read_bytes()) for p in names]


def kept_keys(files: list[SourceFile], profile: str) -> set[tuple[str, int, str]]:
    """(file, line, smell) of every rules-only finding of ``profile``."""
    result = analyze_files(
        files,
        AnalysisConfig(profile=profile, max_findings=None),
        cache=None,
        max_files=len(files) + 1,
        max_total_bytes=1 << 30,
    )
    return {(i.file, i.line, i.smell) for i in result.issues}


def independent_report(
    cache: Path, *, detail: bool = False, calibration_only: bool = False
) -> dict[str, dict[str, float]]:
    """Print, per split of the independent judged set, how many judged findings of each
    verdict the default profile keeps (reports at the same file, line and smell); returns
    the kept fractions per split and verdict. ``detail`` lists the calibration split's
    findings one by one (never the frozen split's: it is not read while tuning);
    ``calibration_only`` leaves the frozen split out altogether (not even analysed), for
    tuning runs."""
    judgments = load_judgments(FROZEN) + load_judgments(CALIBRATION2)
    for path in CALIBRATION3:
        judgments += load_judgments(path)
    if calibration_only:
        judgments = [j for j in judgments if j["split"] == "calibration"]
    default: dict[str, set[tuple[str, int, str]]] = {}
    strict: dict[str, set[tuple[str, int, str]]] = {}
    for suite in INDEPENDENT:
        if calibration_only and suite.split != "calibration":
            continue
        files = independent_files(suite, fetch(suite, cache))
        default[suite.package] = kept_keys(files, "default")
        strict[suite.package] = kept_keys(files, "strict")
    out: dict[str, dict[str, float]] = {}
    # werkzeug's frozen findings come from a suite the rules were tuned on before (another
    # version, in SUITES): the split is also shown without the projects any round used.
    used = {suite.package for suite in SUITES}
    calibration = [j for j in judgments if j["split"] == "calibration"]
    splits: list[tuple[str, str, list[dict[str, str]]]] = (
        []
        if calibration_only
        else [
            ("frozen", "FROZEN (accuracy)", [j for j in judgments if j["split"] == "frozen"]),
            (
                "frozen, unseen projects",
                "FROZEN, never-used projects",
                [j for j in judgments if j["split"] == "frozen" and j["project"] not in used],
            ),
        ]
    )
    for number, names in CALIBRATION_ROUNDS.items():
        rows = [j for j in calibration if _round(j) == number]
        splits.append((f"calibration {number}", f"calibration round {number} ({names})", rows))
    splits.append(("calibration", "calibration, all rounds (tuned on)", calibration))
    print("independent judged set (bench/data/frozen/smells), default profile:")
    for split, label, rows in splits:
        kept: collections.Counter[str] = collections.Counter()
        total: collections.Counter[str] = collections.Counter()
        moved: collections.Counter[str] = collections.Counter()
        for j in rows:
            key = (j["file"], int(j["line"]), j["smell"])
            total[j["verdict"]] += 1
            kept[j["verdict"]] += key in default[j["project"]]
            if key not in strict[j["project"]]:
                moved[j["verdict"]] += 1
            if detail and split == "calibration":
                mark = "KEPT" if key in default[j["project"]] else "    "
                print(f"      {mark} {j['verdict']:12} r{_round(j)} {j['project']} "
                      f"{j['file']}:{j['line']} {j['smell']}: {j['reason']}")  # fmt: skip
        out[split] = {v: kept[v] / total[v] if total[v] else float("nan") for v in VERDICTS}
        figures = ", ".join(
            f"{v} kept {kept[v]} of {total[v]} ({out[split][v]:.0%})" for v in VERDICTS
        )
        if split.startswith("calibration"):
            print(f"    {label}:\n    {'':28} {figures}")
        else:
            print(f"    {label:28} {figures}")
        if moved:
            # a wrong finding the strict profile no longer makes is a fix; the others moved
            # (or went) with a rule change and need re-matching by hand before quoting figures
            gone = ", ".join(f"{v} {moved[v]}" for v in VERDICTS if moved[v])
            print(
                f"    {'':28} no longer reported by the strict profile at the judged line: "
                f"{gone} (a wrong one gone is a fix; re-match any other by hand)"
            )
    print(f"    target: worth-fixing kept >= {KEEP_TARGET:.0%}, noise kept <= {NOISE_TARGET:.0%}")
    return out


def _round(judgment: dict[str, str]) -> int:
    """A calibration judgment's round (round 1's rows carry none)."""
    return int(judgment.get("round", 1))


def strict_f1_report() -> float:
    """Print the strict profile's micro F1 on the labelled fixtures; returns it."""
    scores, _ = strict_f1.evaluate()
    total = strict_f1.Score()
    for s in scores.values():
        total.tp, total.fp, total.fn = total.tp + s.tp, total.fp + s.fp, total.fn + s.fn
    worst = min(scores.items(), key=lambda kv: kv[1].f1)
    print(
        f"strict profile on the labelled fixtures (bench/strict_f1.py): micro F1 "
        f"{total.f1:.3f}, lowest per smell {worst[0]} {worst[1].f1:.2f} "
        f"(target >= {strict_f1.TARGET_F1})"
    )
    return total.f1


def load_judgments(path: Path = DATA) -> list[dict[str, str]]:
    """The committed judgments (one JSON object a line)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().split("\n") if line.strip()]


def draw(findings: dict[str, list[Issue]], n: int, seed: int) -> list[tuple[str, Issue]]:
    """A stratified random sample: every smell gets a share proportional to its volume (at
    least two where it has two), drawn at random within the smell."""
    by_smell: dict[str, list[tuple[str, Issue]]] = collections.defaultdict(list)
    for package, issues in findings.items():
        for issue in issues:
            by_smell[issue.smell].append((package, issue))
    total = sum(len(v) for v in by_smell.values())
    rng = random.Random(seed)
    sample: list[tuple[str, Issue]] = []
    for smell in sorted(by_smell):
        items = by_smell[smell]
        share = max(min(2, len(items)), round(n * len(items) / total))
        sample.extend(rng.sample(items, min(share, len(items))))
    return sample


def show(sample: list[tuple[str, Issue]], roots: dict[str, Path]) -> None:
    """Print each sampled finding in its code, and a JSON line to fill in."""
    for package, issue in sample:
        # numbered as Python numbers them: not splitlines(), which breaks at "\f", U+2028, ...
        lines = (roots[package] / issue.file).read_text(encoding="utf-8").split("\n")
        print(f"=== {package} {issue.file}:{issue.line}-{issue.end_line} [{issue.smell}]")
        print(f"    {issue.message}\n    FIX: {issue.suggestion}")
        lo, hi = max(issue.line - 4, 0), min(issue.end_line + 2, issue.line + 30)
        for k in range(lo, min(hi, len(lines))):
            print(f"{k + 1:6} {lines[k]}")
        print(
            json.dumps(
                {
                    "package": package,
                    "file": issue.file,
                    "line": issue.line,
                    "smell": issue.smell,
                    "verdict": "",
                    "reason": "",
                }
            )
        )


def report_earlier_rounds(judgments: list[dict[str, str]]) -> None:
    """Earlier rounds as judged (counts from the data)."""
    for number in range(1, ROUND):
        rows = [j for j in judgments if int(j.get("round", 1)) == number]
        if not rows:
            continue
        c = collections.Counter(j["verdict"] for j in rows)
        rules = {j.get("rules", "?") for j in rows}
        print(
            f"round {number} (held-out then, rules {', '.join(sorted(rules))}): {len(rows)} "
            f"judged, {c['TRUE']} TRUE, {c['DISMISS']} DISMISS, {c['WRONG']} WRONG = "
            f"{c['TRUE'] / len(rows):.2f} TRUE"
        )


def report(findings: dict[str, list[Issue]], judgments: list[dict[str, str]]) -> float:
    """Print precision per smell and overall; returns the sample precision."""
    present = {(p, i.file, i.line, i.smell) for p, issues in findings.items() for i in issues}
    volume = collections.Counter(i.smell for issues in findings.values() for i in issues)
    per: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    stale = []
    for j in judgments:
        key = (j["package"], j["file"], int(j["line"]), j["smell"])
        if key not in present:
            stale.append(j)
            continue
        per[j["smell"]][j["verdict"]] += 1
    total = collections.Counter[str]()
    print(f"    {'smell':22} {'findings':>8} {'judged':>6} {'TRUE':>5} {'DISMISS':>7} "
          f"{'WRONG':>5} {'precision':>9}")  # fmt: skip
    weighted = 0.0
    for smell in sorted(volume, key=lambda s: -volume[s]):
        c = per.get(smell, collections.Counter())
        judged = sum(c.values())
        total.update(c)
        precision = c["TRUE"] / judged if judged else float("nan")
        if judged:
            weighted += precision * volume[smell]
        print(
            f"    {smell:22} {volume[smell]:>8} {judged:>6} {c['TRUE']:>5} {c['DISMISS']:>7} "
            f"{c['WRONG']:>5} {precision:>9.2f}"
        )
    judged = sum(total.values())
    sample_precision = total["TRUE"] / judged if judged else float("nan")
    covered = sum(v for s, v in volume.items() if per.get(s))
    print(
        f"    {'overall (sample)':22} {sum(volume.values()):>8} {judged:>6} {total['TRUE']:>5} "
        f"{total['DISMISS']:>7} {total['WRONG']:>5} {sample_precision:>9.2f}"
    )
    if covered:
        print(
            f"    overall weighted by each smell's volume: {weighted / covered:.2f} "
            f"(target >= {TARGET:.2f})"
        )
    everything = collections.Counter(j["verdict"] for j in judgments)
    if judgments:
        rules = ", ".join(sorted({j.get("rules", "?") for j in judgments}))
        print(
            f"    as judged (held-out, rules {rules}): {everything['TRUE']} TRUE of "
            f"{len(judgments)} = {everything['TRUE'] / len(judgments):.2f}; the rows above "
            "count only the judged findings the current rules still report"
        )
    if stale:
        gone = collections.Counter(j["verdict"] for j in stale)
        print(
            f"    {len(stale)} judged finding(s) no longer reported (rules changed after "
            f"judging: {dict(gone)}); quote the as-judged figure, or re-judge"
        )
    return sample_precision


def main(argv: list[str] | None = None) -> None:
    """Run the bench (or draw a sample to judge)."""
    parser = argparse.ArgumentParser(prog="python -m bench.precision", description=__doc__)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="sdist cache dir")
    parser.add_argument("--draw", type=int, default=0, help="print a sample of N to judge")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument(
        "--independent-only",
        action="store_true",
        help="print only the independent judged set and the strict F1 (no round suites)",
    )
    parser.add_argument(
        "--calibration-detail",
        action="store_true",
        help="list the calibration split's judged findings (never the frozen split's)",
    )
    parser.add_argument(
        "--calibration-only",
        action="store_true",
        help="leave the frozen split out (tuning runs: it is read only before and after)",
    )
    args = parser.parse_args(argv)
    if args.calibration_only:
        args.independent_only = True
    if not args.draw:
        independent_report(
            args.cache,
            detail=args.calibration_detail,
            calibration_only=args.calibration_only,
        )
        strict_f1_report()
        if args.independent_only:
            return
    held_out = [s for s in SUITES if s.split == "held-out"]
    roots = {s.package: fetch(s, args.cache) for s in SUITES}
    findings: dict[str, list[Issue]] = {}
    print("default-profile findings per suite (strict in brackets):")
    for suite in SUITES:
        issues, lines = analyse(suite, roots[suite.package])
        strict, _ = analyse(suite, roots[suite.package], "strict")  # research parity
        print(
            f"    {suite.split:8} {suite.dirname:28} {lines:>7,} lines {len(issues):>5} "
            f"findings ({len(strict):,}) = {len(issues) / max(lines, 1) * 1000:.1f} per 1k lines"
        )
        if suite.split == "held-out":
            findings[suite.package] = issues
    if args.draw:
        show(draw(findings, args.draw, args.seed), roots)
        return
    judgments = load_judgments()
    report_earlier_rounds(judgments)
    print(
        f"round {ROUND}: precision of the default profile on the held-out suites "
        f"({len(held_out)}), judged:"
    )
    report(findings, [j for j in judgments if int(j.get("round", 1)) == ROUND])


if __name__ == "__main__":
    main()
