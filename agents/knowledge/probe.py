"""The knowledge agent's data probe: how well the owner's documents match a message.

The router's data tier (`graph.routing`) calls it for messages no keyword decided, so a
question about the user's documents ("How do I restart the payments worker?") reaches this
agent although it names no document. One hybrid search, as the agent's ``retrieve`` would run
it for the message (the same query, lexical/semantic weight and candidate depth, the engine's
model-free relevance rerank, never the cross-encoder): the score is the best hit's absolute
relevance to the message (0..1: the dense similarity and the share of the message's terms the
chunk holds, weighted by ``lambda_mult``). It does not depend on the other hits, so one
threshold (ROUTE_DATA_THRESHOLD, calibrated by ``bench/routing.py``) holds across messages.

Per-passage evidence (issue 28): a chunk is several passages, and a short question ("who do I
escalate to after 20 minutes?") matches one sentence of it ("Escalation goes to the team lead
after 20 minutes") while its similarity to the whole chunk stays low. So the best few hits are
also read passage by passage (their sentences, each with the chunk's heading): a passage's
score is the idf-weighted share of the message's content words it holds, compared as Snowball
stems (so "escalate" meets "Escalation", "reimbursed" meets "reimbursable") and with adjacent
words joined ("roll back" meets "rollback"). A word no document holds has the highest idf, so
a message about something else ("cancel my haircut") keeps a low share. The probe's score is
the better of the chunk's relevance and the best passage's share scaled by
ROUTE_PASSAGE_WEIGHT (lexical evidence alone is worth less than both legs together).

Commands (issue 28): the knowledge agent reads documents and changes nothing, so a message
that opens with a command to create or change an item ("remind me to read the canary policy",
"reschedule the team lunch", "book the Tejo room for Friday") is not a question to the
documents, however many handbook words it shares: the probe skips it (`is_command`), and the
agents that keep such items (their keywords, data and examples) decide. "Remind me what the
hotel cap is" asks a question and is searched.

Skipped (None) when the message has no words to search for, is a command, the knowledge base
is empty, or it cannot be opened or is not open in this process.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from agents.contract.context import AgentServices, RunContext
from agents.knowledge.common import scope_for, store_of
from agents.knowledge.nodes import LAMBDA_CEILING, LAMBDA_FLOOR
from agents.knowledge.strategies import evaluate_query, strip_meta
from agents.knowledge.text import QUESTION_WORDS, STOPWORDS, content_terms, sentences, words
from tools.knowledge.analysis import DEFAULT_ANALYZER, analyze
from tools.knowledge.schema import KnowledgeEngineError
from tools.knowledge.scope import Scope
from tools.knowledge.types import SearchHit
from tools.operations import EngineNotOpen

#: Characters of a message the probe searches with: a question is shorter; a pasted file is
#: not a question about the documents, and the embedding model reads ~256 word pieces anyway.
PROBE_MAX_CHARS = 1000


def probe_query(message: str) -> str:
    """What the probe searches for: the message (bounded), without the words that point at
    the knowledge base itself, as the agent's ``evaluate_query`` would search it."""
    return strip_meta(" ".join(message[:PROBE_MAX_CHARS].split()))


@dataclass(frozen=True)
class ProbeResult:
    """What the probe found: its score, the query it searched and the hits it read."""

    score: float
    query: str
    hits: list[SearchHit]


async def knowledge_probe(message: str, context: RunContext) -> float | None:
    """The best hit's relevance to ``message`` in the run's knowledge base (None: no words to
    search for, or no documents).

    It searches exactly what the agent's ``retrieve`` searches in this run (`scope_for`): the
    run's owner's private collection plus the shared ones, with one ranking, narrowed by the
    run's ``filters`` option; so another key's private documents, or documents the run's
    filters leave out, never pull a message to the knowledge agent.
    """
    found = await probe(message, context.require_services(), scope_for(context))
    return found.score if found is not None else None


async def probe(message: str, services: AgentServices, scope: Scope) -> ProbeResult | None:
    """`knowledge_probe` in ``scope``, with the hits it read (for an answer from them)."""
    query = probe_query(message)
    if not content_terms(query) or is_command(query):
        return None
    try:
        store = store_of(services)
        if (await store.stats(scope))["documents"] == 0:
            return None
    except (KnowledgeEngineError, EngineNotOpen):
        # the knowledge base cannot be opened (e.g. a Postgres without pgvector) or is not open
        # here: /health reports it once; the router asks every turn and needs no warning each
        # time
        return None
    settings = services.settings
    weight = evaluate_query(query, floor=LAMBDA_FLOOR, ceiling=LAMBDA_CEILING).lambda_mult
    analyzer = store.analyzer
    # the passages' idf is fetched while the search runs (one more query, no longer wait)
    result, idf = await asyncio.gather(
        store.search(
            query, lambda_mult=weight, top_k=settings.routing.passage_hits, rerank=False,
            score_rerank=True, scope=scope,
        ),
        asyncio.to_thread(store.idf, passage_stems(query, analyzer), scope),
    )  # fmt: skip
    scores = [h.relevance for h in result.hits if h.relevance is not None]
    if not scores:
        return None
    passage = passage_score(query, result.hits, idf, analyzer)
    score = max(max(scores), settings.routing.passage_weight * passage)
    return ProbeResult(score=score, query=query, hits=list(result.hits))


