"""What the graph's nodes depend on, injected when the graph is built.

Nodes get services (models, embeddings, stores) from the `GraphDeps` the builder closes over,
and per-run knobs from the runtime context. Everything is created lazily, so building the graph
(for Studio, or at import) opens nothing.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from config import LLMRole, Settings, get_settings

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import BaseChatModel

    from agents.knowledge.store import KnowledgeStore
    from agents.models import LLMFactory


@dataclass
class GraphDeps:
    """Services for the graph's nodes."""

    settings: Settings
    llm_factory: LLMFactory | None = None
    embeddings_override: Embeddings | None = None
    knowledge_store: KnowledgeStore | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> GraphDeps:
        return cls(settings or get_settings())

    def llm(self, role: LLMRole = "chat") -> BaseChatModel | None:
        """The chat model for `role`, or None when no provider is configured."""
        if self.llm_factory is None:
            from agents.models import default_factory

            with self._lock:
                if self.llm_factory is None:
                    self.llm_factory = default_factory(self.settings)
        return self.llm_factory.get_llm(role)

    def embeddings(self) -> Embeddings:
        """The embedding model (loaded on first use, shared per process)."""
        if self.embeddings_override is not None:
            return self.embeddings_override
        from agents.embeddings import get_embeddings

        return get_embeddings(self.settings)

    def knowledge(self) -> KnowledgeStore:
        """The knowledge base: the one the API process opened on its shared Qdrant client, or
        one opened here on first use (Studio, scripts) and kept for the process.

        Blocking the first time (opens Qdrant and the lexical index): call it from a worker
        thread in async code. Qdrant local mode allows one client per DATA_DIR/qdrant folder,
        so a second process on the same folder fails here with a message naming the fix.
        """
        if self.knowledge_store is None:
            from agents.knowledge.store import KnowledgeStore

            with self._lock:
                if self.knowledge_store is None:
                    self.knowledge_store = KnowledgeStore.open_blocking(
                        self.settings, embeddings=self.embeddings()
                    )
        return self.knowledge_store
