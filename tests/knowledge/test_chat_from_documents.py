"""No dead end without a model (issue 24 item 6): with LLM_PROVIDER=none, a question about the
key's documents that reaches the chat agent is answered from the knowledge base, quoted, cited
and saying so; small talk still gets the list of what the agents do. Through the real app
(Redis, Postgres 16 + pgvector, MiniLM) over POST /chat.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from config import Settings
from main import create_app
from tests.knowledge.test_api import KEY, app_settings, files  # noqa: F401 (fixture)

#: An ops handbook written for this test (markdown, one section per topic).
HANDBOOK = {
    "oncall.md": (
        "# On-call handbook\n\n"
        "## Paging\n\n"
        "The primary on-call engineer acknowledges a page within 5 minutes. Escalation goes "
        "to the team lead after 20 minutes without an acknowledgement, and to the head of "
        "engineering after 45 minutes.\n\n"
        "## Handover\n\n"
        "The on-call rotation changes every Monday at 10:00; the outgoing engineer writes a "
        "handover note in the ops channel.\n"
    ),
    "release.md": (
        "# Release process\n\n"
        "## Canary stage\n\n"
        "Every release runs as a canary on 5 percent of traffic for 30 minutes. The canary "
        "is rolled back automatically when its error rate threshold of 2 percent is "
        "exceeded.\n\n"
        "## Freeze\n\n"
        "Production deploys are frozen from Friday 15:00 until Monday 09:00; the release "
        "manager approves exceptions.\n"
    ),
    "backups.md": (
        "# Database backups\n\n"
        "Snapshots of the orders database are taken every 6 hours and retained for 35 days "
        "in the cold-storage bucket.\n"
    ),
}

#: (question, text the answer must quote, the document it must cite)
QUESTIONS = [
    ("who do I escalate to after 20 minutes?", "team lead after 20 minutes", "On-call handbook"),
    ("what is the error rate threshold for the canary stage?", "2 percent", "Release process"),
    ("how long are snapshots of the orders database retained?", "35 days", "Database backups"),
    ("when does the on-call rotation change?", "every Monday at 10:00", "On-call handbook"),
    ("who approves a deploy during the Friday freeze?", "release manager", "Release process"),
]
SMALL_TALK = ["hello", "Tell me a joke.", "How are you today?", "What's the capital of Peru?"]


@pytest.fixture
def client(app_settings: Callable[..., Settings]) -> Iterator[TestClient]:  # noqa: F811
    app = create_app(app_settings(chunk_size=1200, chunk_overlap=200))
    with TestClient(app, headers={"X-API-Key": KEY}) as test_client:
        named = {name: text.encode() for name, text in HANDBOOK.items()}
        assert test_client.post("/documents", files=files(named)).status_code == 200
        yield test_client


def _ask(client: TestClient, message: str, **extra: object) -> dict[str, object]:
    response = client.post("/chat", json={"message": message, **extra})
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


@pytest.mark.parametrize(("question", "quoted", "title"), QUESTIONS)
def test_the_chat_agent_without_a_model_answers_from_the_documents(
    client: TestClient, question: str, quoted: str, title: str
) -> None:
    body = _ask(client, question, agent="chat")
    answer = str(body["answer"])
    assert body["agent"] == "chat" and body["methods"] == {"chat": "extractive"}
    assert "No language model is configured" in answer and "quoted from your documents" in answer
    assert quoted in answer and "Sources:\n[1] " + title in answer
    assert "These agents work without a model" not in answer  # not the dead end
    data = body["data"]["chat"]  # type: ignore[index]
    assert data["answered_from"] == "knowledge"
    assert data["score"] >= data["threshold"]
    assert data["citations"][0]["title"] == title


@pytest.mark.parametrize("message", SMALL_TALK)
def test_small_talk_still_gets_what_the_agents_can_do(client: TestClient, message: str) -> None:
    body = _ask(client, message, agent="chat")
    answer = str(body["answer"])
    assert body["methods"] == {"chat": "offline"}
    assert "These agents work without a model" in answer and "- knowledge:" in answer
    assert "quoted from your documents" not in answer


def test_routed_questions_never_end_at_the_capability_list(client: TestClient) -> None:
    """As a new user asks: no agent named. Whichever agent routing picks, the handbook's
    answer comes back (the knowledge agent's, or the chat agent's from the documents)."""
    for question, quoted, title in QUESTIONS:
        body = _ask(client, question)
        answer = str(body["answer"])
        assert quoted in answer, (question, body["agent"], answer)
        assert f"[1] {title}" in answer
        assert "These agents work without a model" not in answer


#: (options.filters, whether the handbook, uploaded privately with {"team": "ops"}, is searched)
FILTERED = [
    ({"collection": "shared"}, False),
    ({"metadata": {"team": "payments"}}, False),
    ({"metadata": {"team": "ops"}}, True),
    ({"collection": "private", "title": ["On-call handbook", "Release process"]}, True),
]


def test_the_answer_without_a_model_and_routing_search_what_the_filters_leave(
    app_settings: Callable[..., Settings],  # noqa: F811
) -> None:
    """The chat option ``filters`` narrows the model-free answer and the routing probe as it
    narrows the knowledge agent's retrieval: a filter that leaves out the only document that
    answers gets the capability list (and no route on that document's evidence); a filter
    that keeps it gets the cited answer."""
    question, quoted, title = QUESTIONS[0]
    app = create_app(app_settings(chunk_size=1200, chunk_overlap=200))
    with TestClient(app, headers={"X-API-Key": KEY}) as client:
        named = {"oncall.md": HANDBOOK["oncall.md"].encode()}
        meta = {"metadata": '{"team": "ops"}'}
        up = client.post("/documents", files=files(named), data=meta)
        assert up.status_code == 200 and up.json()["added"] == 1, up.text
        for filters, searched in FILTERED:
            options = {"filters": filters}
            body = _ask(client, question, agent="chat", options=options)
            answer = str(body["answer"])
            if searched:
                assert body["methods"] == {"chat": "extractive"}, (filters, answer)
                assert quoted in answer and "Sources:\n[1] " + title in answer
                assert body["data"]["chat"]["citations"][0]["title"] == title  # type: ignore[index]
            else:
                assert body["methods"] == {"chat": "offline"}, (filters, answer)
                assert "These agents work without a model" in answer
                assert quoted not in answer and "quoted from your documents" not in answer

            # routed (no agent named): the knowledge probe searched the same documents
            routed = _ask(client, question, options=options)
            route = routed["route"]
            assert isinstance(route, dict)
            if searched:
                assert quoted in str(routed["answer"]), (filters, routed)
            else:
                assert quoted not in str(routed["answer"]), (filters, routed)
                assert route["method"] != "data", (filters, route)
                assert "knowledge agent's" not in route["reason"], (filters, route)
