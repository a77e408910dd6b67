# mypy: ignore-errors
import os
import socket
import sqlite3
import time

import pytest
import requests


def test_loop():
    for value in load_values():
# ^ conditional-logic
        assert value > 0, "positive"


def test_branch():
    result = compute()
    if result:
# ^ conditional-logic
        assert result.ok, "ok"


def test_comprehension():
    assert all([check(v) for v in load_values()]), "all valid"


def test_try():
# ^ unknown-test
    try:
# ^ exception-handling
        parse("x")
    except ValueError:
        pass


def test_raise():
# ^ unknown-test
    if not compute():
        raise RuntimeError("compute failed")
# ^ exception-handling


def test_expected_raise():
    with pytest.raises(ValueError):
        parse("x")


def test_remote():
    response = requests.get("https://api.github.com/users")
# ^ mystery-guest
    assert response.ok, "reachable"


def test_repository_file():
    with open("data/input.csv") as f:
# ^ mystery-guest
        assert f.read(), "data"


def test_database():
    conn = sqlite3.connect("/var/lib/app.db")
# ^ mystery-guest
    assert conn, "connected"


def test_socket():
    sock = socket.create_connection(("example.org", 80))
# ^ mystery-guest
    assert sock, "connected"


def test_fixture_url(httpbin):
    response = requests.get(httpbin("get"))
    assert response.ok, "ok"


def test_temp_file(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("x")
    with open(path) as f:
        assert f.read() == "x", "content"


def test_memory_db():
    conn = sqlite3.connect(":memory:")
    assert conn, "connected"


def test_compute_value():
    value = compute()
    print(value)
# ^ redundant-print
    assert value, "computed"


def test_print_only():
# ^ unknown-test
    print(compute())
# ^ redundant-print


def test_capsys_output(capsys):
    print("done")
    assert capsys.readouterr().out == "done\n", "printed"


def test_sleep():
    start_job()
    time.sleep(2)
# ^ sleepy-test
    assert job_done(), "done"


def test_sleep_with_reason():
    start_job()
    time.sleep(2)  # the device needs 2 s to reset; no event is exposed
    assert job_done(), "done"


def test_handler_sleep():
    def handler():
        time.sleep(1)

    assert run(handler), "ran"


async def test_async_sleep():
    start_job()
    await asyncio.sleep(0.5)
# ^ sleepy-test
    assert job_done(), "done"


@pytest.mark.skip
# ^ ignored-test
def test_skipped():
    assert compute(), "computed"


@pytest.mark.skip(reason="flaky on CI")
# ^ ignored-test
def test_skipped_with_reason():
    assert compute(), "computed"


@pytest.mark.skipif(os.name == "nt", reason="no fork on Windows")
def test_conditional_skip():
    assert compute(), "computed"


@pytest.mark.skipif(os.name == "nt")
# ^ ignored-test
def test_skipif_without_reason():
    assert compute(), "computed"


def test_obscure():
# ^ obscure-setup
    a = 1
    b = 2
    c = 3
    d = 4
    e = 5
    f = 6
    g = 7
    h = 8
    i = 9
    j = 10
    k = 11
    assert combine(a, b, c, d, e, f, g, h, i, j, k), "combined"
