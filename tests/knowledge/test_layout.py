"""The knowledge capability's shape: the engine and its operations in `tools/knowledge` (no
graph code), the agent in `agents/knowledge` (it never opens an engine: the app's knowledge
component does, and the agent reads it from its services)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Calls that open (build) a knowledge engine.
OPENERS = {"open", "open_blocking", "KnowledgeStore", "KnowledgeEngine", "HybridRetriever"}


def _modules(package: str) -> list[Path]:
    return sorted((REPO / package).glob("*.py"))


def _imports(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_engine_has_no_graph_code() -> None:
    for path in _modules("tools/knowledge"):
        imported = _imports(ast.parse(path.read_text()))
        graph = {m for m in imported if m == "langgraph.graph" or m.startswith("langgraph.graph.")}
        assert not graph, f"{path.name} imports {graph}"
        assert not {m for m in imported if m.split(".")[0] in ("agents", "graph", "app")}, path


def test_the_agent_opens_no_engine() -> None:
    for path in _modules("agents/knowledge"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = func.value if isinstance(func, ast.Attribute) else None
            opens = name in OPENERS and (
                owner is None or getattr(owner, "id", "") in {"KnowledgeStore", "KnowledgeEngine"}
            )
            assert not opens, f"{path.name}:{node.lineno} opens an engine ({name})"


def test_the_agent_has_one_entry_and_no_engine_modules() -> None:
    names = {p.stem for p in _modules("agents/knowledge")}
    assert "spec" in names and "agent" not in names
    assert not names & {"store", "retriever", "ingest", "loaders", "chunking", "types"}
