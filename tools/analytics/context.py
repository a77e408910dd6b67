"""The analytics run context (LangGraph `context_schema`) and progress events.

`AnalyticsContext` carries the services and per-run knobs the tools need: the reader pool, the
user, demo mode, the model for SQL generation (None = the semantic layer), the dataset's "today"
and the limits. It is immutable and cheap: build one per run (`from_settings`) or share one.

Tools report progress as LangGraph custom stream events (`stream_mode="custom"`), each a dict
`{"type": "progress", "agent": "analytics", "tool": ..., "stage": ..., "message": ...}`; stage
is start, progress, done, or error.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypedDict

from langchain_core.language_models import BaseChatModel
from psycopg_pool import AsyncConnectionPool

from tools.analytics.catalogue import DEMO_LAYER, SemanticLayer
from tools.analytics.catalogue_file import Catalogue
from tools.analytics.executor import explain, run_readonly
from tools.analytics.outputs import QueryResult
from tools.analytics.source import DEMO_SCOPE, Scope

if TYPE_CHECKING:
    from config import Settings

#: A tool's `start`, its `progress` steps, then `done`, or `error` when it failed (sent by the
#: agent's tool-error middleware).
Stage = Literal["start", "progress", "done", "error"]


class ProgressEvent(TypedDict, total=False):
    """A custom stream event a tool writes while it runs."""

    type: Literal["progress"]
    agent: str
    tool: str
    stage: Stage
    message: str
    data: dict[str, Any]


@dataclass(frozen=True)
class AnalyticsContext:
    """Services and limits of an analytics run (the agent's `context_schema`)."""

    #: What a caller is told while the analytics component has not opened one (the
    #: EngineNotOpen message of `AgentServices.engine`).
    NOT_OPEN: ClassVar[str] = (
        "The analytics database is not open in this process: the app opens it at start-up "
        "(app/components/analytics.py)."
    )

    pool: AsyncConnectionPool
    user_id: str = "anonymous"
    demo_mode: bool = True
    sql_model: BaseChatModel | None = None
    reference_date: date = date(2026, 1, 1)
    row_cap: int = 1000
    preview_rows: int = 20
    statement_timeout_ms: int = 5000
    max_sql_chars: int = 20_000
    #: The readable schemas and tables (the demo's, or the external database's catalogue's).
    scope: Scope = DEMO_SCOPE
    #: The external database's catalogue; None = the bundled demo and its semantic layer.
    catalogue: Catalogue | None = None
    cost_limit: float | None = None
    #: The demo's semantic layer: its file, with the operator's edits when there are any.
    layer: SemanticLayer = DEMO_LAYER

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        pool: AsyncConnectionPool,
        *,
        user_id: str = "anonymous",
        sql_model: BaseChatModel | None = None,
        catalogue: Catalogue | None = None,
        scope: Scope = DEMO_SCOPE,
        layer: SemanticLayer = DEMO_LAYER,
    ) -> AnalyticsContext:
        """A context with the `analytics_*` settings' limits (an external database's catalogue
        and scope when given: no demo note, and "today" is the real date)."""
        external = catalogue is not None
        return cls(
            pool=pool,
            user_id=user_id,
            demo_mode=settings.analytics.demo_mode and not external,
            sql_model=sql_model,
            reference_date=date.today() if external else settings.analytics.reference_date,
            scope=scope,
            catalogue=catalogue,
            layer=layer,
            cost_limit=settings.analytics.explain_cost_limit,
            row_cap=settings.analytics.row_cap,
            preview_rows=settings.analytics.preview_rows,
            statement_timeout_ms=settings.analytics.statement_timeout_ms,
            max_sql_chars=settings.analytics.max_sql_chars,
        )

    def with_user(self, user_id: str) -> AnalyticsContext:
        """The same context for another user (one shared context, one copy per request)."""
        return replace(self, user_id=user_id)

    async def run_sql(self, sql: str) -> QueryResult:
        """Validate and run `sql` read-only with this context's limits."""
        return await run_readonly(
            self.pool,
            sql,
            row_cap=self.row_cap,
            statement_timeout_ms=self.statement_timeout_ms,
            max_sql_chars=self.max_sql_chars,
            scope=self.scope,
            cost_limit=self.cost_limit,
        )

    async def explain(self, sql: str) -> None:
        """Plan `sql` (validated, read-only, not run): raises the guard's or the database's
        error, which a model gets back once to correct its query."""
        await explain(
            self.pool,
            sql,
            statement_timeout_ms=self.statement_timeout_ms,
            max_sql_chars=self.max_sql_chars,
            scope=self.scope,
        )


def progress(tool: str, stage: Stage, message: str, **data: Any) -> ProgressEvent:
    """A progress event for the stream writer."""
    event: ProgressEvent = {
        "type": "progress",
        "agent": "analytics",
        "tool": tool,
        "stage": stage,
        "message": message,
    }
    if data:
        event["data"] = data
    return event
