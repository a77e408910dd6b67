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

from tools.analytics.executor import run_readonly
from tools.analytics.outputs import QueryResult

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

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        pool: AsyncConnectionPool,
        *,
        user_id: str = "anonymous",
        sql_model: BaseChatModel | None = None,
    ) -> AnalyticsContext:
        """A context with the `analytics_*` settings' limits."""
        return cls(
            pool=pool,
            user_id=user_id,
            demo_mode=settings.analytics.demo_mode,
            sql_model=sql_model,
            reference_date=settings.analytics.reference_date,
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
