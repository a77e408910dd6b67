"""The routing classes of issue 28, through the real router (the shipped agents, no model) over a
real knowledge base and the user's own meals: a short question answered by one sentence of a
long section, morphology, weak keywords against the agents' data, a strong similarity against a
marginal data match, small talk about work and feelings, code written inline or Python named
with what to write (the coding agent's probe), a span of clock time (the event agent's),
personal logging phrasing, one measure of the dataset with an analysis of it (the analytics
agent's probe) and commands that share the handbook's words (not the knowledge agent's).

The handbook and the messages are written for these tests (not the issue's examples nor the
frozen set's messages)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from agents.analytics.probe import ANALYSIS, analysis_evidence
from agents.coding.probe import ABOUT, CODE, REQUEST, code_evidence
from agents.contract.context import RunContext
from agents.contract.state import RouteDecision
from agents.knowledge.probe import is_command, passage_score, passage_stems
from agents.personal.evidence import asks_event_detail, event_wording, task_wording, time_span
from config import Settings
from graph.nodes import RouterCache
from graph.routing import Router
from graph.workflow import build_registry
from tests.support.graphs import agent_services
from tools.knowledge.store import KnowledgeStore
from tools.knowledge.types import SearchHit
from tools.personal.models import MealCreate
from tools.personal.service import PersonalService
from tools.providers.embeddings import SentenceTransformerEmbeddings

OWNER = "dana"
Route = Callable[[str], Awaitable[RouteDecision]]

SUPPORT_HANDBOOK = """# Support desk handbook

## Opening hours and channels

The support desk is staffed from 07:00 to 23:00 CET on weekdays and from 09:00 to 18:00 on
weekends. Customers reach us by chat, by e-mail and by phone; the phone queue is closed on
public holidays. Every new conversation gets a ticket number that starts with SD- and the
customer is told that number in the first reply.

## Complaints

A complaint is any ticket in which the customer says they are unhappy with the product or
with us. Complaints are tagged `complaint` and answered within four working hours. Escalation
of an unresolved complaint goes to the shift supervisor once the customer has waited
15 minutes. Supervisors answer on extension 4410. Refunds above 200 EUR are approved by the
finance desk, never by an agent. A complaint is closed only after the customer confirms.
Agents write the summary of the call in the ticket before they hang up, in English, and link
the order number. Screenshots are attached as PNG files, never pasted as text. Vouchers for a
late delivery are worth 10 EUR and can be given twice a year per customer. The weekly quality
review picks five random tickets per agent and scores tone, accuracy and speed. Chat
transcripts are kept for two years and then deleted by the archive job. Agents in training
shadow a senior colleague for their first two weeks and do not take phone calls alone.

## Travel for on-site visits

On business trips the company covers hotel stays up to 140 EUR per night in Europe. Each
traveller gets a daily meal allowance of 45 EUR, which covers breakfast, lunch and dinner
together. Receipts are uploaded to Spendwise within ten days of returning. Taxis are paid
back only after 22:00 or when carrying demo equipment.

## Glossary

MTTA: mean time to acknowledge, the average time between a page and its acknowledgement.
CSAT: the customer satisfaction score, asked for after every closed ticket.

## Meetings

The support team meets every Tuesday at 10:00 for thirty minutes; meetings never run over
lunch, and the desk keeps two agents on the phones while the rest are in the meeting.
"""


@pytest.fixture
async def support_store(
    make_settings: Callable[..., Settings],
    embedder: SentenceTransformerEmbeddings,
    tmp_path: Path,
) -> AsyncIterator[KnowledgeStore]:
    """A knowledge base holding the support handbook (production chunk size)."""
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "support.md").write_text(SUPPORT_HANDBOOK, encoding="utf-8")
    settings = make_settings(chunk_size=1200, chunk_overlap=200)
    opened = await KnowledgeStore.open(settings, embeddings=embedder, name="support")
    assert (await opened.ingest_paths([folder])).ok
    yield opened
    await opened.close()


@pytest.fixture
async def meals(
    knowledge_db: str, embedder: SentenceTransformerEmbeddings
) -> AsyncIterator[PersonalService]:
    """The user's food log (two meals), in the same Postgres (pgvector)."""
    pool = AsyncConnectionPool(
        knowledge_db, min_size=1, max_size=4, open=False,
        kwargs={"autocommit": True, "prepare_threshold": None, "row_factory": dict_row},
    )  # fmt: skip
    await pool.open()
    service = PersonalService(pool, embedder)
    await service.setup()
    for when, kind, what in [
        ("2026-11-20T19:30:00+00:00", "dinner", "Chicken curry with rice"),
        ("2026-11-21T08:00:00+00:00", "breakfast", "Greek yogurt with honey"),
    ]:
        data = MealCreate.model_validate(
            {"eaten_at": when, "meal_type": kind, "description": what, "calories": 500}
        )
        await service.create_meal(OWNER, data, tz="UTC")
    yield service
    await pool.close()


