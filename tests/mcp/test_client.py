"""Agents using the tools of another MCP server: Switchyard's own app (the package's server,
reached over HTTP with its API key) is the remote server here.

The remote tools are loaded the way the app loads them (the `mcp_client` component over
`load_remote_tools`), given to the coding agent's ReAct loop, and called by a scripted model; the
remote result must come back to the model. Also: nothing is loaded by default, an unreachable
server is skipped with a warning (and /health shows it), and an address outside the outgoing
allow-list is refused at start-up naming the setting.
"""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path
from typing import Any, cast

import pytest
from fastapi.testclient import TestClient
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agents.coding import build_coding_agent
from agents.contract.context import AgentServices
from app.api import create_app
from app.components import mcp_client
from app.components.base import Components
from app.components.mcp_client import start_mcp_client
from app.storage import Stores
from config import Settings, SettingsError, load_settings
from tests.mcp.conftest import KEYS, McpServer
from tests.support.scripted import FixedFactory, ScriptedChatModel
from tests.support.servers import free_port
from tools.mcp_client import McpServerRefused, remote_tools_of
from tools.mcp_client.remote import load_remote_tools
from tools.operations import OpenEngines
from tools.webhooks import WebhookGuard

BROKEN = "def total(rows):\n    return sum(r['amount'] for r in rows\n"


def _settings(servers: dict[str, Any], **more: Any) -> Settings:
    # listing the tools may take a while on a loaded machine (the default 10 s was missed)
    more.setdefault("mcp_client_connect_timeout_seconds", 60)
    return Settings(
        _env_file=None, mcp_client_servers=json.dumps(servers), llm_provider="none", **more
    )


def _server(mcp_server: McpServer, key: str = KEYS["client"]) -> dict[str, Any]:
    return {"url": mcp_server.endpoint, "headers": {"X-API-Key": key}}


async def _start(settings: Settings) -> tuple[Components, AgentServices]:
    services = AgentServices(settings, FixedFactory(None))
    # the MCP client component reads no store (it opens HTTP sessions only)
    components = Components(settings, services, cast(Stores, None))
    await start_mcp_client(components)
    return components, services


async def test_remote_tool_result_reaches_the_model(mcp_server: McpServer) -> None:
    settings = _settings(
        {"docs": _server(mcp_server)}, webhook_allowed_hosts="127.0.0.1", mcp_client_max_tools=64
    )
    components, services = await _start(settings)
    tools = remote_tools_of(services)
    names = {tool.name for tool in tools}
    assert {"docs_check_code", "docs_search_documents", "docs_run_code"} <= names
    assert all(name.startswith("docs_") for name in names)
    health = [(await check()).as_dict() for check in components.health]
    assert health[0]["name"] == "mcp:docs" and health[0]["status"] == "ok"
    assert KEYS["client"] not in json.dumps(settings.redacted(), default=str)  # a secret header

    call = {
        "name": "docs_check_code",
        "args": {"code": BROKEN, "function_name": "total"},
        "id": "call-1",
        "type": "tool_call",
    }
    model = ScriptedChatModel(
        script=[AIMessage(content="", tool_calls=[call]), "The remote check found a syntax error."]
    )
    agent = build_coding_agent(model, OpenEngines(), default_max_iterations=2, extra_tools=tools)
    out = await agent.ainvoke({"messages": [HumanMessage("Check this code remotely.")]})

    assert "docs_check_code" in model.bound_tools[0]
    assert {"generate_code", "check_code"} <= set(model.bound_tools[0])  # its own tools stay
    received = [m for m in model.calls[1] if isinstance(m, ToolMessage)]
    assert len(received) == 1 and received[0].name == "docs_check_code"
    # the remote server's structured result, as the model received it (a text block of JSON)
    content = received[0].content
    blocks = [content] if isinstance(content, str) else content
    texts = [b if isinstance(b, str) else b["text"] for b in blocks]
    result = json.loads(texts[0])
    print("remote result:", result)
    assert result["is_valid"] is False
    assert result["issues"][0]["code"] == "syntax" and result["issues"][0]["line"] == 2
    # the model's answer (the coding loop adds its own summary of the code after it)
    assert out["messages"][-1].content.startswith("The remote check found a syntax error.")


async def test_off_by_default() -> None:
    components, services = await _start(Settings(_env_file=None, llm_provider="none"))
    assert remote_tools_of(services) == []
    assert components.health == []
    assert "mcp_client" not in components.metrics


