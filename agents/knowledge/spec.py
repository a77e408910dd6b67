"""The knowledge agent's registration: its subgraph of six stages behind quality gates.

    START -> evaluate_query -> retrieve -> grade_documents -> generate_answer -> grade_response
                                 ^               |                                   |
                                 +- transform_query <- (failed, retries left) -------+
                                                                                  -> END

The routing functions are in `agents.knowledge.edges`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.graph import END, START, StateGraph

from agents.contract.context import AgentServices
from agents.contract.quality import gated
from agents.contract.spec import AgentCard, AgentGraph, AgentSpec
from agents.contract.state import AgentInput, AgentOutput
from agents.knowledge.answering import generate_answer, grade_response_node
from agents.knowledge.data_answer import answer_from_documents
from agents.knowledge.edges import (
    after_answer,
    after_document_grading,
    after_response_grading,
    after_retrieve,
)
from agents.knowledge.nodes import (
    evaluate_query_node,
    grade_documents_node,
    retrieve,
    transform_query,
)
from agents.knowledge.probe import knowledge_probe
from agents.knowledge.state import AGENT, STAGES, KnowledgeOptions, KnowledgeState

# --- quality-gate checks -------------------------------------------------------------------------


def _has_question(state: Mapping[str, Any]) -> str | None:
    messages = state.get("messages")
    if not isinstance(messages, list) or not any(m.type == "human" for m in messages):
        return "the state has no user message to answer"
    return None


def _has_query(state: Mapping[str, Any]) -> str | None:
    if not str(state.get("query") or "").strip():
        return "there is no query to search for"
    return None if state.get("knowledge_options") else "evaluate_query has not run"


def _lambda_in_range(update: Mapping[str, Any]) -> str | None:
    value = update.get("lambda_mult")
    return None if isinstance(value, float) and 0.0 <= value <= 1.0 else "lambda_mult not in 0..1"


def _hits_listed(update: Mapping[str, Any]) -> str | None:
    return None if isinstance(update.get("documents"), list) else "documents is not a list"


def _graded(update: Mapping[str, Any]) -> str | None:
    grades = update.get("document_grades")
    return None if isinstance(grades, dict) and "passed" in grades else "no document verdict"


def _retry_within_bound(state: Mapping[str, Any]) -> str | None:
    options = state.get("knowledge_options") or {}
    if int(state.get("iteration_count", 0)) >= int(options.get("max_iterations", 0)):
        return "no retries left (REFLECTION_MAX_ITERATIONS)"
    return None


def _new_query(update: Mapping[str, Any]) -> str | None:
    return None if str(update.get("query") or "").strip() else "the rewritten query is empty"


def _answered(update: Mapping[str, Any]) -> str | None:
    return None if AGENT in (update.get("agent_answers") or {}) else "no answer written"


def _response_graded(update: Mapping[str, Any]) -> str | None:
    grade = update.get("response_grade")
    if not isinstance(grade, dict) or "passed" not in grade:
        return "no response verdict"
    return _answered(update)


# --- registration --------------------------------------------------------------------------------


def build(peers: Sequence[AgentCard] = (), services: AgentServices | None = None) -> AgentGraph:
    """The agent's subgraph: the six stages, each behind the quality gate, and the loop."""
    nodes = {
        "evaluate_query": gated("evaluate_query", evaluate_query_node,
                                check_input=_has_question, check_output=_lambda_in_range),
        "retrieve": gated("retrieve", retrieve, check_input=_has_query, check_output=_hits_listed),
        "grade_documents": gated("grade_documents", grade_documents_node, check_output=_graded),
        "transform_query": gated("transform_query", transform_query,
                                 check_input=_retry_within_bound, check_output=_new_query),
        "generate_answer": gated("generate_answer", generate_answer, check_output=_answered),
        "grade_response": gated("grade_response", grade_response_node,
                                check_output=_response_graded),
    }  # fmt: skip
    builder = StateGraph(KnowledgeState, input_schema=AgentInput, output_schema=AgentOutput)
    for name in STAGES:
        builder.add_node(name, nodes[name])
    builder.add_edge(START, "evaluate_query")
    builder.add_edge("evaluate_query", "retrieve")
    builder.add_conditional_edges(
        "retrieve", after_retrieve, ["grade_documents", "generate_answer"]
    )
    builder.add_conditional_edges(
        "grade_documents", after_document_grading, ["generate_answer", "transform_query"]
    )
    builder.add_edge("transform_query", "retrieve")
    builder.add_conditional_edges("generate_answer", after_answer, ["grade_response", END])
    builder.add_conditional_edges(
        "grade_response", after_response_grading, ["transform_query", END]
    )
    return builder.compile(name=AGENT)


def knowledge_agent() -> AgentSpec:
    """The knowledge agent's registration."""
    return AgentSpec(
        name=AGENT,
        description="Answers questions from the user's own documents (ingested or uploaded "
        "files: manuals, notes, policies, runbooks, papers) by searching the knowledge base, "
        "and cites the documents it used.",
        keywords=(
            "knowledge base",
            "documents",
            "document",
            "docs",
            "my documents",
            "my docs",
            "our docs",
            "our documents",
            "say about",
            "documentation",
            "according to",
            "ingested",
            "uploaded",
            "handbook",
            "manual",
            "runbook",
            "policy",
            "wiki",
            "notes",
            "cite",
            "citations",
            "sources",
        ),
        examples=(
            "What do my documents say about rotating API keys?",
            "According to the uploaded handbook, how many vacation days do I get?",
            "Search the knowledge base for our database backup policy.",
            "Which document explains how to restore a backup? Cite your sources.",
            "Summarise what the ingested docs say about error E1042.",
        ),
        build=build,
        answer_nodes=frozenset({"generate_answer"}),
        options=KnowledgeOptions,
        probe=knowledge_probe,
        answer_from_data=answer_from_documents,
    )