@pytest.fixture
def route(
    make_settings: Callable[..., Settings],
    embedder: SentenceTransformerEmbeddings,
    support_store: KnowledgeStore,
    meals: PersonalService,
) -> Route:
    """``await route(message)``: the decision of the router the graph's ``route`` node builds
    (the shipped agents, the settings' thresholds, no chat model)."""
    settings = make_settings(llm_provider="none")
    services = agent_services(settings, embeddings=embedder, resources=[support_store, meals])
    router: Router = RouterCache(build_registry()).for_services(services)

    async def decide(message: str) -> RouteDecision:
        return await router.decide(message, RunContext(owner=OWNER))

    return decide


async def test_a_short_question_that_one_sentence_of_a_long_section_answers_is_the_handbooks(
    route: Route,
) -> None:
    # the section is about complaints in general; one of its twelve sentences holds the
    # answer, and the question is worded with another form of its words (a transcript, kept)
    chosen = await route("how long is a chat transcript kept?")
    assert (chosen["agent"], chosen["method"]) == ("knowledge", "data"), chosen


def test_a_passage_is_matched_by_stems_and_by_words_written_joined() -> None:
    text = (
        "Deploys happen on weekdays only. Escalation goes to the release captain when a "
        "canary fails. A rollback is started by the on-call engineer."
    )
    hit = SearchHit(chunk_id="c1", document_id="d1", title="Releases", source="releases.md",
                    text=text, chunk_index=0, rank=1, fused_score=1.0, rrf_score=1.0,
                    relevance=0.2)  # fmt: skip
    # "escalating" meets "Escalation", "failed" meets "fails"
    question = "who is escalating a failed canary?"
    idf = dict.fromkeys(passage_stems(question), 1.0)
    assert passage_score(question, [hit], idf) == 1.0
    # "roll back" meets "rollback"
    question = "who starts to roll back?"
    idf = dict.fromkeys(passage_stems(question), 1.0)
    assert passage_score(question, [hit], idf) == 1.0
    # one shared word is no evidence ("weekdays" alone), and a word no passage holds counts
    assert passage_score("any plans for the weekdays?", [hit], {"plan": 1.0, "weekday": 1.0}) == 0


async def test_two_incidental_keywords_do_not_outweigh_data_that_answers_the_message(
    route: Route,
) -> None:
    # "meal" and "dinner" are the food agent's words; the user's meals do not answer it, the
    # handbook's travel policy does
    chosen = await route("does the meal allowance include dinner on site visits?")
    assert (chosen["agent"], chosen["method"]) == ("knowledge", "data"), chosen
    # "help" and "hello" (inside the pasted test) are the chat agent's words; the test code is
    # the test-analysis agent's data
    pasted = "help, I wrote this hello test, is it fine?\n\ndef test_greeting():\n" \
        "    assert greet() == 'hello world'\n"  # fmt: skip
    chosen = await route(pasted)
    assert (chosen["agent"], chosen["method"]) == ("test_analysis", "data"), chosen


async def test_a_calendar_question_sharing_a_handbook_word_is_the_calendars(
    route: Route,
) -> None:
    # the handbook mentions meetings (a marginal data match); the message reads as a request
    # about the user's own calendar
    chosen = await route("how many meetings have I got on Thursday?")
    assert (chosen["agent"], chosen["method"]) == ("event", "semantic"), chosen


async def test_small_talk_about_work_is_conversation_not_a_task(route: Route) -> None:
    # it names deadlines and work, and resembles the task agent's examples most of all agents
    chosen = await route("so many deadlines at work this month, I'm exhausted")
    assert chosen["agent"] == "chat" and chosen["reason"].startswith("small talk"), chosen


def test_code_evidence_reads_code_in_prose_and_python_named_with_an_artefact() -> None:
    # code written inline, not pasted as a block and with no two coding keywords
    assert code_evidence("why is ' '.join(parts) faster than concatenating?") == CODE
    assert code_evidence("explain this: {n: n * n for n in nums}") == CODE
    assert code_evidence("is `counter -= 1` the same as counter = counter - 1 // ok?") == CODE
    # Python misspelt, with what to write
    assert code_evidence("pythno script to rename every file in a folder") == ABOUT
    # prose with dots, parentheses or clock times is no code; a question about tests is the
    # test-analysis agent's
    for prose in (
        "see example.com for the details",
        "Mr. Smith (our CFO) signs it off",
        "my 1:1 is at 10:30, is that fine?",
        "is a loop over cases in a test a smell?",
    ):
        assert code_evidence(prose) is None, prose


