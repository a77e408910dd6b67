"""The Agent Server store API with the real `langgraph-sdk` against a real API process on a
Postgres with pgvector: items, search (filter, page, semantic query), namespaces, TTL, bounds,
owner scoping (a second key sees nothing), and the personal agents' memory seen through it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client, get_sync_client
from langgraph_sdk.errors import NotFoundError

from tests.agent_server.conftest import KEY_A, KEY_B, api_env, wait_for
from tests.support.pgvector import PgvectorServer
from tests.support.processes import ApiProcess
from tests.support.servers import RedisServer
from tests.support.stub_openai import StubOpenAI

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def store_server(
    tmp_path_factory: pytest.TempPathFactory,
    redis_server: RedisServer,
    pgvector_server: PgvectorServer,
    stub: StubOpenAI,
) -> Iterator[ApiProcess]:
    """An API process on a fresh pgvector database, with no chat model: the personal agents
    take the deterministic path, so "remember that ..." keeps a fact without an LLM."""
    folder = tmp_path_factory.mktemp("store-server")
    env = api_env(folder, redis_server.url, pgvector_server.database(), stub)
    env["LLM_PROVIDER"] = "none"
    env["STORE_MAX_VALUE_BYTES"] = "2048"
    env["STORE_MAX_NAMESPACE_DEPTH"] = "4"
    process = ApiProcess(env, log_path=folder / "api.log", module="tests.agent_server.serve")
    process.start(timeout=180)
    yield process
    process.stop()


def test_items_round_trip_with_the_sdk_and_a_second_key_sees_nothing(
    store_server: ApiProcess,
) -> None:
    a: Any = get_sync_client(url=store_server.url, api_key=KEY_A)
    b: Any = get_sync_client(url=store_server.url, api_key=KEY_B)
    a.store.put_item(["notes", "work"], "n1", {"text": "ship the release", "prio": 2})
    a.store.put_item(["notes", "work"], "n2", {"text": "review the budget", "prio": 5})
    a.store.put_item(["notes", "home"], "n3", {"text": "water the plants", "prio": 1})

    item = a.store.get_item(["notes", "work"], "n1")
    assert item["namespace"] == ["notes", "work"] and item["key"] == "n1"
    assert item["value"] == {"text": "ship the release", "prio": 2}
    assert item["created_at"] and item["updated_at"]

    found = a.store.search_items(["notes"], limit=10)["items"]
    assert {i["key"] for i in found} == {"n1", "n2", "n3"}
    assert all(i["namespace"][0] == "notes" for i in found)
    filtered = a.store.search_items(["notes"], filter={"prio": {"$gte": 2}})["items"]
    assert {i["key"] for i in filtered} == {"n1", "n2"}
    assert {i["key"] for i in a.store.search_items(["notes"], filter={"prio": 1})["items"]} == {
        "n3"
    }
    page = a.store.search_items(["notes"], limit=2, offset=2)["items"]
    assert len(page) == 1

    spaces = a.store.list_namespaces(prefix=["notes"])["namespaces"]
    assert sorted(spaces) == [["notes", "home"], ["notes", "work"]]
    assert a.store.list_namespaces(prefix=["notes"], max_depth=1)["namespaces"] == [["notes"]]
    assert a.store.list_namespaces(suffix=["home"])["namespaces"] == [["notes", "home"]]

    # the second key: nothing listed, nothing found, nothing reachable
    assert b.store.search_items([], limit=100)["items"] == []
    assert b.store.list_namespaces()["namespaces"] == []
    with pytest.raises(NotFoundError):
        b.store.get_item(["notes", "work"], "n1")
    b.store.delete_item(["notes", "work"], "n1")  # another owner's item: untouched
    b.store.put_item(["notes", "work"], "n1", {"text": "b's own"})
    assert a.store.get_item(["notes", "work"], "n1")["value"]["text"] == "ship the release"
    assert b.store.get_item(["notes", "work"], "n1")["value"] == {"text": "b's own"}

    a.store.delete_item(["notes", "work"], "n1")
    with pytest.raises(NotFoundError):
        a.store.get_item(["notes", "work"], "n1")
    assert b.store.get_item(["notes", "work"], "n1")["value"] == {"text": "b's own"}


async def test_semantic_search_ranks_by_meaning(store_server: ApiProcess) -> None:
    """The async SDK, a `query`: the item about the same thing comes first, with a score."""
    client: Any = get_client(url=store_server.url, api_key=KEY_A)
    ns = ["recipes"]
    await client.store.put_item(ns, "r1", {"text": "a spicy vegetable curry with rice"})
    await client.store.put_item(ns, "r2", {"text": "how to change a flat bicycle tyre"})
    await client.store.put_item(ns, "r3", {"text": "chocolate cake for a birthday"})
    found = (await client.store.search_items(ns, query="indian food dinner", limit=3))["items"]
    assert [i["key"] for i in found][0] == "r1"
    assert all(isinstance(i["score"], float) for i in found)
    bike = (await client.store.search_items(ns, query="repair my bike wheel", limit=1))["items"]
    assert bike[0]["key"] == "r2"
    # index=False: stored, found by key and listing, but not in a ranked search
    await client.store.put_item(ns, "r4", {"text": "curry again"}, index=False)
    ranked = (await client.store.search_items(ns, query="curry", limit=10))["items"]
    assert "r4" not in {i["key"] for i in ranked}
    assert (await client.store.get_item(ns, "r4"))["value"] == {"text": "curry again"}


def test_an_item_with_a_ttl_expires(store_server: ApiProcess) -> None:
    client: Any = get_sync_client(url=store_server.url, api_key=KEY_A)
    client.store.put_item(["ttl"], "short", {"v": 1}, ttl=0.02)  # 1.2 seconds
    client.store.put_item(["ttl"], "long", {"v": 2}, ttl=60)
    assert client.store.get_item(["ttl"], "long")["value"] == {"v": 2}

    def gone() -> bool:
        try:
            client.store.get_item(["ttl"], "short", refresh_ttl=False)
        except NotFoundError:
            return True
        return False

    wait_for(gone, timeout=30, what="the item with a 1.2 s TTL to expire")
    assert {i["key"] for i in client.store.search_items(["ttl"])["items"]} == {"long"}


def test_bounds_answer_4xx_with_the_setting(store_server: ApiProcess) -> None:
    headers = {"x-api-key": KEY_A}
    url = store_server.url

    def put(body: dict[str, Any]) -> httpx.Response:
        return httpx.put(f"{url}/store/items", json=body, headers=headers, timeout=60)

    big = put({"namespace": ["n"], "key": "k", "value": {"x": "y" * 5000}})
    assert big.status_code == 413 and "STORE_MAX_VALUE_BYTES" in big.text
    deep = put({"namespace": ["a", "b", "c", "d", "e"], "key": "k", "value": {}})
    assert deep.status_code == 422 and "STORE_MAX_NAMESPACE_DEPTH" in deep.text
    dotted = put({"namespace": ["a.b"], "key": "k", "value": {}})
    assert dotted.status_code == 422 and "'.'" in dotted.text
    assert put({"namespace": [], "key": "k", "value": {}}).status_code == 422
    assert put({"namespace": ["n"], "key": "k", "value": [1]}).status_code == 422
    assert put({"namespace": ["n"], "key": "", "value": {}}).status_code == 422
    assert put({"namespace": ["n"], "key": "k", "value": {}, "ttl": -1}).status_code == 422
    search = httpx.post(
        f"{url}/store/items/search", json={"limit": 5_000}, headers=headers, timeout=60
    )
    assert search.status_code == 422 and "STORE_MAX_LIMIT" in search.text
    bad_filter = httpx.post(
        f"{url}/store/items/search",
        json={"filter": {"x": {"$regex": "a"}}},
        headers=headers,
        timeout=60,
    )
    assert bad_filter.status_code == 422 and "$eq" in bad_filter.text
    missing = httpx.get(
        f"{url}/store/items",
        params={"namespace": "n", "key": "nope"},
        headers=headers,
        timeout=60,
    )
    assert missing.status_code == 404 and "search" in missing.text
    assert (
        httpx.get(
            f"{url}/store/items", params={"key": "k"}, headers=headers, timeout=60
        ).status_code
        == 422
    )
    assert httpx.post(f"{url}/store/namespaces", json={}, timeout=60).status_code == 401


def test_the_agents_memory_is_the_owners_store(store_server: ApiProcess) -> None:
    """A fact the task agent keeps ("remember that ...") is the owner's item in
    ["personal", "facts"], found by a semantic search; another key does not see it."""
    a: Any = get_sync_client(url=store_server.url, api_key=KEY_A)
    b: Any = get_sync_client(url=store_server.url, api_key=KEY_B)
    thread = a.threads.create()
    a.runs.wait(
        thread["thread_id"],
        "switchyard",
        input={
            "messages": [{"type": "human", "content": "remember that I am allergic to peanuts"}],
            "target_agent": "task",
        },
    )
    facts = a.store.search_items(["personal", "facts"])["items"]
    assert [f["value"]["fact"] for f in facts] == ["I am allergic to peanuts"]
    assert ["personal", "facts"] in a.store.list_namespaces()["namespaces"]
    ranked = a.store.search_items(["personal"], query="food allergy", limit=1)["items"]
    assert ranked[0]["value"]["fact"] == "I am allergic to peanuts"
    assert b.store.search_items(["personal", "facts"])["items"] == []
