"""Charts where people look at them: the answer message carries the chart as a markdown image on
a signed, short-lived link that a browser's `<img>` loads without the API key header.

An Agent Server thread (what agent-chat-ui drives) answers an analytics question; the image URL
is read out of the stored message's content and fetched with no header at all: a PNG. A changed
signature, scope or expiry is 403, an expired link is 403, and another key's chart cannot be
reached by rewriting a link. No model: the deterministic plan answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

from app.api import create_app
from config import Settings
from tools.analytics.chartlinks import ChartLinks, link_secret, owner_scope
from tools.analytics.chartstore import ChartStore

KEYS = ("alice-key", "bob-key")
PUBLIC = "http://testserver"
#: A markdown image: ![alt](url)
IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def keyed_api(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    settings = make_settings(
        api_keys=",".join(KEYS),
        rate_limit_per_minute=10_000,
        analytics_chart_public_url=PUBLIC,
        analytics_chart_link_ttl_seconds=600,
    )
    with TestClient(create_app(settings)) as client:
        yield client


def ask_in_a_thread(client: TestClient, key: str, question: str) -> str:
    """Ask through the Agent Server API as agent-chat-ui does; the last message's content."""
    headers = {"X-API-Key": key}
    thread = client.post("/threads", json={}, headers=headers)
    assert thread.status_code == 200, thread.text
    thread_id = thread.json()["thread_id"]
    run = client.post(
        f"/threads/{thread_id}/runs/wait",
        json={
            "assistant_id": "analytics",
            "input": {"messages": [{"type": "human", "content": question}]},
        },
        headers=headers,
    )
    assert run.status_code == 200, run.text
    state = client.get(f"/threads/{thread_id}/state", headers=headers)
    assert state.status_code == 200, state.text
    last = state.json()["values"]["messages"][-1]
    assert last["type"] == "ai" and last["name"] == "analytics", last
    content = last["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def test_the_answer_message_shows_its_chart_without_the_key(keyed_api: TestClient) -> None:
    content = ask_in_a_thread(keyed_api, KEYS[0], "Units sold by region in 2025")
    found = IMAGE.findall(content)
    assert len(found) == 1, content
    alt, url = found[0]
    print(f"\nanswer image: ![{alt[:80]}...]({url[:90]}...)")
    # the text description stays for screen readers: the chart in words, with its values
    assert alt.startswith("bar chart:") and "region" in alt.lower() and ":" in alt[12:]
    assert url.startswith(f"{PUBLIC}/analytics/chart-link/")
    assert f"[![{alt}]({url})]({url})" in content  # a click opens it at full size
    image = keyed_api.get(url, headers={})  # an <img>: no X-API-Key, no Authorization
    assert image.status_code == 200, image.text
    assert image.headers["content-type"] == "image/png" and image.content.startswith(PNG_MAGIC)
    print(f"signed link served {len(image.content)} bytes of PNG without a key")


def test_an_altered_or_expired_link_is_refused(keyed_api: TestClient) -> None:
    content = ask_in_a_thread(keyed_api, KEYS[0], "Revenue by make in 2025")
    url = IMAGE.findall(content)[0][1]
    parts = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    scope, name = parts.path.rsplit("/", 2)[1:]
    chart_id = name.removesuffix(".png")

    def get(path: str, expires: int | str, signature: str) -> tuple[int, str]:
        response = keyed_api.get(path, params={"expires": expires, "signature": signature})
        return response.status_code, response.json()["error"]["message"]

    # a later expiry with the same signature: forged
    status, message = get(parts.path, int(query["expires"]) + 3600, query["signature"])
    assert status == 403 and "signature does not match" in message
    # another chart id, or another owner's scope (Bob's), under Alice's signature: forged
    other_id = parts.path.replace(chart_id, "0" * 16)
    assert get(other_id, query["expires"], query["signature"])[0] == 403
    bob_scope = parts.path.replace(scope, owner_scope("key-bob"))
    assert get(bob_scope, query["expires"], query["signature"])[0] == 403
    # a genuine signature whose time has passed: expired
    services = keyed_api.app.state.services  # type: ignore[attr-defined]
    secret = keyed_api.portal.call(  # type: ignore[union-attr]
        link_secret, None, services.settings.storage.data_dir, services.stores.redis
    )
    past = ChartLinks(secret, ttl_seconds=60, clock=lambda: 1_000_000.0)
    old = urlsplit(past.url_for_scope(scope, chart_id))
    old_query = {k: v[0] for k, v in parse_qs(old.query).items()}
    status, message = get(old.path, old_query["expires"], old_query["signature"])
    assert status == 403 and "expired" in message
    # the untouched link still works
    assert keyed_api.get(url).status_code == 200


def test_another_keys_chart_stays_unreadable(keyed_api: TestClient) -> None:
    alice, bob = ({"X-API-Key": k} for k in KEYS)
    content = ask_in_a_thread(keyed_api, KEYS[0], "Revenue by region in 2025")
    url = IMAGE.findall(content)[0][1]
    chart_id = urlsplit(url).path.rsplit("/", 1)[1].removesuffix(".png")
    # Bob's key on the keyed URL: 404, as for a chart that does not exist
    assert keyed_api.get(f"/analytics/chart/{chart_id}.png", headers=bob).status_code == 404
    assert keyed_api.get(f"/analytics/chart/{chart_id}.png", headers=alice).status_code == 200
    # Bob's own link to his own answer does not open Alice's chart under his scope
    bob_content = ask_in_a_thread(keyed_api, KEYS[1], "Units sold by make in 2025")
    bob_url = IMAGE.findall(bob_content)[0][1]
    bob_parts = urlsplit(bob_url)
    swapped = bob_parts.path.rsplit("/", 1)[0] + f"/{chart_id}.png"
    assert keyed_api.get(f"{swapped}?{bob_parts.query}").status_code == 403


def test_rest_answers_carry_the_signed_link_too(keyed_api: TestClient) -> None:
    body = keyed_api.post(
        "/analytics/query",
        json={"question": "Units sold by make in 2025"},
        headers={"X-API-Key": KEYS[0]},
    ).json()
    chart = body["chart"]
    assert chart["image_url"].startswith(PUBLIC) and chart["url"].startswith("/analytics/chart/")
    assert keyed_api.get(chart["image_url"]).content.startswith(PNG_MAGIC)


def test_a_reopened_thread_shows_its_chart_again(keyed_api: TestClient) -> None:
    """The stored message's link has expired; the owner's read of the thread's state and
    history (what agent-chat-ui loads on reopening) carries a fresh one."""
    headers = {"X-API-Key": KEYS[0]}
    services = keyed_api.app.state.services  # type: ignore[attr-defined]
    store = services.agents.engine(ChartStore)
    current = store.links
    assert current is not None
    store.links = replace(current, clock=lambda: 1_000_000.0)  # links made long ago
    try:
        thread = keyed_api.post("/threads", json={}, headers=headers).json()["thread_id"]
        question = {"messages": [{"type": "human", "content": "Revenue by make in 2025"}]}
        run = keyed_api.post(
            f"/threads/{thread}/runs/wait",
            json={"assistant_id": "analytics", "input": question},
            headers=headers,
        )
        assert run.status_code == 200, run.text
    finally:
        store.links = current
    stale = IMAGE.findall(run.json()["messages"][-1]["content"])[0][1]
    assert keyed_api.get(stale).status_code == 403  # expired, as stored
    state = keyed_api.get(f"/threads/{thread}/state", headers=headers).json()
    fresh = IMAGE.findall(state["values"]["messages"][-1]["content"])[0][1]
    assert fresh != stale and keyed_api.get(fresh).content.startswith(PNG_MAGIC)
    history = keyed_api.post(f"/threads/{thread}/history", json={"limit": 3}, headers=headers)
    assert stale not in history.text and "/analytics/chart-link/" in history.text


def test_only_the_owners_genuine_links_are_signed_again() -> None:
    links = ChartLinks(b"s" * 32, ttl_seconds=600, base_url=PUBLIC, clock=lambda: 2_000_000.0)
    old = replace(links, clock=lambda: 1_000_000.0)
    own = old.url("key-alice", "0123456789abcdef")
    other = old.url("key-bob", "0123456789abcdef")
    forged = own.replace("signature=", "signature=x")
    text = f"![a]({own}) ![b]({other}) ![c]({forged})"
    refreshed = links.refresh(text, "key-alice")
    assert own not in refreshed and other in refreshed and forged in refreshed
    assert links.url("key-alice", "0123456789abcdef") in refreshed