def test_a_span_of_clock_time_is_an_events_and_a_count_is_not() -> None:
    assert time_span("block 9:30-10:15 for the design review")
    assert time_span("dentist next Friday from 8 to 9am")
    assert not time_span("scale the pool from 2 to 3 workers")
    assert not time_span("remind me at 5pm to water the plants")


async def test_code_inline_in_a_question_is_the_coding_agents(route: Route) -> None:
    for message in (
        "what does sorted(items, key=lambda p: p.price) return for ties?",
        "pythno script to rename every file in a folder",
    ):
        chosen = await route(message)
        assert (chosen["agent"], chosen["method"]) == ("coding", "data"), (message, chosen)


async def test_a_request_with_a_span_of_clock_time_is_the_calendars(route: Route) -> None:
    # it reads like a to-do ("set up a call"), and the user has no events stored yet
    chosen = await route("set up a call with the landlord on the 14th, 16:00-16:45")
    assert chosen["agent"] == "event", chosen


async def test_logging_what_one_ate_or_drank_is_the_food_logs(route: Route) -> None:
    # personal logging phrasing with an amount, no meal word the food log holds
    for message in (
        "jot down a turkey sandwich I had at noon, around 450 kcal",
        "track the recovery drink after my swim, 20 g of protein",
    ):
        chosen = await route(message)
        assert chosen["agent"] == "food", (message, chosen)


async def test_small_talk_about_feelings_at_work_is_conversation(route: Route) -> None:
    for message in (
        "this sprint is wearing me out, how do people cope?",
        "I feel a bit low after the team meeting today",
    ):
        chosen = await route(message)
        assert chosen["agent"] == "chat", (message, chosen)


def test_analysis_evidence_needs_a_measure_of_the_dataset_and_an_operation_on_it() -> None:
    measures = ("defect rate", "plant", "revenue")
    assert analysis_evidence("which plant had the highest defect rate in spring?", measures)
    assert analysis_evidence("break down revenue for me", measures) == ANALYSIS
    # an operation on something else, a measure without an operation, code over the data
    assert analysis_evidence("what share of my week goes to meetings?", measures) is None
    assert analysis_evidence("our plant on the balcony needs water", measures) is None
    assert analysis_evidence("a pandas function for revenue by month", measures) is None


async def test_one_measure_and_an_analysis_of_it_is_the_analytics_agents(route: Route) -> None:
    chosen = await route("break down the revenue for me")
    assert (chosen["agent"], chosen["method"]) == ("analytics", "data"), chosen


def test_a_command_to_create_or_change_an_item_is_not_a_question_to_the_documents() -> None:
    assert is_command("remind me to reread the complaints section before Monday")
    assert is_command("please reschedule the supervisor sync to 10:00")
    assert is_command("can you check off 'renew the badge'")
    assert not is_command("remind me what a late-delivery voucher is worth")
    assert not is_command("how do I book a hotel for an on-site visit?")


async def test_a_personal_request_sharing_handbook_words_is_the_personal_agents(
    route: Route,
) -> None:
    # "complaint", "escalation" are the handbook's words; the message asks to keep a to-do,
    # which the knowledge agent cannot (its data matched 0.55 before: knowledge by data); with
    # no task keyword or stored task like it, the default agent asks what to do
    chosen = await route("put rereading the complaint escalation rules on my list for Monday")
    assert chosen["agent"] != "knowledge", chosen
    chosen = await route("remind me to reread the complaints escalation rules for supervisors")
    assert chosen["agent"] == "task", chosen


async def test_a_question_about_the_assistant_itself_is_the_default_agents(route: Route) -> None:
    # it names a domain ("food diary", "meetings"), and resembles that agent's examples
    for message in (
        "which of your tools takes care of my food diary?",
        "what else can you do besides booking meetings?",
    ):
        chosen = await route(message)
        assert chosen["agent"] == "chat", (message, chosen)


def test_a_request_for_code_that_names_no_python_is_code_evidence() -> None:
    # a term only programming uses, a function asked for by what it does, a module attribute
    for request in (
        "write me a decorator that logs how long a call takes",
        "why is my recursive permutation generator so slow?",
        "give me a snippet that reads a config file",
        "turn a nested dict into dotted keys",
        "function that checks whether a string is a palindrome",
        "the upload hangs forever on requests.post, any idea?",
        "code up a quick binary search",
    ):
        assert code_evidence(request) == REQUEST, request
    # the same words in other senses, and a script of the handbook's
    for other in (
        "what is the method to claim travel expenses?",
        "how do I run the weekly export script?",
        "what's the function of the shift supervisor?",
    ):
        assert code_evidence(other) is None, other


