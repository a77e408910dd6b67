"""Chat messages with test code: extraction, keyword routing, and the answer."""

from __future__ import annotations

from fastapi.testclient import TestClient

from agents.test_analysis.chat_input import extract_test_files
from agents.test_analysis.spec import analysis_agent
from graph.routing import Router
from graph.workflow import build_registry

REVIEW_REQUEST = """Can you review my pytest tests? I think something is off.

```python
import time

def test_upload():
    time.sleep(3)
    receipt = upload("a.txt")

def test_total():
    assert total([1, 2]) == 3
    assert total([]) == 0
```
"""


def test_fenced_blocks_become_files_named_like_tests() -> None:
    files = extract_test_files(REVIEW_REQUEST)
    assert [f["path"] for f in files] == ["test_snippet.py"]
    assert files[0]["content"].startswith("import time\n")
    two = "```python tests/test_cart.py\ndef test_a():\n    pass\n```\n```py\nassert f()\n```"
    assert [f["path"] for f in extract_test_files(two)] == [
        "tests/test_cart.py",
        "test_snippet_2.py",
    ]


def test_raw_code_is_cut_from_the_prose_around_it() -> None:
    message = "please check this test\ndef test_x():\n    assert f() == 1\nthanks a lot!"
    (file,) = extract_test_files(message)
    assert file["content"] == "def test_x():\n    assert f() == 1\n"


def test_no_code_or_other_languages_extract_nothing() -> None:
    assert extract_test_files("how do I write good pytest tests?") == []
    assert extract_test_files("```bash\npytest -q\n```") == []
    assert (
        extract_test_files("```python ../../etc/test_x.py\ndef test_a(): pass\n```")[0]["path"]
        == "test_snippet.py"
    )  # an unsafe name in a fence is not used


def test_a_review_request_routes_here_by_keywords() -> None:
    registry = build_registry()
    router = Router(registry, embeddings=None, llm=lambda: None)
    decision = router.by_keywords(REVIEW_REQUEST)
    assert decision is not None
    assert decision["agent"] == analysis_agent().name and decision["method"] == "keyword"
    greeting = router.by_keywords("hello, who are you?")
    assert greeting is None or greeting["agent"] != "test_analysis"


def test_a_chat_message_with_test_code_is_answered_with_the_findings(client: TestClient) -> None:
    response = client.post("/chat", json={"message": REVIEW_REQUEST})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["agent"] == "test_analysis" and body["route"]["method"] == "keyword"
    answer = body["answer"]
    assert "rules-only mode" in answer  # no model configured: downgraded, and said so
    assert "`test_snippet.py:4` **sleepy-test**" in answer
    assert "`test_snippet.py:3` **unknown-test**" in answer
    assert "Fix:" in answer
    data = body["data"]["test_analysis"]
    # the chat runs the default profile: two plain pytest asserts are no roulette
    assert {i["smell"] for i in data["issues"]} == {"sleepy-test", "unknown-test"}
    assert data["files"][0]["path"] == "test_snippet.py" and data["quality"]["passed"]

    # the next turn in the same session is analysed afresh, not mixed with the first
    follow = client.post(
        "/chat",
        json={
            "session_id": body["session_id"],
            "message": "and review this pytest test please:\n```python\ndef test_ok():\n"
            "    assert add(1, 2) == 3, 'adds'\n```",
        },
    ).json()
    assert follow["agent"] == "test_analysis"
    assert follow["data"]["test_analysis"]["issues"] == []
    assert "No test smells found." in follow["answer"]


def test_a_request_without_code_gets_guidance(client: TestClient) -> None:
    body = client.post(
        "/chat", json={"message": "please review my pytest unit tests", "agent": "test_analysis"}
    ).json()
    assert "Paste the tests in a fenced block" in body["answer"]


def test_unfenced_code_after_prose_is_taken_as_in_the_offline_help() -> None:
    message = "Review these pytest tests for smells: def test_total(): assert total([1]) == 1"
    (file,) = extract_test_files(message)
    assert file["content"] == "def test_total(): assert total([1]) == 1\n"
    (thanks,) = extract_test_files(message + " thanks!")
    assert thanks["content"] == file["content"]
    multi = "please check: class TestCart(unittest.TestCase):\n    def test_add(self):\n"
    (cls,) = extract_test_files(multi + "        self.assertEqual(add(1), 1)\n")
    assert cls["content"].startswith("class TestCart(unittest.TestCase):")


def test_prose_that_mentions_def_is_not_code() -> None:
    for message in (
        "how do I define a test? I wrote def test_x but it fails",
        "In Python you write def test_name(): to define a test, right?",
        "what does def test mean in python?",
    ):
        assert extract_test_files(message) == []


def test_the_offline_help_example_is_analysed(client: TestClient) -> None:
    response = client.post(
        "/chat",
        json={
            "message": "Review these pytest tests for smells: def test_total(): result = total([1])"
        },
    )
    assert response.status_code == 200, response.text
    data = response.json()["data"]["test_analysis"]
    assert [i["smell"] for i in data["issues"]] == ["unknown-test"]
