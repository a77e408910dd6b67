"""Route decisions: keywords → the agents' data → embedding similarity → LLM → default agent.

1. Keywords (whole words; case and apostrophes ignored, "dont" is "don't"): an agent with 2+
   distinct keyword hits wins when it is clearly ahead (at least twice the hits of the
   runner-up); two agents that both have 2+ hits and are close both run.
2. Data: each agent with a data probe (``AgentSpec.probe``; the knowledge agent's searches what
   its retrieval would in the run: the owner's documents and the shared ones, narrowed by the
   run's ``filters``) scores how well its own data matches the message; the best score at or
   above ROUTE_DATA_THRESHOLD wins. The probes of one message run concurrently within
   ROUTE_DATA_TIMEOUT_SECONDS; a probe that fails or takes longer is ignored, and a probe
   skips itself (None) when it has nothing to search (an empty knowledge base).
3. Semantic: cosine similarity of the message to each agent's description and examples (the
   best match per agent); the best agent wins when it passes the threshold with a margin.
4. LLM: a structured `RoutingDecision` from the fast model, when a model is configured.
5. Default: the registry's default agent (chat), confidence 0; its reason names the closest
   data match, if a probe found one below the threshold. A question that nothing claimed goes
   instead to an agent answering questions from the owner's data (the knowledge agent) when its
   data matches nearly as well as the threshold (ROUTE_DATA_SUPPORT).

Evidence weighed across tiers (issue 28), each knob calibrated on calibration splits only:
- a weak keyword decision (exactly MIN_KEYWORD_HITS hits) yields to another agent whose data
  is near certain (ROUTE_DATA_OVERRIDE): two incidental words ("hi" and "hello" inside a pasted
  test) do not outweigh a probe that recognised the user's own kind of data; a keyword decision
  for two agents goes to the one of them whose data is near certain while the other's does not
  reach the threshold (code that sums a meal's calories is the coding agent's);
- a data decision yields to a clearly stronger similarity to another agent
  (ROUTE_SEMANTIC_STRONG) unless the data score reaches ROUTE_DATA_OVERRIDE: a message that
  shares a few handbook words but reads as a calendar request is the calendar's;
- a similarity decision for an agent that has a data probe yields to another agent whose data
  matches nearly as well as the threshold (ROUTE_DATA_SUPPORT) and better than the winner's
  own data: one domain word ("meal") does not outweigh a handbook that answers the question;
- small talk is a class of its own: prototypes of chat about how one feels, work, the weekend
  (`SMALL_TALK`), embedded like an agent's examples; when the message is at least as close to
  them than to any agent (by ROUTE_SMALLTALK_LEAD), the default agent answers, so "I just
  finished a big project at work" is conversation, not a task; so is a question about the
  assistant itself (`ABOUT_ASSISTANT`: "which of your agents handles my calendar?", "what's
  your favourite pizza?"), which the data tier does not decide either.

Why the data tier sits before similarity and the LLM: it is the only evidence of what the
user's own data holds. Descriptions and examples are generic ("answers questions from your
documents"), so "What is the hotel cap in North America?" resembles no agent, and an LLM router
that sees only the descriptions would guess (travel talk: chat). A probe is one search (tens of
milliseconds, no tokens) and deterministic, where the LLM call costs a round trip and tokens;
and it cannot take a message from an agent that keywords chose.

Over 400 lines because the tiers and the evidence weighed across them are one decision: each
rule reads the others' scores, and splitting them would scatter one ordering over modules.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, Field

from agents.contract.context import RunContext
from agents.contract.spec import DataProbe
from agents.contract.state import RouteDecision
from graph.prompts import ROUTER_SYSTEM
from graph.registry import AgentRegistry
from tools.providers.chat_models import function_calling

if TYPE_CHECKING:
    from agents.contract.context import AgentServices
    from config import Settings

log = logging.getLogger(__name__)

MIN_KEYWORD_HITS = 2

#: Prototypes of small talk: how the user feels, their day, work as conversation rather than
#: a request. Written for the router (not taken from any labeled set); they stand for a class,
#: so they are varied in subject and deliberately name no item, date or action to take.
SMALL_TALK = (
    "How are you doing today?",
    "I'm so tired this week, work has been exhausting.",
    "Feeling pretty good today, the team shipped something nice.",
    "My boss was in a bad mood all day, ugh.",
    "I'm nervous about my performance review, any advice to calm down?",
    "Long day at the office. I need a break.",
    "Work is overwhelming lately and I feel burned out.",
    "Any tips for staying focused when I'm unmotivated?",
    "What a week! Glad it's almost Friday.",
    "I'm bored, talk to me.",
    "That meeting was so awkward, haha.",
    "I'm proud of myself, I finally finished that big report.",
    "Do you ever get tired of answering questions?",
    "How do I deal with a stressful job?",
    "I had a rough morning, nothing went right.",
    "My weekend was great, we went hiking.",
)


#: A question about the assistant itself ("which of your agents can help with my calendar?",
#: "what else can you do?"): the default agent answers it, however close the domain word it
#: names ("calendar") brings it to that agent's examples.
ABOUT_ASSISTANT = re.compile(
    r"\b(?:which|what)\s+(?:of\s+)?(?:your|the)\s+(?:agents?|assistants?|tools|skills|features|"
    r"capabilities)\b|\bwhat\s+(?:else\s+)?can\s+you\s+(?:do|help)\b|"
    r"\bwhat\s+are\s+you\s+(?:able|capable)\b|\bhow\s+can\s+you\s+help\b|\bwho\s+are\s+you\b|"
    # the assistant's own tastes and opinions ("what's your favourite pizza?"): conversation,
    # however well the user's own data (a pizza they logged) matches the subject
    r"\byour\s+(?:favou?rites?|opinion|preference)\b|\bdo\s+you\s+(?:like|love|prefer|enjoy)\b",
    re.IGNORECASE,
)


#: A question: it ends with a question mark or opens with a question word.
_QUESTION = re.compile(
    r"\?\s*$|^\W*(?:who|what|whats|what's|when|where|why|how|which|do|does|did|is|are|should|"
    r"must|may)\b",
    re.IGNORECASE,
)
#: A request to the assistant ("can you recommend a book?"), not a question of fact.
_ASKS_ASSISTANT = re.compile(r"^\W*(?:please\s+)?(?:can|could|would|will)\s+you\b", re.IGNORECASE)


@dataclass(frozen=True)
class Evidence:
    """How the tiers' evidence is weighed against each other (see the module docstring)."""

    data_override: float = 0.8
    semantic_strong: float = 0.6
    data_support: float = 0.4
    smalltalk_lead: float = 0.03

    @classmethod
    def from_settings(cls, settings: Settings) -> Evidence:
        return cls(
            data_override=settings.routing.data_override,
            semantic_strong=settings.routing.semantic_strong,
            data_support=settings.routing.data_support,
            smalltalk_lead=settings.routing.smalltalk_lead,
        )


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
    """Decides which agent(s) handle a message, with the models of the run's services.

    One per graph: the agents' embedded descriptions are computed once per embedding model.
    """

    def __init__(
        self,
        registry: AgentRegistry,
        *,
        embeddings: Callable[[], Embeddings] | None,
        llm: Callable[[], BaseChatModel | None],
        semantic_threshold: float = 0.35,
        semantic_margin: float = 0.04,
        services: AgentServices | None = None,
        data_threshold: float = 0.47,
        data_timeout: float = 1.0,
        evidence: Evidence | None = None,
    ) -> None:
        self.registry = registry
        self._embeddings = embeddings
        self._llm = llm
        self.semantic_threshold = semantic_threshold
        self.semantic_margin = semantic_margin
        self._services = services
        self.data_threshold = data_threshold
        self.data_timeout = data_timeout
        if evidence is None:
            evidence = Evidence.from_settings(services.settings) if services else Evidence()
        self.evidence = evidence
        # each keyword with its literal text: a keyword whose text is not in the message cannot
        # match, and a substring test is much cheaper than the regex (hundreds per message);
        # both without apostrophes, which users often skip ("dont", "whats on")
        self._patterns = {
            agent.name: [
                (k, re.compile(rf"(?<![\w-]){re.escape(k)}(?![\w-])"))
                for k in dict.fromkeys(_bare(k) for k in agent.keywords)
            ]
            for agent in registry
        }
        # the LLM tier's prompt and structured runnable are built once per model, not per turn
        agents = "\n".join(f"- {a.name}: {a.description}" for a in registry)
        self._router_system = ROUTER_SYSTEM.format(agents=agents)
        self._structured: tuple[BaseChatModel, Runnable[Any, Any]] | None = None
        self._agent_vectors: dict[str, np.ndarray] | None = None
        self._smalltalk_vectors: np.ndarray | None = None
        self._vector_lock = threading.Lock()

    # --- 1. keywords ---------------------------------------------------------------------
    def keyword_hits(self, text: str) -> dict[str, int]:
        """Distinct keywords of each agent found in `text` (whole words, case-insensitive)."""
        lowered = _bare(text)
        return {
            name: sum(1 for word, rx in patterns if word in lowered and rx.search(lowered))
            for name, patterns in self._patterns.items()
        }

    def by_keywords(
        self, text: str, found_hits: dict[str, int] | None = None
    ) -> RouteDecision | None:
        counted = self.keyword_hits(text) if found_hits is None else found_hits
        hits = sorted(counted.items(), key=lambda kv: kv[1], reverse=True)
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

    def _weak(self, hits: dict[str, int], found: RouteDecision) -> bool:
        """A keyword decision of one agent on the least number of hits (`hits`: the message's
        `keyword_hits`)."""
        return len(found["agents"]) == 1 and hits.get(found["agent"], 0) <= MIN_KEYWORD_HITS

    # --- 2. the agents' data ---------------------------------------------------------------
    def _run(self, context: RunContext | None) -> RunContext | None:
        """The context the probes get: the run's, with services (the router's when the run's
        has none); None when neither has services (no data tier)."""
        run = context if context is not None else RunContext()
        if run.services is not None:
            return run
        if self._services is None:
            return None
        return run.model_copy(update={"services": self._services})

    async def data_scores(self, text: str, context: RunContext | None = None) -> dict[str, float]:
        """Each probing agent's score of its own data for `text` in the run of `context` (its
        owner, whose data the probes search, and its options, e.g. the knowledge ``filters``;
        None: the anonymous owner, no options). Agents whose probe skipped, failed or timed out
        are left out. Empty without services or probes."""
        run = self._run(context)
        probes = [(a.name, a.probe) for a in self.registry if a.probe is not None]
        if run is None or not probes or not text.strip():
            return {}

        async def one(name: str, probe: DataProbe) -> float | None:
            try:
                return await asyncio.wait_for(probe(text, run), self.data_timeout)
            except TimeoutError:
                log.warning("the %s data probe took over %.2fs; ignored", name, self.data_timeout)
            except Exception as exc:  # a probe must never cost the user the answer
                log.warning("the %s data probe failed (%s: %s); ignored", name,
                            type(exc).__name__, exc)  # fmt: skip
            return None

        results = await asyncio.gather(*(one(name, probe) for name, probe in probes))
        return {
            name: min(1.0, max(0.0, float(score)))
            for (name, _), score in zip(probes, results, strict=True)
            if score is not None
        }

    def by_data(self, scores: dict[str, float]) -> RouteDecision | None:
        """The agent whose data matches best, when its score reaches the threshold."""
        if not scores:
            return None
        best, score = max(scores.items(), key=lambda kv: kv[1])
        if score < self.data_threshold:
            return None
        return decision(
            [best], "data", score,
            f"the {best} agent's data matches ({score:.2f} >= {self.data_threshold:.2f})",
        )  # fmt: skip

    # --- 3. embeddings -------------------------------------------------------------------
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
                self._smalltalk_vectors = _unit(np.asarray(model.embed_documents(list(SMALL_TALK))))
                self._agent_vectors = vectors
        return self._agent_vectors

    def smalltalk_similarity(self, text: str) -> float | None:
        """Best cosine similarity of `text` to the small-talk prototypes (None: no model)."""
        if self._vectors() is None or self._embeddings is None:
            return None
        assert self._smalltalk_vectors is not None  # set with the agents' vectors
        query = _unit(np.asarray([self._embeddings().embed_query(text)]))[0]
        return float(np.max(self._smalltalk_vectors @ query))

    def similarities(self, text: str) -> dict[str, float]:
        """Best cosine similarity of `text` to each agent's description and examples."""
        vectors = self._vectors()
        if vectors is None or self._embeddings is None:
            return {}
        query = _unit(np.asarray([self._embeddings().embed_query(text)]))[0]
        return {name: float(np.max(matrix @ query)) for name, matrix in vectors.items()}

    def by_similarity(
        self, text: str, sims: dict[str, float] | None = None
    ) -> RouteDecision | None:
        ranked = sorted(
            (self.similarities(text) if sims is None else sims).items(),
            key=lambda kv: kv[1],
            reverse=True,
        )
        if not ranked:
            return None
        best, score = ranked[0]
        second = ranked[1][1] if len(ranked) > 1 else 0.0
        small = self.smalltalk_similarity(text)
        default = self.registry.default
        if best != default and ABOUT_ASSISTANT.search(text):
            return decision(
                [default], "semantic", score, f"a question about the assistant (closest agent "
                f"{best} {score:.2f})",
            )  # fmt: skip
        if small is not None and best != default and small >= score + self.evidence.smalltalk_lead:
            return decision(
                [default], "semantic", small,
                f"small talk ({small:.2f}, the closest agent {best} {score:.2f})",
            )  # fmt: skip
        if score >= self.semantic_threshold and score - second >= self.semantic_margin:
            return decision(
                [best], "semantic", score, f"most similar to {best} ({score:.2f} vs {second:.2f})"
            )
        return None

    def _similarity_tier(
        self, text: str, decide: bool
    ) -> tuple[dict[str, float], RouteDecision | None]:
        """`similarities`, and `by_similarity` on them when `decide`: one worker-thread hop
        for both (the embedding model runs in a thread; the event loop keeps serving)."""
        sims = self.similarities(text)
        return sims, (self.by_similarity(text, sims) if decide else None)

    def weigh_keywords(self, found: RouteDecision, scores: dict[str, float]) -> RouteDecision:
        """A weak keyword decision yields to another agent's data when that data is near
        certain, or passes the threshold while the keyword agent's own data matches less."""
        if len(found["agents"]) > 1:
            return self._one_of(found, scores)
        best = max(scores.items(), key=lambda kv: kv[1], default=None)
        if best is None or best[0] in found["agents"]:
            return found
        name, score = best
        own = scores.get(found["agent"])
        if score >= self.evidence.data_override:
            why = f"{score:.2f} >= {self.evidence.data_override:.2f}"
        elif own is not None and score >= self.data_threshold and score > own:
            why = f"{score:.2f}, the {found['agent']} agent's own data {own:.2f}"
        else:
            return found
        return decision(
            [name], "data", score, f"the {name} agent's data matches ({why}), above "
            f"{found['reason']}",
        )  # fmt: skip

    def _one_of(self, found: RouteDecision, scores: dict[str, float]) -> RouteDecision:
        """Keywords of two agents: the one whose data is near certain, while the other's does
        not reach the threshold, answers alone ("a python function that sums the calories of
        meals": code about meals, not a meal)."""
        sure = [a for a in found["agents"] if scores.get(a, 0.0) >= self.evidence.data_override]
        if len(sure) != 1 or any(
            scores.get(a, 0.0) >= self.data_threshold for a in found["agents"] if a != sure[0]
        ):
            return found
        score = scores[sure[0]]
        return decision(
            [sure[0]], "data", score, f"the {sure[0]} agent's data matches ({score:.2f} >= "
            f"{self.evidence.data_override:.2f}), among {found['reason']}",
        )  # fmt: skip

    def weigh(
        self, found: RouteDecision, scores: dict[str, float], sims: dict[str, float]
    ) -> RouteDecision:
        """A data or similarity decision checked against the other tier's evidence."""
        ev = self.evidence
        chosen = found["agent"]
        if found["method"] == "data" and sims and found["confidence"] < ev.data_override:
            best, sim = max(sims.items(), key=lambda kv: kv[1])
            if best != chosen and sim >= ev.semantic_strong:
                return decision(
                    [best], "semantic", sim,
                    f"most similar to {best} ({sim:.2f}), above the {chosen} agent's data "
                    f"({found['confidence']:.2f} < {ev.data_override:.2f})",
                )  # fmt: skip
        if found["method"] == "semantic" and chosen != self.registry.default and scores:
            best, score = max(scores.items(), key=lambda kv: kv[1])
            # an agent whose probe found none of its data (or that has no probe) is not weighed:
            # no evidence either way (a user with no events yet still books one)
            own = scores.get(chosen)
            if best != chosen and own is not None and score >= ev.data_support and score > own:
                return decision(
                    [best], "data", score,
                    f"the {best} agent's data ({score:.2f}) outweighs the {chosen} agent's "
                    f"({own:.2f}), which only resembles the message",
                )  # fmt: skip
        return found

    def unclaimed_question(self, text: str, scores: dict[str, float]) -> RouteDecision | None:
        """A question no tier claimed, asked of an agent that answers questions from the
        owner's data (its card's ``answer_from_data``: the knowledge agent) when that data
        matches it nearly as well as the threshold (ROUTE_DATA_SUPPORT): it quotes what the
        documents say, where the default agent could only guess. A request to the assistant
        ("can you recommend ...?") is not such a question."""
        if not _QUESTION.search(text) or _ASKS_ASSISTANT.search(text):
            return None
        answering = [
            (name, score)
            for name, score in scores.items()
            if self.registry[name].answer_from_data is not None
        ]
        best = max(answering, key=lambda kv: kv[1], default=None)
        if best is None or best[1] < self.evidence.data_support:
            return None
        name, score = best
        return decision(
            [name], "data", score, f"a question no agent claimed; the {name} agent's data is "
            f"the closest ({score:.2f} >= {self.evidence.data_support:.2f})",
        )  # fmt: skip

    # --- 4. LLM --------------------------------------------------------------------------
    async def by_llm(self, text: str) -> RouteDecision | None:
        model = self._llm()
        if model is None:
            return None
        try:
            cached = self._structured
            if cached is None or cached[0] is not model:
                # building it converts RoutingDecision to a tool schema: once per model
                cached = self._structured = (model, function_calling(model, RoutingDecision))
            raw = await cached[1].ainvoke([SystemMessage(self._router_system), HumanMessage(text)])
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
    async def decide(self, text: str, context: RunContext | None = None) -> RouteDecision:
        """Route `text`, sent in the run of `context` (the probes search what that run's
        agents would: its owner's data, narrowed by its options; None: the anonymous owner):
        the first method that is sure wins."""
        hits = self.keyword_hits(text)
        found = self.by_keywords(text, hits)
        if found is not None and len(found["agents"]) == 1 and not self._weak(hits, found):
            return found
        scores = await self.data_scores(text, context)
        if found is not None:  # weak or shared keywords: weighed against the agents' data
            return self.weigh_keywords(found, scores)
        # a question about the assistant is not one to the user's data (`by_similarity`)
        found = None if ABOUT_ASSISTANT.search(text) else self.by_data(scores)
        sims, by_sims = await asyncio.to_thread(self._similarity_tier, text, found is None)
        if found is None:
            found = by_sims
        if found is not None:
            found = self.weigh(found, scores, sims)
        if found is None:
            found = await self.by_llm(text)
        if found is None:
            found = self.unclaimed_question(text, scores)
        if found is None:
            reason = "no agent matched, so the default agent answers"
            if scores:
                name, score = max(scores.items(), key=lambda kv: kv[1])
                reason += (
                    f" (the closest data match was the {name} agent's, {score:.2f} < "
                    f"{self.data_threshold:.2f})"
                )
            found = decision([self.registry.default], "default", 0.0, reason)
        return found


def _bare(text: str) -> str:
    """``text`` lowercased, without apostrophes: keywords match "dont" as "don't"."""
    return text.lower().replace("'", "").replace("\u2019", "")


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)