async def test_unreachable_server_is_skipped_with_a_warning(
    mcp_server: McpServer, caplog: pytest.LogCaptureFixture
) -> None:
    gone = f"http://127.0.0.1:{free_port()}/mcp"
    settings = _settings(
        {"gone": {"url": gone}, "docs": _server(mcp_server)},
        webhook_allowed_hosts="127.0.0.1",
        mcp_client_max_tools=3,
    )
    with caplog.at_level(logging.WARNING, logger="tools.mcp_client.remote"):
        components, services = await _start(settings)
    assert "MCP server 'gone'" in caplog.text and "skipped" in caplog.text
    tools = remote_tools_of(services)
    assert len(tools) == 3 and all(t.name.startswith("docs_") for t in tools)  # the bound
    health = {d["name"]: d for d in [(await c()).as_dict() for c in components.health]}
    assert health["mcp:gone"]["status"] == "error" and health["mcp:gone"]["required"] is False
    assert "skipped at start-up" in health["mcp:gone"]["error"]
    assert health["mcp:docs"]["status"] == "ok"


async def test_address_outside_the_allow_list_is_refused(mcp_server: McpServer) -> None:
    settings = _settings({"docs": _server(mcp_server)})  # 127.0.0.1 is not allowed
    with pytest.raises(McpServerRefused) as refused:
        await _start(settings)
    message = str(refused.value)
    assert "MCP_CLIENT_SERVERS" in message and "WEBHOOK_ALLOWED_HOSTS" in message
    assert KEYS["client"] not in message


async def test_a_failed_remote_call_is_an_error_for_the_model(mcp_server: McpServer) -> None:
    settings = _settings({"docs": _server(mcp_server)}, webhook_allowed_hosts="127.0.0.1")
    remote = await load_remote_tools(
        settings.mcp_client, WebhookGuard(settings.webhooks.allowed_hosts)
    )
    search = next(t for t in remote.tools if t.name == "docs_search_documents")
    message = await search.ainvoke(
        {"type": "tool_call", "id": "c", "name": search.name, "args": {"query": ""}}
    )
    assert isinstance(message, ToolMessage) and message.status == "error"


async def test_a_silent_server_is_skipped_after_the_connect_timeout() -> None:
    with socket.socket() as silent:  # accepts connections (the kernel's backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        settings = _settings(
            {"silent": {"url": f"http://127.0.0.1:{port}/mcp"}},
            webhook_allowed_hosts="127.0.0.1",
            mcp_client_connect_timeout_seconds=0.5,
        )
        components, services = await _start(settings)
    assert remote_tools_of(services) == []
    (health,) = [(await check()).as_dict() for check in components.health]
    assert "MCP_CLIENT_CONNECT_TIMEOUT_SECONDS" in health["error"]


def test_headers_are_secrets_in_config_and_errors() -> None:
    servers = {"docs": {"url": "https://mcp.example.com/mcp", "headers": {"X-API-Key": "s3cr3t"}}}
    shown = _settings(servers).redacted()["mcp_client"]["mcp_client_servers"]
    assert shown["docs"]["headers"] == {"X-API-Key": "**********"}
    servers["docs"]["url"] = "ftp://mcp.example.com/mcp"
    with pytest.raises(SettingsError) as bad:
        load_settings(_env_file=None, mcp_client_servers=json.dumps(servers))
    assert "MCP_CLIENT_SERVERS" in str(bad.value) and "s3cr3t" not in str(bad.value)


def test_a_second_app_loads_the_tools_once_and_health_shows_each_server(
    mcp_server: McpServer, tmp_path: Path
) -> None:
    first = mcp_server.app.state.settings
    key = "second-app-key-0123456789"
    gone = f"http://127.0.0.1:{free_port()}/mcp"
    settings = Settings(
        _env_file=None,
        data_dir=tmp_path,
        redis_url=first.storage.redis_url,
        database_url=first.storage.database_url,
        llm_provider="none",
        api_keys=key,
        run_worker_enabled=False,
        webhook_allowed_hosts="127.0.0.1",
        mcp_client_servers=json.dumps({"docs": _server(mcp_server), "gone": {"url": gone}}),
    )
    # the second app: only the MCP client component (its own engines are not needed here)
    app = create_app(settings, components=[mcp_client.COMPONENT])
    with TestClient(app) as client:
        health = client.get("/health", headers={"X-API-Key": key})
        config = client.get("/config", headers={"X-API-Key": key}).json()
        tools = remote_tools_of(app.state.services.agents)
    assert health.status_code == 200, health.text  # an unreachable server is not required
    deps = health.json()["dependencies"]
    assert deps["mcp:docs"]["status"] == "ok" and deps["mcp:docs"]["mode"].endswith("tools")
    assert deps["mcp:gone"]["status"] == "error" and "skipped" in deps["mcp:gone"]["error"]
    assert "docs_check_code" in {tool.name for tool in tools}
    assert KEYS["client"] not in json.dumps(config)