async def test_code_that_works_on_another_agents_data_is_the_coding_agents(route: Route) -> None:
    for message in (
        # names the food agent's words (its keywords tie with the coding agent's)
        "write a python function that averages the protein of my breakfast meals",
        # a calendar word, and no coding keyword
        "function that finds free slots between two lists of meetings",
    ):
        chosen = await route(message)
        assert chosen["agents"] == ["coding"], (message, chosen)


def test_a_command_or_question_worded_for_a_personal_kind_of_item() -> None:
    # a task: opened with "todo", put on the user's list, checked off, not to be forgotten
    for task in (
        "todo renew the parking permit, high prio",
        "stick 'order new glasses' on my to-do list",
        "tick off 'pay the plumber'",
        "do not let me forget the library books",
    ):
        assert task_wording(task), task
    # an event: moved or blocked to a clock time or a day, added on a day at a time, or a
    # question whether the user is free or what is on for a day
    for event in (
        "push the dentist to 4:30",
        "shift the yoga class to thursday",
        "block 2 to 4 tomorrow for deep work",
        "add drinks with the neighbours on saturday at 8pm",
        "are we free on sunday?",
        "whats on this weekend",
    ):
        assert event_wording(event), event
    # a task named, a count rather than a time, a question about something else
    for other in (
        "push the deadline for the report to friday",
        "move 2 to 4 replicas into the new region",
        "what's happening with the quarterly numbers?",
        "todos are endless this month",
    ):
        assert not event_wording(other) and not task_wording(other), other
    assert asks_event_detail("where is the board dinner?")
    assert asks_event_detail("how long does the kickoff last?")


async def test_personal_commands_that_name_no_stored_item_reach_their_agent(
    route: Route,
) -> None:
    # no two keywords, no stored task or event like them (the user only logged meals)
    for message, agent in (
        ("move my physio to 5", "event"),
        ("block 13:00 to 14:30 on monday for the quarterly report", "event"),
        ("am i free thursday morning?", "event"),
        ("todo return the rental car", "task"),
        ("put 'renew the badge' on my list for tuesday", "task"),
        ("dont let me forget the gym bag", "task"),
    ):
        chosen = await route(message)
        assert chosen["agent"] == agent, (message, chosen)


async def test_a_question_about_the_assistants_own_tastes_is_conversation(route: Route) -> None:
    # the user logged a chicken curry: the food agent's data matches the subject, but the
    # question asks the assistant, not the user's diary
    for message in (
        "what is your favourite curry?",
        "do you like chicken curry?",
    ):
        chosen = await route(message)
        assert chosen["agent"] == "chat", (message, chosen)


async def test_a_test_named_by_its_identifier_is_the_test_agents(route: Route) -> None:
    # prose about one test, no pasted code and at most one keyword
    for message in (
        "is test_refund_over_limit doing too much? it asserts six different things",
        "TestVoucherRules keeps timing out in CI, why would that be",
    ):
        chosen = await route(message)
        assert (chosen["agent"], chosen["method"]) == ("test_analysis", "data"), (message, chosen)
    # a path to a test file or the word alone names no test
    chosen = await route("where do the vouchers rules live, tests/test_vouchers.py?")
    assert chosen["agent"] != "test_analysis", chosen


def test_a_count_or_a_superlative_of_a_measure_is_an_analysis() -> None:
    measures = ("defect rate", "plant", "revenue", "sales", "units built")
    assert analysis_evidence("how many units built did the plant report in may", measures)
    assert analysis_evidence("which month was our slowest for sales?", measures) == ANALYSIS
    assert analysis_evidence("total revenue for 2025 please", measures) == ANALYSIS
    # a count of something that is no measure of the dataset
    assert analysis_evidence("how many approvals does a release need?", measures) is None


def test_an_unclaimed_question_near_the_threshold_is_asked_of_the_documents() -> None:
    # the router's last rule before the default agent, on the probes' scores alone: a
    # question whose documents match nearly as well as the threshold goes to the knowledge
    # agent, even when a stored item matches it about as well; a statement or a weaker match
    # stays with the default agent
    router = Router(build_registry(), embeddings=None, llm=lambda: None)
    support = router.evidence.data_support
    near = {"knowledge": support + 0.03, "task": support + 0.05}
    chosen = router.unclaimed_question("the queue is still down, who takes over now?", near)
    assert chosen is not None and chosen["agent"] == "knowledge", chosen
    assert router.unclaimed_question("the queue is still down, sigh", near) is None
    assert router.unclaimed_question("could you suggest a podcast for the train?", near) is None
    weak = {"knowledge": support - 0.1}
    assert router.unclaimed_question("who takes over now?", weak) is None


async def test_a_short_question_just_below_the_data_threshold_is_the_handbooks(
    route: Route,
) -> None:
    chosen = await route("customer waited 15 min on a complaint - then what?")
    assert chosen["agent"] == "knowledge", chosen
