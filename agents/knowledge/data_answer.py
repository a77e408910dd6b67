"""The knowledge agent's model-free answer for a message routed elsewhere (`DataAnswer`).

Without a chat model, the chat agent can only list what the agents do. A question about the
user's documents that routing sent there ("who do I escalate to after 20 minutes?": the
router's data tier judged the match below ROUTE_DATA_THRESHOLD, or another tier decided first)
would end at that list although the knowledge base holds the answer. So the chat agent asks
this first: the probe's own search (`agents.knowledge.probe.probe`: the same scope, query,
weights and passage evidence routing uses; the scope is the run's, `scope_for`: its owner and
its ``filters`` option, as the agent's retrieval), and when its score reaches
CHAT_ANSWER_THRESHOLD the extractive answer of the knowledge agent over the hits it read,
quoted and cited.

CHAT_ANSWER_THRESHOLD is on the probe's scale, calibrated by ``bench/chat_answer.py`` on the
routing bench's labelled messages (the highest score of a message that is not about the
documents, e.g. small talk, stays below it); the README gives the figures.
"""

from __future__ import annotations

from agents.contract.context import RunContext
from agents.contract.spec import DataAnswer
from agents.knowledge.common import citation_data, scope_for
from agents.knowledge.extractive import extractive_answer
from agents.knowledge.probe import probe

SETTING = "CHAT_ANSWER_THRESHOLD"


async def answer_from_documents(message: str, context: RunContext) -> DataAnswer | None:
    """A quoted, cited answer from the documents the run searches (the owner's and the shared
    ones, narrowed by the run's ``filters``) when one passage matches the message confidently
    (score >= CHAT_ANSWER_THRESHOLD), else None."""
    services = context.require_services()
    found = await probe(message, services, scope_for(context))
    threshold = services.settings.knowledge.chat_answer_threshold
    if found is None or found.score < threshold:
        return None
    extracted = extractive_answer(found.query, found.hits)
    if not extracted.found or not extracted.citations:
        return None
    return DataAnswer(
        text=extracted.text,
        score=round(found.score, 4),
        threshold=threshold,
        setting=SETTING,
        citations=tuple(citation_data(c) for c in extracted.citations),
    )
