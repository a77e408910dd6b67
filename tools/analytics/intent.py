"""Requests to change data: recognised in a question and refused in words, before any SQL.

The analytics agent only reads. A question whose intent is to change the data ("Delete all
orders", "drop table orders", "please update the status of order 5", "insert a region",
"TRUNCATE sales") must not be answered with a count of what it named, so every path (the demo's
semantic layer, the catalogue engine of a connected database, the model's SQL, the agent before
it runs anything) asks `write_request(question)` first and answers its refusal.

A write verb counts when it starts a clause as a command (at the start, after "please", "can
you", "I want to", "then", a comma ...) and is followed by what it would change. Verbs that are
also nouns in analytics questions ("drop in sales", "update frequency", "create a chart") need
a determiner or a database object after them; past participles ("how many orders were deleted")
are questions about data, not commands.
"""

from __future__ import annotations

import re

_DETERMINER = r"(?:all|every|each|the|this|that|these|those|any|my|our)"
_DB_OBJECT = (
    r"(?:table|tables|schema|schemas|database|databases|view|views|index|indexes|column|"
    r"columns|row|rows|record|records|entry|entries|role|roles|user|users|function|trigger|"
    r"sequence|privileges?|permissions?)"
)
#: What must follow each verb for it to be a command (lookahead, after the verb and a space).
_VERBS: dict[str, str] = {
    # verbs that command a write whatever follows
    "delete": r"\S", "insert": r"\S", "truncate": r"\S", "alter": r"\S", "erase": r"\S",
    "wipe": r"\S", "purge": r"\S", "upsert": r"\S", "merge into": r"\S",
    # verbs that are also analytics nouns or requests ("drop in sales", "update frequency",
    # "create a chart", "remove returns from the total"): a determiner or a database object
    "drop": rf"(?:{_DETERMINER}|{_DB_OBJECT}|if)\b",
    "update": rf"(?:{_DETERMINER}|{_DB_OBJECT})\b|\w+\s+set\b",
    "overwrite": rf"(?:{_DETERMINER}|{_DB_OBJECT})\b",
    "rename": rf"(?:{_DETERMINER}|{_DB_OBJECT})\b",
    "remove": rf"(?:all|every|{_DB_OBJECT})\b",
    "create": rf"(?:(?:a|an)\s+)?new\s+{_DB_OBJECT}\b|(?:(?:a|an|the)\s+)?{_DB_OBJECT}\b"
    r"(?!\s+(?:of|showing|that shows|with the|for|by|comparing|summari[sz]ing)\b)",
    "grant": rf"(?:{_DETERMINER}|{_DB_OBJECT}|select|insert|update|delete|usage|access|me|us)\b",
    "revoke": rf"(?:{_DETERMINER}|{_DB_OBJECT}|select|insert|update|delete|usage|access)\b",
}  # fmt: skip
_LEAD = (
    r"(?:^|[.;:!?,]\s*|\b(?:please|pls|kindly|then|and|also|now|just|first|next|finally|"
    r"immediately|go ahead and|let'?s|lets|can you|could you|would you|will you|you should|"
    r"(?:i|we) (?:want|need|would like|'d like|wish) (?:you )?to|help me|try to|how do i|"
    r"how can i|is it possible to)\s+)"
)
_SPACE = r"\s+"
WRITE_REQUEST = re.compile(
    _LEAD
    + r"(?:please\s+)?(?P<verb>"
    + "|".join(
        rf"{_SPACE.join(verb.split())}\b(?=\s+(?:{after}))" for verb, after in _VERBS.items()
    )
    + ")",
    re.IGNORECASE,
)


def write_request(question: str) -> str | None:
    """The refusal for a request to change data, or None for a question about the data."""
    text = " ".join(question.replace("\u2019", "'").split())
    match = WRITE_REQUEST.search(text)
    if match is None:
        return None
    verb = " ".join(match["verb"].lower().split())
    return (
        f"I cannot {verb} anything: the analytics agent is read-only. It answers questions "
        "about the data with read-only SELECT queries and never deletes, drops, inserts, "
        "updates, truncates, alters or creates anything, whatever the question asks. Ask about "
        "the data instead, e.g. how many there are, totals by a breakdown, or a trend over time."
    )
