"""Operations: a capability's typed functions, defined once and served three ways.

An operation is an async function ``(ctx, payload) -> result`` whose payload and result are
pydantic models. Its capability (``tools/<cap>/operations.py``) lists it in an ``OPERATIONS``
tuple; the app composes every capability's tuple into one :class:`OperationRegistry`, which
- the agents bind as LangChain tools (:meth:`Operation.as_tool`),
- the REST routes call (``app/operations.py`` maps the errors below to 4xx/503),
- the MCP server lists with their JSON schemas, without code per operation.

The caller is always explicit (:class:`OperationContext`: the owner whose data it touches and
where the engines are), so an operation is owner-scoped wherever it is served from.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Generic, Protocol, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.json_schema import SkipJsonSchema

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool

T = TypeVar("T")
In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


class OperationError(Exception):
    """An operation refused its input or its target (served as 4xx / a tool error message).

    ``status`` is the HTTP status a route answers with; the message names the fix.
    """

    status: int = 400

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status


class NotFound(OperationError):
    """The owner has no such item (404: another owner's item is not found either)."""

    status = 404


class EngineNotOpen(OperationError):
    """The capability's engine is not open in this process (503 on a route).

    The one rule for a missing engine, wherever an operation is served: the message names the
    component and what to set to open it.
    """

    status = 503
    #: The dependency a route's 503 names (``engine``, or e.g. ``sandbox`` for a subclass).
    dependency: str = "engine"


class Engines(Protocol):
    """Where an operation finds its capability's engine (the app's agent services)."""

    def engine(self, kind: type[T]) -> T:
        """The open engine of ``kind``; raises :class:`EngineNotOpen` when there is none."""
        ...


class OpenEngines:
    """Engines given by hand (an agent's run context, a test): :class:`Engines` over them.

    ``engine(kind)`` is the given one that is a ``kind``; :class:`EngineNotOpen` without one.
    """

    def __init__(self, *engines: object) -> None:
        self._engines = engines

    def engine(self, kind: type[T]) -> T:
        for found in self._engines:
            if isinstance(found, kind):
                return found
        raise EngineNotOpen(f"the {kind.__name__} is not open for this caller")


@dataclass(frozen=True)
class OperationContext:
    """Who calls an operation and where its engines are."""

    #: The owner (API key's owner, or the chat user) whose data the operation reads and writes.
    owner: str
    #: The process's engines.
    engines: Engines
    #: The caller's IANA time zone, for operations that read dates in words.
    timezone: str = "UTC"
    #: Anything else a serving layer passes through (e.g. the run's ids for events).
    extra: dict[str, Any] = field(default_factory=dict)

    def engine(self, kind: type[T]) -> T:
        return self.engines.engine(kind)


Runner = Callable[[OperationContext, In], Awaitable[Out]]


@dataclass(frozen=True)
class Operation(Generic[In, Out]):
    """One typed function of a capability, with its schemas."""

    name: str
    capability: str
    description: str
    input_model: type[In]
    output_model: type[Out]
    run: Runner[In, Out]
    #: Whether the operation only reads (MCP clients and the REST verb use this).
    read_only: bool = False

    async def __call__(self, ctx: OperationContext, payload: In | dict[str, Any]) -> Out:
        """Validate ``payload`` (a model or a dict) and run the operation."""
        data = payload if isinstance(payload, self.input_model) else self.parse(payload)
        return await self.run(ctx, data)

    def parse(self, payload: object) -> In:
        """The payload as the input model (ValidationError for a bad one)."""
        if isinstance(payload, self.input_model):
            return payload
        return self.input_model.model_validate(payload)

    def input_schema(self) -> dict[str, Any]:
        return self.input_model.model_json_schema()

    def output_schema(self) -> dict[str, Any]:
        return self.output_model.model_json_schema(mode="serialization")

    def tool_args_model(self) -> type[BaseModel]:
        """The input model plus the injected ``runtime`` (hidden from the model's schema).

        LangChain validates the tool's input, runtime included, against the args schema: a
        model that forbids extra fields (or has none) must declare it to be callable as a tool.
        """
        from langchain.tools import ToolRuntime

        namespace = {
            "__module__": self.input_model.__module__,
            "__annotations__": {"runtime": Annotated[ToolRuntime | None, SkipJsonSchema()]},
            "runtime": None,
            "model_config": ConfigDict(**{**self.input_model.model_config,
                                          "arbitrary_types_allowed": True}),
        }  # fmt: skip
        model: type[BaseModel] = type(self.input_model.__name__, (self.input_model,), namespace)
        return model

    def as_tool(
        self,
        context_of: Callable[[Any], OperationContext],
        *,
        render: Callable[[Out], Any] | None = None,
        on_error: Callable[[OperationError | ValidationError], Any] | None = None,
    ) -> StructuredTool:
        """This operation as a LangChain tool for an agent.

        ``context_of(runtime)`` builds the caller from the tool's runtime (the agent's owner and
        services); ``render`` turns the result into what the model sees (default: its JSON).
        An :class:`OperationError` becomes the tool's error message, so the model can recover
        (``on_error`` words it, default ``Error: <message>``).
        """
        from langchain.tools import ToolRuntime
        from langchain_core.tools import StructuredTool

        op = self

        async def call(runtime: ToolRuntime, **kwargs: Any) -> Any:
            try:
                result = await op(context_of(runtime), kwargs)
            except (OperationError, ValidationError) as exc:
                if on_error is not None:
                    return on_error(exc)
                if isinstance(exc, ValidationError):
                    return f"Error: invalid arguments: {exc.errors(include_url=False)}"
                return f"Error: {exc}"
            return render(result) if render is not None else result.model_dump_json()

        # LangChain injects the runtime by the parameter's annotation; this module's annotations
        # are strings (postponed evaluation), so give it the class itself.
        call.__annotations__ = {"runtime": ToolRuntime, "kwargs": Any, "return": Any}
        return StructuredTool.from_function(
            coroutine=call,
            name=self.name,
            description=self.description,
            args_schema=self.tool_args_model(),
            infer_schema=False,
        )


def operation(
    capability: str, *, name: str | None = None, read_only: bool = False
) -> Callable[[Runner[In, Out]], Operation[In, Out]]:
    """Make an :class:`Operation` of an ``async def op(ctx, payload: In) -> Out`` function.

    The input and output models come from its annotations, the description from its docstring.
    """

    def wrap(func: Runner[In, Out]) -> Operation[In, Out]:
        hints = get_type_hints(func)
        params = [p for p in inspect.signature(func).parameters if p != "return"]
        if len(params) != 2:
            raise TypeError(f"operation {func.__name__} must take (ctx, payload)")
        input_model, output_model = hints.get(params[1]), hints.get("return")
        for role, model in (("payload", input_model), ("return", output_model)):
            if not (isinstance(model, type) and issubclass(model, BaseModel)):
                raise TypeError(f"operation {func.__name__}: its {role} must be a pydantic model")
        return Operation(
            name=name or func.__name__,
            capability=capability,
            description=inspect.cleandoc(func.__doc__ or "").strip() or func.__name__,
            input_model=input_model,  # type: ignore[arg-type]
            output_model=output_model,  # type: ignore[arg-type]
            run=func,
            read_only=read_only,
        )

    return wrap


class OperationRegistry:
    """Every operation the process serves, by name (names are unique across capabilities)."""

    def __init__(self, operations: Iterable[Operation[Any, Any]] = ()) -> None:
        self._ops: dict[str, Operation[Any, Any]] = {}
        for op in operations:
            self.register(op)

    def register(self, op: Operation[Any, Any]) -> None:
        if op.name in self._ops:
            raise ValueError(f"two operations are named {op.name!r}; rename one")
        self._ops[op.name] = op

    def get(self, name: str) -> Operation[Any, Any]:
        try:
            return self._ops[name]
        except KeyError:
            raise NotFound(f"no operation named {name!r}") from None

    def __iter__(self) -> Iterator[Operation[Any, Any]]:
        return iter(self._ops.values())

    def __len__(self) -> int:
        return len(self._ops)

    def of(self, capability: str) -> list[Operation[Any, Any]]:
        return [op for op in self._ops.values() if op.capability == capability]
