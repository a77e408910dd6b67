"""Helpers for the graph-level analysis tests: synthetic suites and LLM stand-ins.

- :func:`synthetic_suite` writes ``n`` test functions over a few files (each test sleeps and
  asserts nothing, so the rules have findings too);
- :class:`BatchRecorder` is an LLM answer function for both the stub server (request JSON) and
  the scripted model (messages): it reads the batch id and the first test's header from the
  prompt, records one call for that batch, and reports one ``magic-number`` finding on the
  first test's ``def`` line.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from typing import Any

from langchain_core.messages import BaseMessage

_BATCH = re.compile(r"Batch ([0-9a-f]+) \(")
_HEADER = re.compile(r"^### (\S+) :: (\S+) \(lines (\d+)-(\d+)\)", re.M)


def synthetic_suite(
    tests: int, *, per_file: int = 30, folder: str = "tests"
) -> list[dict[str, str]]:
    """``tests`` test functions in files of ``per_file``: [{path, content}]."""
    files = []
    for start in range(0, tests, per_file):
        body = ["import time", ""]
        for i in range(start, min(start + per_file, tests)):
            body += [f"def test_case_{i}():", f"    value = {i} * 3", "    time.sleep(0)", ""]
        files.append(
            {"path": f"{folder}/test_part_{start // per_file}.py", "content": "\n".join(body)}
        )
    return files


def prompt_of(request: dict[str, Any]) -> str:
    """The user prompt of an OpenAI chat-completions request."""
    users = [m for m in request.get("messages", []) if m.get("role") == "user"]
    return str(users[0].get("content") or "") if users else ""


class BatchRecorder:
    """Counts review calls per batch id and answers each with one finding."""

    def __init__(self, *, confidence: float = 0.9, smell: str = "magic-number") -> None:
        self.calls: Counter[str] = Counter()
        self.finished: list[tuple[float, str]] = []
        self.confidence = confidence
        self.smell = smell
        self._lock = threading.Lock()
        self._quota: int | None = None
        self._answered = 0
        self._gate = threading.Event()
        self._gate.set()

    def hold_after(self, answered: int) -> None:
        """Answer ``answered`` more calls, then hold every later call (counted, unanswered)
        until :meth:`release`: a test then knows exactly which batches were answered, instead
        of racing the clock."""
        with self._lock:
            self._quota, self._answered = answered, 0
            self._gate.clear()

    def release(self) -> None:
        """Let held calls answer, and answer every later one."""
        with self._lock:
            self._quota = None
        self._gate.set()

    def answer(self, prompt: str) -> dict[str, Any]:
        batch = _BATCH.search(prompt)
        header = _HEADER.search(prompt)
        assert batch is not None and header is not None, "not a review prompt"
        with self._lock:
            self.calls[batch.group(1)] += 1
            hold = self._quota is not None and self._answered >= self._quota
            if not hold:
                self._answered += 1
        if hold:
            self._gate.wait(timeout=300)  # released by the test (or it is long over)
        with self._lock:
            self.finished.append((time.monotonic(), batch.group(1)))
        path, _name, start, _end = header.groups()
        line = int(start)
        return {
            "findings": [
                {
                    "file": path,
                    "line": line,
                    "smell": self.smell,
                    "confidence": self.confidence,
                    "message": "The test multiplies by a literal.",
                    "suggestion": "Name the constant.",
                }
            ]
        }

    # the stub server's responder: request JSON -> tool arguments
    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.answer(prompt_of(request))

    # the scripted model's responder: (messages, schema) -> structured answer
    def scripted(self, messages: list[BaseMessage], schema: Any) -> dict[str, Any]:
        human = [m for m in messages if m.type == "human"]
        return self.answer(str(human[0].content))

    @property
    def total(self) -> int:
        return sum(self.calls.values())


def saved_batches(redis_url: str, thread_id: str, owner: str = "anonymous") -> set[str]:
    """Ids of the LLM batches whose review is persisted in the checkpoints of ``owner``'s
    analysis ``thread_id`` (read straight from Redis with the saver, as a resumed run would
    see them; threads are stored per owner, see :mod:`app.thread_ids`)."""
    import redis

    from app.analyses import progress_of
    from app.thread_ids import thread_key
    from checkpointer import RedisSaver
    from config import Settings
    from graph.workflow import compile_graph
    from tests.support.graphs import agent_services

    client = redis.Redis.from_url(redis_url)
    try:
        services = agent_services(Settings(_env_file=None, llm_provider="none"))
        graph = compile_graph(None, services, checkpointer=RedisSaver(client))
        config = {"configurable": {"thread_id": thread_key(owner, thread_id)}}
        snapshot = graph.get_state(config, subgraphs=True)  # type: ignore[arg-type]
        return progress_of(snapshot).batches_done
    finally:
        client.close()
