"""The parse cache: hits, misses, TTL with an injected clock, LRU bound, rule memo."""

from __future__ import annotations

import threading

import pytest

from tools.test_analysis.cache import ParseCache
from tools.test_analysis.parsing import ParseStats, parse_file
from tools.test_analysis.rules import check_file
from tools.test_analysis.schemas import AnalysisConfig

SRC = "def test_a():\n    result = run()\n"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_hit_on_same_path_and_content_miss_on_change() -> None:
    cache = ParseCache()
    stats = ParseStats()
    parse_file("tests/test_a.py", SRC, cache=cache, stats=stats)
    parse_file("tests/test_a.py", SRC, cache=cache, stats=stats)
    assert (stats.hits, stats.misses) == (1, 1)
    parse_file("tests/test_a.py", SRC + "\n# edited\n", cache=cache, stats=stats)
    parse_file("tests/test_b.py", SRC, cache=cache, stats=stats)  # same content, other path
    assert (stats.hits, stats.misses) == (1, 3)
    assert cache.stats().hits == 1 and cache.stats().size == 3


def test_cached_copy_holds_no_ast_but_rules_still_work() -> None:
    cache = ParseCache()
    fresh = parse_file("tests/test_a.py", SRC, cache=cache)
    assert fresh.syntax is not None
    cached = parse_file("tests/test_a.py", SRC, cache=cache)
    assert cached.syntax is None  # the cache never keeps ASTs alive
    assert [t.name for t in cached.tests] == ["test_a"]
    assert [f.smell for f in check_file(cached)] == ["unknown-test"]


def test_rule_findings_are_memoised_per_config() -> None:
    cache = ParseCache()
    first = parse_file("tests/test_a.py", SRC, cache=cache)
    findings = check_file(first)
    again = parse_file("tests/test_a.py", SRC, cache=cache)
    assert check_file(again) == findings
    assert again.rule_memo is first.rule_memo
    other = AnalysisConfig(ignore=("unknown-test",))
    assert check_file(again, other) == []
    assert len(first.rule_memo) == 2


def test_ttl_expiry_with_injected_clock() -> None:
    clock = FakeClock()
    cache = ParseCache(ttl=300, clock=clock)
    cache.put("k", "v")
    clock.now += 299.9
    assert cache.get("k") == "v"
    clock.now += 0.2
    assert cache.get("k") is None
    assert cache.stats().expirations == 1
    assert cache.stats().misses == 1


def test_lru_bound_evicts_least_recently_used() -> None:
    cache = ParseCache(maxsize=3)
    for key in "abc":
        cache.put(key, key)
    assert cache.get("a") == "a"  # a is now the most recent
    cache.put("d", "d")
    assert cache.get("b") is None  # b was the least recently used
    assert {k for k in "acd" if cache.get(k)} == {"a", "c", "d"}
    assert len(cache) == 3 and cache.stats().evictions == 1


def test_expired_entries_are_purged_before_evicting_live_ones() -> None:
    clock = FakeClock()
    cache = ParseCache(maxsize=2, ttl=10, clock=clock)
    cache.put("old", 1)
    clock.now += 5
    cache.put("live", 2)
    clock.now += 6  # "old" expired, "live" has 4 s left
    cache.put("new", 3)
    assert cache.get("live") == 2 and cache.get("new") == 3
    assert cache.stats().evictions == 0 and cache.stats().expirations == 1


def test_default_cache_is_1000_entries_five_minutes() -> None:
    cache = ParseCache()
    assert (cache.maxsize, cache.ttl) == (1000, 300.0)


def test_invalid_cache_settings() -> None:
    with pytest.raises(ValueError, match="maxsize"):
        ParseCache(maxsize=0)
    with pytest.raises(ValueError, match="ttl"):
        ParseCache(ttl=0)


def test_concurrent_use_is_safe() -> None:
    cache = ParseCache(maxsize=50)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(200):
                src = f"def test_{i % 60}():\n    assert {n}\n"
                parsed = parse_file(f"tests/test_{i % 60}.py", src, cache=cache)
                check_file(parsed)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(cache) <= 50
