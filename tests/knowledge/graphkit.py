"""Running the knowledge agent through the real Switchyard graph, with a scripted model or none.

`ReflectionScript` answers each structured call of the agent by its schema, so the tests decide
what the "model" thinks of the documents and the answer, per grading round, and count the calls.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.messages import BaseMessage, HumanMessage

from agents.knowledge.llm import AnswerGrade, DocumentRelevance, QueryClassification, QueryRewrite
from config import Settings
from tests.support.graphs import BoundGraph, agent_services, bound_graph, run_with_agent_state
from tests.support.scripted import ScriptedChatModel
from tools.knowledge.store import KnowledgeStore

CATS_ANSWER = "Domestic cats sleep between twelve and sixteen hours a day [1]."
_DOCUMENT_TITLE = re.compile(r'Document "(.*)":')


@dataclass
class ReflectionScript:
    """The scripted model's judgement.

    - ``relevant(rewrites, title)``: whether a document is relevant in the grading round after
      ``rewrites`` query rewrites;
    - ``answer_passes(n)``: whether the n-th answer grade (1-based) passes;
    - ``rewrite(n)``: the n-th rewritten query (1-based);
    - ``counts``: calls per schema name (``answer`` for the plain answer call).
    """

    relevant: Callable[[int, str], bool] = lambda rewrites, title: True
    answer_passes: Callable[[int], bool] = lambda n: True
    rewrite: Callable[[int], str] = lambda n: f"cats sleeping hours per day (rewrite {n})"
    answer: str = CATS_ANSWER
    counts: Counter[str] = field(default_factory=Counter)
    last: ScriptedChatModel | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def model(self) -> ScriptedChatModel:
        """A model answering from this script (kept as ``last``, to read its prompts)."""
        self.last = ScriptedChatModel(responder=self.respond)
        return self.last

    def prompts(self) -> list[str]:
        """The last message of every call the latest model got."""
        assert self.last is not None
        return [str(call[-1].content) for call in self.last.calls]

    def respond(self, messages: list[BaseMessage], schema: Any) -> Any:
        name = getattr(schema, "__name__", "answer") if schema is not None else "answer"
        with self._lock:  # document grades run concurrently
            self.counts[name] += 1
            n = self.counts[name]
            rewrites = self.counts["QueryRewrite"]
        if schema is QueryClassification:
            return QueryClassification(query_type="semantic", lambda_mult=0.7, reason="prose")
        if schema is DocumentRelevance:
            match = _DOCUMENT_TITLE.search(str(messages[-1].content))
            ok = self.relevant(rewrites, match.group(1) if match else "")
            return DocumentRelevance(relevant=ok, score=0.9 if ok else 0.1, reason="scripted")
        if schema is QueryRewrite:
            return QueryRewrite(query=self.rewrite(n), reason="scripted")
        if schema is AnswerGrade:
            ok = self.answer_passes(n)
            problems = [] if ok else ["claims something the sources do not say"]
            return AnswerGrade(grounded=ok, answers_question=ok, score=0.9 if ok else 0.2,
                               problems=problems)  # fmt: skip
        return self.answer


def knowledge_graph(
    settings: Settings, store: KnowledgeStore, embeddings: Embeddings, model: Any = None
) -> BoundGraph:
    """The full Switchyard graph (no checkpointer) on `store`, answering with `model`."""
    services = agent_services(settings, model, embeddings=embeddings, resources=[store])
    return bound_graph(services)


async def ask(graph: BoundGraph, question: str, **options: Any) -> dict[str, Any]:
    """One turn addressed to the knowledge agent; ``options`` are per-run overrides.

    Returns the root state merged over the agent's own final state (its working fields:
    ``documents``, ``knowledge_trace``, ...), which the root state does not hold."""
    return await run_with_agent_state(
        graph,
        {"messages": [HumanMessage(question)], "target_agent": "knowledge"},
        "knowledge",
        **options,
    )


def stages(state: dict[str, Any]) -> list[str]:
    """The knowledge stages that ran, in order (a retried stage once per run)."""
    return [entry["stage"] for entry in state["knowledge_trace"]]


def knowledge_data(state: dict[str, Any]) -> dict[str, Any]:
    """What the API returns under ``data.knowledge``."""
    data: dict[str, Any] = state["agent_answers"]["knowledge"]["data"]
    return data
