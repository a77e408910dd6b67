"""What a run gives every node: LangGraph's runtime context (``context_schema``).

:class:`RunContext` carries the process's :class:`AgentServices` (chat models, embeddings and
the engines agents share) and the run's option overrides. Each agent declares its per-run
options as an :class:`AgentOptions` model; the graph factory composes the registered agents'
options into one context class (:func:`context_schema_for`), so a caller (the API, Studio)
sets them by name, and a node reads its own, typed: ``context_of(runtime).options(MyOptions)``.

An option left unset (None) means "use the setting"; :func:`override` declares an option with
the same bounds as the setting it overrides, so the API rejects what the setting would.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator
from pydantic.json_schema import SkipJsonSchema

from config import Settings
from tools.operations import EngineNotOpen, OperationContext
from tools.providers.settings import LLMRole

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import BaseChatModel
    from langgraph.runtime import Runtime

T = TypeVar("T")
OptionsT = TypeVar("OptionsT", bound="AgentOptions")

_BOUNDS = ("ge", "gt", "le", "lt", "min_length", "max_length", "multiple_of")


class ChatModels(Protocol):
    """Where chat models come from (``tools.providers.chat_models.LLMFactory`` in the app)."""

    @property
    def provider(self) -> str: ...

    def get_llm(self, role: LLMRole = "chat") -> BaseChatModel | None: ...


@dataclass
class AgentServices:
    """The providers and engines agents use, shared by every run of one process.

    Engines an agent needs (a knowledge base, a parse cache, a database pool) are keyed by
    their type: the app's components open and :meth:`provide` them, and agents and operations
    read them with :meth:`engine` (nothing is made on first use).
    """

    settings: Settings
    models: ChatModels
    embeddings_factory: Callable[[], Embeddings] | None = None
    _resources: dict[type[Any], Any] = field(default_factory=dict, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @property
    def provider(self) -> str:
        """The chat model provider in use (``none`` without one)."""
        return self.models.provider

    def llm(self, role: LLMRole = "chat") -> BaseChatModel | None:
        """The chat model for ``role``, or None when no provider is configured."""
        return self.models.get_llm(role)

    def embeddings(self) -> Embeddings:
        """The embedding model (loaded on first use, shared per process)."""
        if self.embeddings_factory is not None:
            return self.embeddings_factory()
        from tools.providers.embeddings import get_embeddings

        return get_embeddings(self.settings)

    def provide(self, resource: object, *, as_type: type[Any] | None = None) -> None:
        """Register an engine the app opened (keyed by its type, or ``as_type``)."""
        with self._lock:
            self._resources[as_type or type(resource)] = resource

    def engine(self, kind: type[T]) -> T:
        """The engine of ``kind`` the app opened; :class:`EngineNotOpen` when it is not open.

        The one rule for a missing engine (operations, tools and routes all go through it).
        """
        with self._lock:
            found = self._resources.get(kind)
        if found is None:
            # an engine may name its component and fix itself (a class attribute)
            message = getattr(kind, "NOT_OPEN", None)
            raise EngineNotOpen(
                message
                if isinstance(message, str)
                else f"the {kind.__name__} is not open in this process: its component did not "
                "start (see /health and the start-up log for the setting to fix)"
            )
        return found


class AgentOptions(BaseModel):
    """Base of an agent's per-run options: every field optional, None = use the setting."""

    model_config = ConfigDict(extra="forbid")


def override(setting: str, description: str | None = None) -> Any:
    """A per-run option overriding ``setting``, with the setting's bounds (None = the setting)."""
    spec = Settings.spec(setting)
    info = spec.field
    bounds: dict[str, Any] = {}
    for meta in info.metadata:
        for name in _BOUNDS:
            value = getattr(meta, name, None)
            if value is not None:
                bounds[name] = value
    text = description or info.description or ""
    return Field(None, description=f"{text} Overrides {spec.env} for this run.", **bounds)


class RunContext(BaseModel):
    """The runtime context of every Switchyard run: services and per-run options."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="ignore")

    # Typed as Any for pydantic (it must not inspect the services), checked below and read
    # through `require_services()` / `services_of()`, which are typed.
    services: Annotated[Any, SkipJsonSchema()] = Field(default=None, exclude=True)
    owner: SkipJsonSchema[str] = Field(
        default="anonymous",
        exclude=True,
        description="Who the run acts for (the API key's owner id): the scope of the data an "
        "agent may read or change. Set by the app, never by the caller's input.",
    )

    client: SkipJsonSchema[Literal["rest", "agent_server"] | None] = Field(
        default=None,
        exclude=True,
        description="Which interface started the run: `rest` (POST /chat and the REST API), "
        "`agent_server` (the Agent Server API: agent-chat-ui, langgraph-sdk), or None (the "
        "graph used directly, e.g. by `langgraph dev`). Set by the app, so that answers "
        "suggest what works in the client at hand.",
    )

    @field_validator("services")
    @classmethod
    def _is_services(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, AgentServices):
            raise ValueError(f"services must be AgentServices, not {type(value).__name__}")
        return value

    def options(self, kind: type[OptionsT]) -> OptionsT:
        """This run's options of one agent (unset ones None, meaning the settings)."""
        own = type(self).model_fields
        values = {name: getattr(self, name) for name in kind.model_fields if name in own}
        return kind.model_validate({k: v for k, v in values.items() if v is not None})

    def require_services(self) -> AgentServices:
        """The services (a run started without them is a wiring bug, named here)."""
        if not isinstance(self.services, AgentServices):
            raise RuntimeError(
                "this run has no AgentServices in its context: start runs through the app "
                "(or pass context=RunContext(services=...))"
            )
        return self.services


def context_schema_for(options: Iterable[type[AgentOptions]]) -> type[RunContext]:
    """One context class with every agent's options as fields (names must not clash)."""
    fields: dict[str, Any] = {}
    owners: dict[str, str] = {}
    for kind in options:
        for name, info in kind.model_fields.items():
            if name in fields and owners[name] != kind.__name__:
                raise ValueError(
                    f"option {name!r} is declared by {owners[name]} and {kind.__name__}"
                )
            fields[name] = (info.annotation, info)
            owners[name] = kind.__name__
    return create_model("SwitchyardContext", __base__=RunContext, **fields)


def options_model_for(options: Iterable[type[AgentOptions]]) -> type[AgentOptions]:
    """The flat options model the API validates (``{"retrieval_top_k": 5, ...}``)."""
    fields: dict[str, Any] = {
        name: (info.annotation, info)
        for kind in options
        for name, info in kind.model_fields.items()
    }
    return create_model("RunOptions", __base__=AgentOptions, **fields)


def context_of(runtime: Runtime[Any]) -> RunContext:
    """The run's context (a run started without one gets a clear error, not AttributeError)."""
    context = runtime.context
    if not isinstance(context, RunContext):
        raise RuntimeError(
            f"this run's context is {type(context).__name__}, not a RunContext: start runs "
            "through the app, or pass context=RunContext(services=...)"
        )
    return context


def services_of(runtime: Runtime[Any]) -> AgentServices:
    """The run's services."""
    return context_of(runtime).require_services()


def operation_context(runtime: Runtime[Any] | Any) -> OperationContext:
    """The caller of an operation inside a run: the run's owner and the process's engines.

    Accepts a node's ``Runtime`` or a tool's ``ToolRuntime`` (both carry the run's context), so
    it is the ``context_of`` an agent passes to :meth:`tools.operations.Operation.as_tool`.
    """
    context = context_of(runtime)
    return OperationContext(owner=context.owner, engines=context.require_services())
