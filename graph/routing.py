"""Route decisions: keyword fast path → embedding similarity → LLM → default agent.

1. Keywords: an agent with 2+ distinct keyword hits wins when it is clearly ahead (at least
   twice the hits of the runner-up); two agents that both have 2+ hits and are close both run.
2. Semantic: cosine similarity of the message to each agent's description and examples (the
   best match per agent); the best agent wins when it passes the threshold with a margin.
3. LLM: a structured `RoutingDecision` from the fast model, when a model is configured.
4. Default: the registry's default agent (chat), confidence 0.

Also here: the routing functions of the graph's conditional edges (pure `state -> node names`).
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from graph.prompts import ROUTER_SYSTEM
from graph.registry import AgentRegistry
from graph.state import RouteDecision

log = logging.getLogger(__name__)

MIN_KEYWORD_HITS = 2


class RoutingDecision(BaseModel):
    """The LLM router's structured answer."""

    agent: str = Field(description="Name of the agent that should handle the message.")
    confidence: float = Field(ge=0.0, le=1.0, description="How sure you are, 0..1.")
    reason: str = Field(default="", description="One short sentence.")
    also: str | None = Field(
        default=None, description="A second agent, only if the message clearly needs both."
    )


def decision(agents: Sequence[str], method: str, confidence: float, reason: str) -> RouteDecision:
    return RouteDecision(
        agent=agents[0],
        agents=list(agents),
        method=method,  # type: ignore[typeddict-item]
        confidence=round(float(confidence), 3),
        reason=reason,
    )


class Router:
    """Decides which agent(s) handle a message."""

    def __init__(
        self,
        registry: AgentRegistry,
        *,
        embeddings: Callable[[], Embeddings] | None,
        llm: Callable[[], BaseChatModel | None],
        semantic_threshold: float = 0.35,
        semantic_margin: float = 0.04,
    ) -> None:
        self.registry = registry
        self._embeddings = embeddings
        self._llm = llm
        self.semantic_threshold = semantic_threshold
        self.semantic_margin = semantic_margin
        self._patterns = {
            agent.name: [
                re.compile(rf"(?<![\w-]){re.escape(k.lower())}(?![\w-])") for k in agent.keywords
            ]
            for agent in registry
        }
        self._agent_vectors: dict[str, np.ndarray] | None = None
        self._vector_lock = threading.Lock()

    # --- 1. keywords ---------------------------------------------------------------------
    def keyword_hits(self, text: str) -> dict[str, int]:
        """Distinct keywords of each agent found in `text` (whole words, case-insensitive)."""
        lowered = text.lower()
        return {
            name: sum(1 for pattern in patterns if pattern.search(lowered))
            for name, patterns in self._patterns.items()
        }

    def by_keywords(self, text: str) -> RouteDecision | None:
        hits = sorted(self.keyword_hits(text).items(), key=lambda kv: kv[1], reverse=True)
        qualified = [(name, n) for name, n in hits if n >= MIN_KEYWORD_HITS]
        if not qualified:
            return None
        (top, top_hits), rest = qualified[0], qualified[1:]
        confidence = min(0.95, 0.55 + 0.1 * top_hits)
        if rest and rest[0][1] * 2 > top_hits:
            second, second_hits = rest[0]
            return decision(
                [top, second],
                "keyword",
                confidence,
                f"keywords of both {top} ({top_hits}) and {second} ({second_hits})",
            )
        # Here every other agent has < 2 hits, or fewer than half the winner's: a clear winner.
        return decision([top], "keyword", confidence, f"{top_hits} keywords of {top}")

    # --- 2. embeddings -------------------------------------------------------------------
    def _vectors(self) -> dict[str, np.ndarray] | None:
        if self._embeddings is None:
            return None
        with self._vector_lock:
            if self._agent_vectors is None:
                model = self._embeddings()
                vectors: dict[str, np.ndarray] = {}
                for agent in self.registry:
                    texts = [agent.description, *agent.examples]
                    vectors[agent.name] = _unit(np.asarray(model.embed_documents(texts)))
                self._agent_vectors = vectors
        return self._agent_vectors

    def similarities(self, text: str) -> dict[str, float]:
        """Best cosine similarity of `text` to each agent's description and examples."""
        vectors = self._vectors()
        if vectors is None or self._embeddings is None:
            return {}
        query = _unit(np.asarray([self._embeddings().embed_query(text)]))[0]
        return {name: float(np.max(matrix @ query)) for name, matrix in vectors.items()}

    def by_similarity(self, text: str) -> RouteDecision | None:
        sims = sorted(self.similarities(text).items(), key=lambda kv: kv[1], reverse=True)
        if not sims:
            return None
        best, score = sims[0]
        second = sims[1][1] if len(sims) > 1 else 0.0
        if score >= self.semantic_threshold and score - second >= self.semantic_margin:
            return decision(
                [best], "semantic", score, f"most similar to {best} ({score:.2f} vs {second:.2f})"
            )
        return None

    # --- 3. LLM --------------------------------------------------------------------------
    async def by_llm(self, text: str) -> RouteDecision | None:
        model = self._llm()
        if model is None:
            return None
        agents = "\n".join(f"- {a.name}: {a.description}" for a in self.registry)
        try:
            structured = model.with_structured_output(RoutingDecision, method="function_calling")
            raw = await structured.ainvoke(
                [SystemMessage(ROUTER_SYSTEM.format(agents=agents)), HumanMessage(text)]
            )
        except Exception as exc:  # the router must always answer; the default takes over
            log.warning("LLM routing failed (%s); using the default agent", exc)
            return None
        if not isinstance(raw, RoutingDecision) or raw.agent not in self.registry:
            log.warning("LLM routing named no known agent (%r); using the default agent", raw)
            return None
        chosen = [raw.agent]
        if raw.also and raw.also in self.registry and raw.also != raw.agent:
            chosen.append(raw.also)
        return decision(chosen, "llm", raw.confidence, raw.reason or "chosen by the model")

    # --- all together --------------------------------------------------------------------
    async def decide(self, text: str) -> RouteDecision:
        """Route `text`: the first method that is sure wins."""
        found = self.by_keywords(text)
        if found is None:
            found = await asyncio.to_thread(self.by_similarity, text)
        if found is None:
            found = await self.by_llm(text)
        if found is None:
            found = decision(
                [self.registry.default], "default", 0.0, "no agent matched; the default answers"
            )
        return found


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


# --- conditional-edge functions --------------------------------------------------------------


def entry_nodes_for(registry: AgentRegistry) -> Callable[[dict[str, Any]], list[str]]:
    """The routing function after `route`: the entry node of every chosen agent."""

    def to_agents(state: dict[str, Any]) -> list[str]:
        route = state.get("route") or {}
        names = [n for n in route.get("agents", []) if n in registry] or [registry.default]
        return [registry[name].entry for name in names]

    return to_agents
