"""Operations: a capability's typed functions, defined once and served three ways.

An operation is an async function ``(ctx, payload) -> result`` whose payload and result are
pydantic models. Its capability (``tools/<cap>/operations.py``) lists it in an ``OPERATIONS``
tuple; the app composes every capability's tuple into one :class:`OperationRegistry`, which
- the agents bind as LangChain tools (:meth:`Operation.as_tool`),
- the REST routes call (``app/operations.py`` maps the errors below to 4xx/503),
- the MCP server lists with their JSON schemas, without code per operation.

The caller is always explicit (:class:`OperationContext`: the owner whose data it touches and
where the engines are), so an operation is owner-scoped wherever it is served from.

An operation's input model refuses unknown fields (``extra='forbid'``, which also puts
``additionalProperties: false`` in its schema; :class:`Arguments` is the base that says so):
a misspelt argument (``due_date`` for ``due_at``) is an error naming it and the accepted ones
(:func:`invalid_arguments`) wherever the operation is served, never a silently lost value.
:class:`Operation` refuses a model that would ignore them.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Generic, Protocol, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.json_schema import SkipJsonSchema

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool

T = TypeVar("T")
In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


class Arguments(BaseModel):
    """The base of an operation's input model: unknown fields are refused (``extra='forbid'``,
    ``additionalProperties: false`` in the schema).

    NaN is not refused here: an in-process caller may mean it (a missing value in test data);
    JSON has none, and the serving layers refuse it where JSON comes in (REST's body decoding,
    ``/mcp``'s guard)."""

    model_config = ConfigDict(extra="forbid")


def forbids_extra(model: type[BaseModel]) -> bool:
    """Whether ``model`` refuses unknown fields."""
    return model.model_config.get("extra") == "forbid"


@cache
def _schema(model: type[BaseModel], mode: str) -> dict[str, Any]:
    return model.model_json_schema(mode=mode)  # type: ignore[arg-type]


def schema_of(model: type[BaseModel], mode: str = "validation") -> dict[str, Any]:
    """``model``'s JSON schema, generated once per model (a copy: callers may change it)."""
    return copy.deepcopy(_schema(model, mode))


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """``node`` with its ``$ref`` followed and an optional's object (or array) branch taken."""
    for _ in range(32):  # a bound for self-referencing definitions
        ref = node.get("$ref")
        if isinstance(ref, str):
            node = defs.get(ref.rsplit("/", 1)[-1], {})
            continue
        branches = [
            b
            for key in ("anyOf", "oneOf", "allOf")
            for b in node.get(key) or ()
            if isinstance(b, dict) and ("$ref" in b or "properties" in b or "items" in b)
        ]
        if not branches:
            return node
        node = branches[0]
    return node


def accepted_fields(model: type[BaseModel], path: Sequence[str | int] = ()) -> list[str]:
    """The field names the object at ``path`` (a validation error's location) of ``model``
    accepts, as its schema names them ([] when the path leads to no object)."""
    schema = _schema(model, "validation")
    defs: dict[str, Any] = schema.get("$defs") or {}
    node = _resolve(schema, defs)
    for part in path:
        if isinstance(part, int):
            items = node.get("items")
            node = items if isinstance(items, dict) else {}
        else:
            node = (node.get("properties") or {}).get(part) or {}
        node = _resolve(node, defs)
    return list(node.get("properties") or {})


def argument_problems(exc: ValidationError, model: type[BaseModel] | None = None) -> list[str]:
    """``exc``'s complaints, one per field (``field: message``, no documentation links); an
    unknown field is named with the fields accepted in its place (when ``model`` is given)."""
    problems = []
    for err in exc.errors(include_url=False):
        loc = tuple(err.get("loc") or ())
        where = ".".join(str(p) for p in loc) or "arguments"
        message = str(err.get("msg"))
        if err.get("type") == "extra_forbidden":
            accepted = accepted_fields(model, loc[:-1]) if model is not None else []
            message = "unknown field" + (f"; accepted: {', '.join(accepted)}" if accepted else "")
        problems.append(f"{where}: {message}")
    return problems


def invalid_arguments(exc: ValidationError, model: type[BaseModel] | None = None) -> str:
    """One message for a refused payload: ``Invalid arguments: field: message; ...``."""
    return "Invalid arguments: " + "; ".join(argument_problems(exc, model))


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

    def __post_init__(self) -> None:
        if not forbids_extra(self.input_model):
            raise TypeError(
                f"operation {self.name}: its input model {self.input_model.__name__} must refuse "
                "unknown fields (model_config extra='forbid'; base it on "
                "tools.operations.Arguments), or a misspelt argument is silently dropped"
            )

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
        return schema_of(self.input_model)

    def output_schema(self) -> dict[str, Any]:
        return schema_of(self.output_model, "serialization")

    def invalid(self, exc: ValidationError) -> str:
        """The message of a payload this operation's model refused."""
        return invalid_arguments(exc, self.input_model)

    def tool_args_model(self) -> type[BaseModel]:
        """The input model plus the injected ``runtime`` (hidden from the model's schema).

        LangChain validates the tool's input, runtime included, against the args schema: a
        model that forbids extra fields (or has none) must declare it to be callable as a tool.
        """
        from langchain.tools import ToolRuntime

        namespace = {
            "__module__": self.input_model.__module__,
            # any run context (bare ToolRuntime means ToolRuntime[None, ...]: pydantic warned
            # on every call of an agent whose context is a PersonalContext)
            "__annotations__": {
                "runtime": Annotated[ToolRuntime[Any, Any] | None, SkipJsonSchema()]
            },
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
                    return f"Error: {op.invalid(exc)}"
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

    @property
    def version(self) -> int:
        """Changes when an operation is registered (what a cache of the list is keyed on)."""
        return len(self._ops)

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