#: A message that opens (after "please" or "can you") with a verb that creates or changes an
#: item: a task, an event, a meal. "remind me" followed by a question word asks a question.
_COMMAND = re.compile(
    r"^\s*(?:(?:please|pls|hey|ok|okay)[,\s]+)?(?:(?:can|could|would)\s+you\s+(?:please\s+)?)?"
    r"(?:remind\s+me(?!\s+(?:what|how|when|who|where|why|which|whether|if)\b)|add|schedule|"
    r"reschedule|book|create|put|move|cancel|delete|remove|mark|tick|log|track|set\s+up|block|"
    r"rename|postpone|push|note\s+down|jot|check\s+off|cross\s+off|todo\s*:|to-do\s*:|"
    r"new\s+(?:task|event|todo))\b",
    re.IGNORECASE,
)


def is_command(message: str) -> bool:
    """Whether ``message`` opens with a command to create or change an item (see the
    module docstring)."""
    return _COMMAND.search(message) is not None


#: Words that frame a question about a term rather than name its subject ("what does DRI
#: stand for?", "what is meant by SLO?"): not counted as words a passage must hold.
FRAME_WORDS = frozenset({"stand", "stands", "mean", "means", "meant", "meaning", "definition"})


#: "how long", "how much", ...: the word after "how" asks for a quantity, it names nothing.
_HOW = re.compile(r"\bhow\s+(?:long|much|many|often|soon|far|big|old)\b", re.IGNORECASE)


def passage_words(query: str) -> list[str]:
    """The message's content words (no stop or question words, no framing words such as the
    "long" of "how long", and no contraction of one: "what's", "how's"), in order."""
    return [
        w
        for w in words(_HOW.sub(" ", query))
        if len(w) > 1 and not {w, w.split("'")[0]} & (STOPWORDS | QUESTION_WORDS | FRAME_WORDS)
    ]


def is_definition(query: str) -> bool:
    """A question about what a term means ("what does DRI stand for?")."""
    return any(w in FRAME_WORDS for w in words(query))


def passages(hit: SearchHit, analyzer: str = DEFAULT_ANALYZER) -> list[set[str]]:
    """The index terms of each passage of a hit: its sentences, each with the heading."""
    heading = set(analyze(f"{hit.title} {hit.heading or ''}", analyzer))
    return [heading | set(analyze(sentence, analyzer)) for sentence in sentences(hit.text)]


def passage_stems(query: str, analyzer: str = DEFAULT_ANALYZER) -> list[str]:
    """The index terms (Snowball stems with the ``english`` analyzer) of the message's content
    words, without repeats."""
    return list(dict.fromkeys(t for w in passage_words(query) for t in analyze(w, analyzer)))


def passage_score(
    query: str, hits: list[SearchHit], idf: dict[str, float], analyzer: str = DEFAULT_ANALYZER
) -> float:
    """The best passage's idf-weighted share of the message's content words (0..1), with
    ``idf`` the knowledge base's idf of `passage_stems(query)`.

    Words are compared as index terms (Snowball stems); two adjacent words also count as found
    when a passage holds them joined ("roll back" in a passage saying "rollback")."""
    kept = passage_words(query)
    stems = [analyze(w, analyzer) for w in kept]
    single = list(dict.fromkeys(t for terms in stems for t in terms))
    total = sum(idf.get(t, 0.0) for t in single)
    if total <= 0 or not hits:
        return 0.0
    # joined pair -> the stems of the two words it stands in for
    pairs: dict[str, list[str]] = {}
    for i in range(len(kept) - 1):
        for joined in analyze(kept[i] + kept[i + 1], analyzer):
            pairs[joined] = stems[i] + stems[i + 1]
    best = 0.0
    for hit in hits:
        for held in passages(hit, analyzer):
            found = {t for t in single if t in held}
            for joined, parts in pairs.items():
                if joined in held:
                    found.update(parts)
            # one shared word is no evidence that the passage answers the message ("name" in
            # "what's your name?"), unless the message asks what that one term means
            if len(found) >= 2 or (found and len(single) == 1 and is_definition(query)):
                best = max(best, sum(idf.get(t, 0.0) for t in found) / total)
    return round(min(1.0, best), 6)
