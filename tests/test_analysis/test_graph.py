"""The analysis as nodes of the one graph: each mode, the fan-out, dedupe, parse-once, retry."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from agents.test_analysis.state import STAGES
from tests.support.scripted import ScriptedChatModel
from tests.test_analysis.conftest import Analyse, graph_for
from tests.test_analysis.graphkit import BatchRecorder, synthetic_suite
from tools.test_analysis import parsing as parsing_module
from tools.test_analysis.cache import ParseCache
from tools.test_analysis.pipeline import analyze_files
from tools.test_analysis.schemas import AnalysisConfig

SAMPLE = textwrap.dedent(
    """\
    import time


    def test_waits():
        time.sleep(2)
        assert compute() == 3


    def test_checks_nothing():
        value = compute()


    def test_roulette():
        assert compute() == 3
        assert compute() > 1
    """
)
FILES = [{"path": "tests/test_sample.py", "content": SAMPLE}]


def result_of(state: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = state["analysis_result"]
    assert result["quality"]["passed"], result["quality"]["problems"]
    return result


def test_the_stages_are_nodes_of_the_agent_subgraph() -> None:
    nodes = set(graph_for(None).get_graph(xray=True).nodes)
    assert {f"test_analysis:{stage}" for stage in STAGES} <= nodes
    assert {"ingest", "route", "detect_handoff", "finalize"} <= nodes


async def test_rules_only_through_the_graph_matches_the_core_pipeline(analyse: Analyse) -> None:
    state = await analyse(graph_for(None), FILES, "rules-only")
    result = result_of(state)
    reference = analyze_files(FILES, AnalysisConfig(), cache=ParseCache())
    assert [(i["line"], i["smell"]) for i in result["issues"]] == [
        (i.line, i.smell) for i in reference.issues
    ]
    assert {i["smell"] for i in result["issues"]} >= {  # default profile
        "sleepy-test",
        "unknown-test",
    }
    assert all(i["source"] == "rule" and i["suggestion"] and i["example"] for i in result["issues"])
    assert result["mode"] == "rules-only" and result["metrics"]["llm_calls"] == 0
    stages = state["analysis_stages"]
    assert set(stages[1:3]) == {"parse_files", "check_rules"}  # one step, either order
    assert stages[:1] + stages[3:] == [
        "plan_analysis",
        "synthesize_findings",
        "enhance_findings",
        "assure_quality",
    ]
    assert state["agent_answers"]["test_analysis"]["data"] == result
    assert "tests/test_sample.py:" in state["answer"]


async def test_hybrid_sends_one_review_per_batch_of_five_tests(analyse: Analyse) -> None:
    recorder = BatchRecorder()
    model = ScriptedChatModel(responder=recorder.scripted)
    files = synthetic_suite(23, per_file=10)
    result = result_of(await analyse(graph_for(model), files, "hybrid"))
    assert result["metrics"]["llm_batches"] == 5  # ceil(23 / 5)
    assert sorted(recorder.calls.values()) == [1] * 5
    assert result["metrics"]["llm_calls"] == 5
    sources = result["summary"]["by_source"]
    assert sources["llm"] == 5 and sources["rule"] > 0
    assert result["estimate"]["llm_calls"] == 5 and result["estimate"]["prompt_tokens"] > 0
    assert {"review_with_llm", "check_rules", "parse_files"} <= set(result["metrics"]["stage_ms"])


async def test_llm_only_reports_only_the_models_findings(analyse: Analyse) -> None:
    recorder = BatchRecorder()
    model = ScriptedChatModel(responder=recorder.scripted)
    result = result_of(await analyse(graph_for(model), FILES, "llm-only"))
    assert [i["source"] for i in result["issues"]] == ["llm"]
    assert result["files"][0]["tests"] == 3
    assert "check_rules" not in result["metrics"]["stage_ms"]


async def test_a_finding_both_sides_report_is_kept_once_with_combined_confidence(
    analyse: Analyse,
) -> None:
    def answer(messages: Any, schema: Any) -> dict[str, Any]:
        return {
            "findings": [
                {
                    "file": "tests/test_sample.py",
                    "line": 5,
                    "smell": "sleepy-test",
                    "message": "sleeps",
                    "confidence": 0.8,
                },
                {
                    "file": "tests/test_sample.py",
                    "line": 9,
                    "smell": "unknown-test",
                    "message": "no assert",
                    "confidence": 0.7,
                },
            ]
        }

    model = ScriptedChatModel(responder=answer)
    result = result_of(await analyse(graph_for(model), FILES, "hybrid"))
    keyed = [(i["line"], i["smell"]) for i in result["issues"]]
    assert len(keyed) == len(set(keyed))
    sleepy = next(i for i in result["issues"] if i["smell"] == "sleepy-test")
    rule_alone = next(
        i for i in analyze_files(FILES, cache=ParseCache()).issues if i.smell == "sleepy-test"
    )
    # the rule's finding wins (exact range, context) and the agreement raises its confidence
    assert sleepy["source"] == "rule"
    assert sleepy["confidence"] == pytest.approx(1 - (1 - rule_alone.confidence) * (1 - 0.8))


async def test_findings_below_the_confidence_bar_are_dropped(analyse: Analyse) -> None:
    model = ScriptedChatModel(responder=BatchRecorder(confidence=0.3).scripted)
    result = result_of(
        await analyse(graph_for(model), FILES, "llm-only", config={"llm_min_confidence": 0.5})
    )
    assert result["issues"] == [] and result["metrics"]["llm_findings_dropped"] == 1


async def test_a_malformed_answer_is_retried_once(analyse: Analyse) -> None:
    recorder = BatchRecorder()
    script: list[Any] = [ValueError("not JSON at all"), recorder.scripted]

    def answer(messages: Any, schema: Any) -> Any:
        step = script.pop(0)
        if isinstance(step, Exception):
            raise step
        return step(messages, schema)

    model = ScriptedChatModel(responder=answer)
    result = result_of(await analyse(graph_for(model), FILES, "llm-only"))
    assert len(model.calls) == 2 and result["metrics"]["llm_calls"] == 2
    assert "could not be used" in str(model.calls[1][-1].content)
    assert [i["source"] for i in result["issues"]] == ["llm"]


async def test_a_batch_malformed_twice_is_reported_not_fatal(analyse: Analyse) -> None:
    model = ScriptedChatModel(responder=lambda messages, schema: AIMessage("no idea"))
    result = result_of(await analyse(graph_for(model), FILES, "hybrid"))
    assert result["metrics"]["llm_batches_malformed"] == 1
    assert {i["source"] for i in result["issues"]} == {"rule"}


async def test_an_llm_mode_without_a_model_downgrades_when_allowed(analyse: Analyse) -> None:
    result = result_of(await analyse(graph_for(None), FILES, "hybrid", allow_downgrade=True))
    assert result["mode"] == "rules-only" and result["requested_mode"] == "hybrid"
    assert "needs a chat model" in result["warnings"][0]


async def test_an_llm_mode_without_a_model_fails_clearly_otherwise(analyse: Analyse) -> None:
    with pytest.raises(Exception, match="needs a chat model and none is configured"):
        await analyse(graph_for(None), FILES, "llm-only", allow_downgrade=False)


@pytest.mark.parametrize("mode", ["rules-only", "llm-only", "hybrid"])
async def test_each_file_is_parsed_once_per_analysis(
    analyse: Analyse, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    parsed: list[str] = []
    real = parsing_module._parse_uncached

    def counting(path: str, content: str, patterns: tuple[str, ...]) -> Any:
        parsed.append(path)
        return real(path, content, patterns)

    monkeypatch.setattr(parsing_module, "_parse_uncached", counting)
    graph = graph_for(ScriptedChatModel(responder=BatchRecorder().scripted))
    files = synthetic_suite(40, per_file=5)
    result = result_of(await analyse(graph, files, mode))
    assert sorted(parsed) == sorted(f["path"] for f in files)
    assert result["metrics"]["cache_hits"] == 0

    parsed.clear()  # the same files again: every one is a cache (and rule memo) hit
    again = result_of(await analyse(graph, files, mode))
    assert parsed == []
    assert again["metrics"]["cache_hits"] == len(files)
