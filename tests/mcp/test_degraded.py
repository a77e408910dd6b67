"""A missing dependency and an outage over MCP, with the official client: each is a tool error
(``isError``) naming the dependency as the REST 503 does, never a transport failure, and the
tools that do not need it go on answering.

The app here (``degraded_server``) has the sandbox turned off by its settings (its bubblewrap
path names nothing) and a redis-server of its own, which a test stops.
"""

from __future__ import annotations

import httpx

from tests.mcp.conftest import KEYS, McpServer
from tests.mcp.test_tools import RECORDS, TOTALS, ok, refused

KEY = KEYS["degraded"]
LENGTH = {"value": 2, "source": "km", "target": "m"}


async def test_a_sandbox_turned_off_by_the_settings_is_named(degraded_server: McpServer) -> None:
    async with degraded_server.session(KEY) as session:
        ran = await session.call_tool(
            "run_code", {"code": TOTALS, "function_name": "totals", "test_data": RECORDS}
        )
        text = refused(ran, "(status 503; dependency: sandbox)", "SANDBOX_BWRAP_PATH")
        assert text.count("dependency") == 1, text
        # checking code needs no sandbox
        checked = ok(
            await session.call_tool("check_code", {"code": TOTALS, "function_name": "totals"})
        )
        assert checked["is_valid"] is True
    health = httpx.get(f"{degraded_server.url}/health", headers={"X-API-Key": KEY}, timeout=120)
    assert health.json()["dependencies"]["sandbox"]["status"] == "error"


async def test_redis_down_is_a_tool_error_naming_it(degraded_server: McpServer) -> None:
    """Redis holds the sessions and their checkpoints: with it down, a chat turn is refused
    naming it; a tool that needs no Redis still answers (the rate limit counts in-process)."""
    async with degraded_server.session(KEY) as session:
        degraded_server.redis.stop()
        try:
            turn = await session.call_tool("chat", {"message": "Convert 2 km to m"})
            refused(turn, "(status 503; dependency: redis)", "Redis", "GET /health")
            assert ok(await session.call_tool("convert_length", LENGTH))["value"] == 2000
        finally:
            degraded_server.redis.start()
        # back: the same session goes on
        again = ok(await session.call_tool("chat", {"message": "Convert 2 km to m"}))
        assert "2000" in again["answer"]
