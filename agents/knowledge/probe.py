"""The knowledge agent's data probe: how well the owner's documents match a message.

The router's data tier (`graph.routing`) calls it for messages no keyword decided, so a
question about the user's documents ("How do I restart the payments worker?") reaches this
agent although it names no document. One hybrid search, as the agent's ``retrieve`` would run
it for the message (the same query, lexical/semantic weight and candidate depth, the engine's
model-free relevance rerank, never the cross-encoder): the score is the best hit's absolute
relevance to the message (0..1: the dense similarity and the share of the message's terms the
chunk holds, weighted by ``lambda_mult``). It does not depend on the other hits, so one
threshold (ROUTE_DATA_THRESHOLD, calibrated by ``bench/routing.py``) holds across messages.

Skipped (None) when the message has no words to search for, the knowledge base is empty, or
it cannot be opened.
"""

from __future__ import annotations

from agents.contract.context import AgentServices
from agents.knowledge.common import store_for
from agents.knowledge.nodes import LAMBDA_CEILING, LAMBDA_FLOOR
from agents.knowledge.strategies import evaluate_query, strip_meta
from agents.knowledge.text import content_terms
from tools.knowledge.schema import KnowledgeEngineError

#: Characters of a message the probe searches with: a question is shorter; a pasted file is
#: not a question about the documents, and the embedding model reads ~256 word pieces anyway.
PROBE_MAX_CHARS = 1000


def probe_query(message: str) -> str:
    """What the probe searches for: the message (bounded), without the words that point at
    the knowledge base itself, as the agent's ``evaluate_query`` would search it."""
    return strip_meta(" ".join(message[:PROBE_MAX_CHARS].split()))


async def knowledge_probe(message: str, services: AgentServices, owner: str) -> float | None:
    """The best hit's relevance to ``message`` in ``owner``'s knowledge base (None: no words
    to search for, or no documents).

    The current engine keeps one knowledge base that every caller reads (the agent's
    ``retrieve`` searches it the same way), so the probe sees exactly what the agent would
    search; an owner-scoped engine is searched as ``owner`` here.
    """
    query = probe_query(message)
    if not content_terms(query):
        return None
    try:
        store = await store_for(services)
        if (await store.stats())["documents"] == 0:
            return None
    except KnowledgeEngineError:
        # the knowledge base cannot be opened (e.g. a Postgres without pgvector): /health
        # reports it once; the router asks every turn and needs no warning each time
        return None
    weight = evaluate_query(query, floor=LAMBDA_FLOOR, ceiling=LAMBDA_CEILING).lambda_mult
    result = await store.search(query, lambda_mult=weight, top_k=1, rerank=False, score_rerank=True)
    scores = [h.relevance for h in result.hits if h.relevance is not None]
    return max(scores) if scores else None
