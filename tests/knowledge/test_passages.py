"""Chunks read as passages: sentences, and lists or code blocks kept whole with their lead-in,
each under its section heading."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.knowledge.extractive import extractive_answer, grade_response
from agents.knowledge.passages import split_passages
from agents.knowledge.text import words
from tests.knowledge.test_chunking import NOT_LINE_ENDS
from tests.knowledge.test_strategies import hit

RUNBOOK = """# Payments API runbook

The payments API hands payments to the worker.

## When the payments API returns 503

A 503 means the worker is unreachable.

First steps:

1. Check the provider status page
   for an incident.
2. Look at the queue depth.
3. Restart the worker.

Do not retry by hand.

## Escalation
- Severity 1: page the on-call
  and the manager.
- Severity 2: page the on-call.
"""


def test_a_numbered_procedure_is_one_passage_with_its_lead_in() -> None:
    passages = split_passages(RUNBOOK)
    (steps,) = [p for p in passages if p.kind == "list" and p.lead]
    assert steps.lead == "First steps:"
    assert steps.items == (
        "1. Check the provider status page for an incident.",  # continuation line joined
        "2. Look at the queue depth.",
        "3. Restart the worker.",
    )
    assert steps.heading == "When the payments API returns 503"
    # the sentences around it stay sentences of the same section, in order
    section = [p for p in passages if p.section == steps.section]
    assert [p.kind for p in section] == ["sentence", "list", "sentence"]
    assert section[-1].text == "Do not retry by hand."


def test_a_list_right_under_a_heading_has_no_lead_in_and_keeps_its_items() -> None:
    (escalation,) = [p for p in split_passages(RUNBOOK) if p.heading == "Escalation"]
    assert escalation.kind == "list" and escalation.lead == ""
    assert escalation.items == (
        "- Severity 1: page the on-call and the manager.",
        "- Severity 2: page the on-call.",
    )


def test_headings_set_the_context_and_are_never_passages() -> None:
    passages = split_passages(RUNBOOK)
    assert not any("#" in p.words_text for p in passages)
    assert passages[0].heading == "Payments API runbook"
    rst = "Cats\n====\n\nCats sleep a lot.\n\nFeeding\n-------\n\nTwice a day.\n"
    assert [(p.heading, p.text) for p in split_passages(rst)] == [
        ("Cats", "Cats sleep a lot."),
        ("Feeding", "Twice a day."),
    ]


def test_a_chunk_without_a_heading_is_under_the_one_it_was_cut_from() -> None:
    (passage,) = split_passages("Restart the worker with kubectl.", "Restarting the worker")
    assert passage.heading == "Restarting the worker" and passage.kind == "sentence"


def test_a_loose_list_is_one_list_and_a_paragraph_after_it_ends_it() -> None:
    text = "Bring:\n\n- a laptop\n\n- a charger\n\nThat is all.\n"
    first, last = split_passages(text)
    assert first.kind == "list" and first.lead == "Bring:"
    assert first.items == ("- a laptop", "- a charger")
    assert (last.kind, last.text) == ("sentence", "That is all.")


def test_a_fenced_code_block_is_one_passage_with_its_lead_in() -> None:
    text = "Restart it with:\n\n```\nkubectl rollout restart deploy/worker\n```\n\nThen wait.\n"
    code, after = split_passages(text)
    assert code.kind == "code" and code.lead == "Restart it with:"
    assert code.items == ("kubectl rollout restart deploy/worker",)
    assert after.text == "Then wait."


# --- properties over open-ended markdown ----------------------------------------------------

LINES = st.sampled_from([
    "# Restarting the worker", "## Escalation", "Steps:", "First steps:", "",
    "1. Drain the queue.", "2. Stop the worker", "   and wait for it.", "- Severity 1: page.",
    "* Severity 2: open a ticket.", "```", "kubectl rollout restart deploy/worker",
    "The worker restarts in two minutes.", "Never delete pods by hand.", "Setext title",
    "============", "Wednesday is the office day.", "See https://status.example.com.",
])  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(LINES, max_size=25),
    noise=st.text(max_size=80),
    query=st.sampled_from(["How do I restart the worker?", "Who do I page?", "office day"]),
)
def test_quoted_passages_come_from_the_text_and_grade_as_supported(
    lines: list[str], noise: str, query: str
) -> None:
    text = "\n".join(lines) + "\n" + noise
    source_words = set(words(text)) | set(words("Restarting the worker Escalation"))
    for passage in split_passages(text, "Ops"):
        assert set(words(passage.words_text)) <= source_words | {"ops"}
    answer = extractive_answer(query, [hit("ops", text, 0.9, "Ops")])
    if answer.found:
        graded = grade_response(query, answer.text, answer.sources)
        assert graded.support == 1.0, (answer.text, graded.unsupported)


@pytest.mark.parametrize("char", NOT_LINE_ENDS, ids=lambda c: f"U+{ord(c):04X}")
def test_a_separator_inside_a_line_starts_no_heading_or_list(char: str) -> None:
    text = f"Restart the worker with kubectl.{char}# Tips{char}- not an item\n\nIt takes a minute."
    passages = split_passages(text, "Restarting the worker")
    assert {p.heading for p in passages} == {"Restarting the worker"}
    assert all(p.kind == "sentence" for p in passages)
    assert any("It takes a minute." in p.text for p in passages)
    # a line end still ends a line: "\r" (a CR file) as "\n"
    (tips,) = {p.heading for p in split_passages("Intro.\r# Tips\rIt takes a minute.")} - {""}
    assert tips == "Tips"
