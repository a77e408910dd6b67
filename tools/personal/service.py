"""`PersonalService`: owner-scoped CRUD, search and totals over tasks, meals and events.

The one engine behind the personal agents' tools and the REST endpoints:

    service = PersonalService(pool, embeddings, PersonalLimits.from_settings(settings))
    await service.setup()                                  # migrations + vector table
    task = await service.create_task("alice", TaskCreate(title="Renew passport", ...))
    page = await service.list_tasks("alice", TaskFilter(status=["open"]), limit=20, offset=0)
    hits = await service.search("alice", "task", "tax return")
    hits = await service.hybrid_search("alice", "task", "the move", TaskFilter(min_priority="high"))

Every method takes the owner's `user_id` first and touches only that user's rows; an id of
another user's row behaves as a missing one (`NotFound`). Each write changes the row and its
vector together: both are written in one transaction of the same Postgres (the vectors are in
pgvector, `tools.personal.pgvector`), and a failed vector write rolls the row back.

On a Postgres without pgvector the engine still stores, lists and filters items (without
vectors); its semantic and hybrid searches refuse with `SemanticSearchOff` (503, naming the fix).

Over 400 lines because it is one class, `PersonalService`, whose owner-scoped methods over tasks,
meals and events share its pool, embeddings, limits and SQL helpers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, cast
from zoneinfo import ZoneInfo

import psycopg
from langchain_core.embeddings import Embeddings
from psycopg import AsyncConnection, sql
from psycopg_pool import AsyncConnectionPool

from tools.hybrid import weighted_rrf
from tools.operations import OperationError
from tools.personal.migrations import migrate
from tools.personal.models import (
    Event,
    EventCreate,
    EventFilter,
    EventUpdate,
    Hit,
    Kind,
    Meal,
    MealCreate,
    MealFilter,
    MealUpdate,
    NutritionTotals,
    Page,
    Task,
    TaskCreate,
    TaskFilter,
    TaskUpdate,
    item_text,
)
from tools.personal.pgvector import PgVectorItemIndex, VectorPoint
from tools.personal.repository import (
    SPECS,
    TEXT_SQL,
    Clause,
    Repository,
    event_clauses,
    localise,
    meal_clauses,
    nutrition_rows,
    task_clauses,
)

if TYPE_CHECKING:
    from config import Settings

MODELS: dict[Kind, type[Task] | type[Meal] | type[Event]] = {
    "task": Task,
    "meal": Meal,
    "event": Event,
}
AnyFilter = TaskFilter | MealFilter | EventFilter
AnyItem = Task | Meal | Event
MAX_OFFSET = 100_000


class NotFound(LookupError):
    """No such item for this user (it does not exist, or it is someone else's)."""

    def __init__(self, kind: Kind, item_id: int) -> None:
        super().__init__(f"no {kind} with id {item_id}")
        self.kind = kind
        self.item_id = item_id


class InvalidItem(ValueError):
    """The change would break a rule of the data (e.g. an event ending before it starts)."""


class SemanticSearchOff(OperationError):
    """Semantic and hybrid search need pgvector, which this Postgres lacks (503: the message
    names the fix; everything else of the personal engine works)."""

    status = 503


@dataclass(frozen=True, slots=True)
class PersonalLimits:
    """The bounds and defaults the engine works with (from the `personal` settings group)."""

    page_size: int = 20
    max_page_size: int = 100
    search_limit: int = 10
    hybrid_candidates: int = 500
    event_minutes: int = 60
    timezone: str = "UTC"
    default_hour: int = 9

    @classmethod
    def from_settings(cls, settings: Settings) -> PersonalLimits:
        """The limits the settings name."""
        return cls(
            page_size=settings.personal.page_size,
            max_page_size=settings.personal.max_page_size,
            search_limit=settings.personal.search_limit,
            hybrid_candidates=settings.personal.hybrid_candidates,
            event_minutes=settings.personal.event_minutes,
            timezone=settings.personal.timezone,
            default_hour=settings.personal.default_hour,
        )


def _clauses(kind: Kind, flt: AnyFilter | None) -> list[Clause]:
    if flt is None:
        return []
    if kind == "task":
        return task_clauses(cast(TaskFilter, flt))
    if kind == "meal":
        return meal_clauses(cast(MealFilter, flt))
    return event_clauses(cast(EventFilter, flt))


def check_timezone(tz: str) -> str:
    """`tz` if it is an IANA zone name, else ValueError naming the fix."""
    try:
        ZoneInfo(tz)
    except Exception:
        raise ValueError(f"{tz!r} is not an IANA time zone (e.g. UTC, Europe/Berlin)") from None
    return tz


class PersonalService:
    """Tasks, meals and events of every user, with their vectors kept in step."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        embeddings: Embeddings,
        limits: PersonalLimits | None = None,
    ) -> None:
        self.pool = pool
        #: The items' vectors, in the same Postgres as the rows.
        self.index = PgVectorItemIndex(pool)
        self.embeddings = embeddings
        self.limits = limits or PersonalLimits()
        self.repos: dict[Kind, Repository] = {
            kind: Repository(spec) for kind, spec in SPECS.items()
        }
        #: Called after a task or event is written or deleted (None: deleted), with the
        #: owner: the reminders keep their schedule in step (tools/personal/reminders.py).
        self.on_change: Callable[[Kind, str, int, AnyItem | None], Awaitable[None]] | None = None

    async def setup(self) -> None:
        """Apply the schema migrations and create the vector table (idempotent, at start-up);
        without pgvector, `semantic_search_off` says why."""
        await migrate(self.pool)
        probe = await self.embeddings.aembed_query("dimension probe")
        await self.index.ensure(len(probe))

    @property
    def semantic_search_off(self) -> str | None:
        """Why semantic search is off (no pgvector, with the fix), or None when it is on."""
        return self.index.missing

    def _require_vectors(self) -> None:
        if self.index.missing:
            raise SemanticSearchOff(self.index.missing)

    # --- shared machinery ------------------------------------------------------------------

    async def _embed(self, kind: Kind, row: dict[str, Any]) -> list[float]:
        return list(await self.embeddings.aembed_query(item_text(kind, row)))

    def _model(self, kind: Kind, row: dict[str, Any]) -> AnyItem:
        return MODELS[kind].model_validate(localise(SPECS[kind], row))

    async def _index_row(self, conn: AsyncConnection, kind: Kind, row: dict[str, Any]) -> None:
        vector = await self._embed(kind, row)
        point = VectorPoint(kind, int(row["id"]), str(row["user_id"]), vector)
        await self.index.upsert([point], conn=conn)

    async def _create(self, kind: Kind, user_id: str, values: dict[str, Any]) -> AnyItem:
        try:
            async with self.pool.connection() as conn, conn.transaction():
                row = await self.repos[kind].insert(conn, user_id, values)
                await self._index_row(conn, kind, row)
                # before the commit: a reminder refused (the owner's quota, Redis down) rolls
                # the write back, so a 4xx never leaves an item whose reminder will not fire
                return await self._changed(kind, user_id, self._model(kind, row))
        except psycopg.errors.IntegrityError as exc:
            detail = exc.diag.message_primary
            raise InvalidItem(f"the {kind} breaks a rule of the data: {detail}") from None

    async def _changed(
        self, kind: Kind, user_id: str, item: AnyItem, *, deleted: bool = False
    ) -> AnyItem:
        if self.on_change is not None and kind != "meal":
            await self.on_change(kind, user_id, item.id, None if deleted else item)
        return item

    async def _update(
        self,
        kind: Kind,
        user_id: str,
        item_id: int,
        changes: dict[str, Any],
        extra: Sequence[Clause] = (),
    ) -> AnyItem:
        try:
            async with self.pool.connection() as conn, conn.transaction():
                row = await self.repos[kind].update(conn, user_id, item_id, changes, extra)
                if row is None:
                    raise NotFound(kind, item_id)
                await self._index_row(conn, kind, row)
                return await self._changed(kind, user_id, self._model(kind, row))  # as _create
        except psycopg.errors.IntegrityError as exc:
            detail = exc.diag.message_primary
            raise InvalidItem(f"the change breaks a rule of the data: {detail}") from None

    async def _delete(self, kind: Kind, user_id: str, item_id: int) -> AnyItem:
        async with self.pool.connection() as conn, conn.transaction():
            row = await self.repos[kind].delete(conn, user_id, item_id)
            if row is None:
                raise NotFound(kind, item_id)
            await self.index.delete(user_id, kind, [item_id], conn=conn)
        return await self._changed(kind, user_id, self._model(kind, row), deleted=True)

    async def get(self, user_id: str, kind: Kind, item_id: int) -> AnyItem:
        """One item of the user, or `NotFound`."""
        async with self.pool.connection() as conn:
            row = await self.repos[kind].get(conn, user_id, item_id)
        if row is None:
            raise NotFound(kind, item_id)
        return self._model(kind, row)

    async def get_many(self, user_id: str, kind: Kind, ids: Sequence[int]) -> list[AnyItem]:
        """The user's items with these ids, in the given order (missing ones left out)."""
        async with self.pool.connection() as conn:
            rows = await self.repos[kind].get_many(conn, user_id, ids)
        return [self._model(kind, rows[i]) for i in ids if i in rows]

    def page_bounds(self, limit: int | None, offset: int) -> tuple[int, int]:
        """Validated `(limit, offset)`: ValueError names the allowed range."""
        size = self.limits.page_size if limit is None else limit
        if not 1 <= size <= self.limits.max_page_size:
            raise ValueError(f"limit must be between 1 and {self.limits.max_page_size}")
        if not 0 <= offset <= MAX_OFFSET:
            raise ValueError(f"offset must be between 0 and {MAX_OFFSET}")
        return size, offset

    async def list_items(
        self,
        user_id: str,
        kind: Kind,
        flt: AnyFilter | None = None,
        *,
        limit: int | None = None,
        offset: int = 0,
        newest_first: bool = False,
    ) -> Page[Any]:
        """A page of the user's items matching `flt` (tasks by due date, meals by time eaten,
        events by start; oldest first unless `newest_first`)."""
        size, start = self.page_bounds(limit, offset)
        async with self.pool.connection() as conn:
            rows, total = await self.repos[kind].page(
                conn,
                user_id,
                _clauses(kind, flt),
                limit=size,
                offset=start,
                newest_first=newest_first,
            )
        items = [self._model(kind, row) for row in rows]
        following = start + len(items)
        return Page[Any](
            items=items,
            total=total,
            offset=start,
            limit=size,
            next_offset=following if following < total else None,
        )

    # --- search ----------------------------------------------------------------------------

    def _search_limit(self, limit: int | None) -> int:
        size = self.limits.search_limit if limit is None else limit
        if not 1 <= size <= max(self.limits.search_limit, 100):
            raise ValueError("limit must be between 1 and 100")
        return size

    async def search(
        self, user_id: str, kind: Kind, query: str, *, limit: int | None = None
    ) -> list[Hit[Any]]:
        """The user's items of `kind` nearest in meaning to `query` (cosine score, best first);
        `SemanticSearchOff` without pgvector."""
        size = self._search_limit(limit)
        self._require_vectors()
        vector = await self.embeddings.aembed_query(query)
        found = await self.index.search(user_id, kind, vector, size)
        items = {
            item.id: item for item in await self.get_many(user_id, kind, [i for i, _ in found])
        }
        hits = [
            Hit[Any](item=items[item_id], score=round(max(score, 0.0), 4), dense_rank=rank)
            for rank, (item_id, score) in enumerate(found, start=1)
            if item_id in items
        ]
        return _fold_duplicates(kind, hits)

    async def hybrid_search(
        self,
        user_id: str,
        kind: Kind,
        query: str,
        flt: AnyFilter | None = None,
        *,
        limit: int | None = None,
        semantic_weight: float = 0.7,
    ) -> list[Hit[Any]]:
        """Structured filter first, then the matching rows ranked by meaning and by words.

        The filter (SQL) picks at most `hybrid_candidates` rows; they are ranked by the vector
        index (restricted to those ids) and by Postgres full-text search, the two rankings fused
        by weighted Reciprocal Rank Fusion; each item appears once, and items with the same text
        (the same meal logged twice) are folded into the best-ranked one. `SemanticSearchOff`
        without pgvector.
        """
        size = self._search_limit(limit)
        self._require_vectors()
        clauses = _clauses(kind, flt)
        repo = self.repos[kind]
        async with self.pool.connection() as conn:
            ids = await repo.candidate_ids(conn, user_id, clauses, self.limits.hybrid_candidates)
            lexical = await repo.lexical_rank(
                conn, user_id, TEXT_SQL[kind], query, ids, len(ids) or 1
            )
        if not ids:
            return []
        vector = await self.embeddings.aembed_query(query)
        dense = await self.index.search(user_id, kind, vector, len(ids), ids=ids)
        fused = weighted_rrf([i for i, _ in dense], lexical, lambda_mult=semantic_weight)
        keep = fused[: size * 3]  # room for folded duplicates
        items = {i.id: i for i in await self.get_many(user_id, kind, [f.key for f in keep])}
        hits = [
            Hit[Any](
                item=items[f.key],
                score=round(f.normalised, 4),
                dense_rank=f.dense_rank,
                lexical_rank=f.lexical_rank,
            )
            for f in keep
            if f.key in items
        ]
        return _fold_duplicates(kind, hits)[:size]

    # --- tasks -----------------------------------------------------------------------------

    async def create_task(self, user_id: str, data: TaskCreate, *, tz: str | None = None) -> Task:
        """Store a new task; `tz` is the zone its times are shown in (default: the setting)."""
        values = {**data.model_dump(), "tz": check_timezone(tz or self.limits.timezone)}
        return cast(Task, await self._create("task", user_id, values))

    async def get_task(self, user_id: str, task_id: int) -> Task:
        """One task, or `NotFound`."""
        return cast(Task, await self.get(user_id, "task", task_id))

    async def list_tasks(
        self,
        user_id: str,
        flt: TaskFilter | None = None,
        *,
        limit: int | None = None,
        offset: int = 0,
        newest_first: bool = False,
    ) -> Page[Task]:
        """A page of tasks (by due date, undated last)."""
        return await self.list_items(
            user_id, "task", flt, limit=limit, offset=offset, newest_first=newest_first
        )

    async def update_task(self, user_id: str, task_id: int, data: TaskUpdate) -> Task:
        """Change the fields set in `data`; a status of `done` stamps `completed_at`."""
        changes = data.model_dump(exclude_unset=True)
        for required in ("title", "priority", "status", "tags", "notes"):
            if required in changes and changes[required] is None:
                raise InvalidItem(f"{required} cannot be empty")
        extra: list[Clause] = []
        if "status" in changes:
            extra.append(
                (
                    sql.SQL(
                        "completed_at = CASE WHEN %s = 'done' "
                        "THEN coalesce(completed_at, now()) ELSE NULL END"
                    ),
                    [changes["status"]],
                )
            )
        return cast(Task, await self._update("task", user_id, task_id, changes, extra))

    async def complete_task(self, user_id: str, task_id: int) -> Task:
        """Mark a task done (idempotent: a done task keeps its completion time)."""
        return await self.update_task(user_id, task_id, TaskUpdate(status="done"))

    async def delete_task(self, user_id: str, task_id: int) -> Task:
        """Delete a task; returns what was deleted."""
        return cast(Task, await self._delete("task", user_id, task_id))

    # --- meals -----------------------------------------------------------------------------

    async def create_meal(self, user_id: str, data: MealCreate, *, tz: str | None = None) -> Meal:
        """Log a meal."""
        values = {**data.model_dump(), "tz": check_timezone(tz or self.limits.timezone)}
        return cast(Meal, await self._create("meal", user_id, values))

    async def get_meal(self, user_id: str, meal_id: int) -> Meal:
        """One meal, or `NotFound`."""
        return cast(Meal, await self.get(user_id, "meal", meal_id))

    async def list_meals(
        self,
        user_id: str,
        flt: MealFilter | None = None,
        *,
        limit: int | None = None,
        offset: int = 0,
        newest_first: bool = False,
    ) -> Page[Meal]:
        """A page of meals (by time eaten)."""
        return await self.list_items(
            user_id, "meal", flt, limit=limit, offset=offset, newest_first=newest_first
        )

    async def update_meal(self, user_id: str, meal_id: int, data: MealUpdate) -> Meal:
        """Change the fields set in `data`."""
        changes = data.model_dump(exclude_unset=True)
        for required in ("eaten_at", "meal_type", "description", "items"):
            if required in changes and changes[required] is None:
                raise InvalidItem(f"{required} cannot be empty")
        return cast(Meal, await self._update("meal", user_id, meal_id, changes))

    async def delete_meal(self, user_id: str, meal_id: int) -> Meal:
        """Delete a meal; returns what was deleted."""
        return cast(Meal, await self._delete("meal", user_id, meal_id))

    async def nutrition_totals(
        self, user_id: str, start: datetime, end: datetime, *, tz: str | None = None
    ) -> NutritionTotals:
        """Calories and macros of the meals eaten in [start, end), with kcal per local day."""
        if start.tzinfo is None or end.tzinfo is None or end <= start:
            raise ValueError("start and end need offsets, and end must be after start")
        if end - start > timedelta(days=366):
            raise ValueError("a nutrition period is at most one year")
        zone = check_timezone(tz or self.limits.timezone)
        async with self.pool.connection() as conn:
            totals, by_day = await nutrition_rows(conn, user_id, start, end, zone)
        return NutritionTotals(
            start=start,
            end=end,
            meals=int(totals.get("meals", 0)),
            calories=int(totals.get("calories", 0)),
            protein_g=round(float(totals.get("protein_g", 0)), 1),
            carbs_g=round(float(totals.get("carbs_g", 0)), 1),
            fat_g=round(float(totals.get("fat_g", 0)), 1),
            by_day=by_day,
        )

    # --- events ----------------------------------------------------------------------------

    async def create_event(
        self, user_id: str, data: EventCreate, *, tz: str | None = None
    ) -> Event:
        """Add an event; without an end it lasts the default length (PERSONAL_EVENT_MINUTES)."""
        values = {**data.model_dump(), "tz": check_timezone(tz or self.limits.timezone)}
        if values["ends_at"] is None:
            values["ends_at"] = data.starts_at + timedelta(minutes=self.limits.event_minutes)
        return cast(Event, await self._create("event", user_id, values))

    async def get_event(self, user_id: str, event_id: int) -> Event:
        """One event, or `NotFound`."""
        return cast(Event, await self.get(user_id, "event", event_id))

    async def list_events(
        self,
        user_id: str,
        flt: EventFilter | None = None,
        *,
        limit: int | None = None,
        offset: int = 0,
        newest_first: bool = False,
    ) -> Page[Event]:
        """A page of events (by start)."""
        return await self.list_items(
            user_id, "event", flt, limit=limit, offset=offset, newest_first=newest_first
        )

    async def update_event(self, user_id: str, event_id: int, data: EventUpdate) -> Event:
        """Change the fields set in `data`; a new start without a new end keeps the length."""
        changes = data.model_dump(exclude_unset=True)
        for required in ("title", "starts_at", "location", "attendees", "notes"):
            if required in changes and changes[required] is None:
                raise InvalidItem(f"{required} cannot be empty")
        extra: list[Clause] = []
        if "starts_at" in changes and "ends_at" not in changes:
            extra.append(
                (
                    sql.SQL(
                        "ends_at = CASE WHEN ends_at IS NULL THEN NULL "
                        "ELSE %s::timestamptz + (ends_at - starts_at) END"
                    ),
                    [changes["starts_at"]],
                )
            )
        if "starts_at" in changes and "remind_at" not in changes:
            # a moved event keeps its reminder as long before its start
            extra.append(
                (
                    sql.SQL(
                        "remind_at = CASE WHEN remind_at IS NULL THEN NULL "
                        "ELSE %s::timestamptz - (starts_at - remind_at) END"
                    ),
                    [changes["starts_at"]],
                )
            )
        return cast(Event, await self._update("event", user_id, event_id, changes, extra))

    async def delete_event(self, user_id: str, event_id: int) -> Event:
        """Delete an event; returns what was deleted."""
        return cast(Event, await self._delete("event", user_id, event_id))

    # --- maintenance -----------------------------------------------------------------------

    async def reindex(self, user_id: str) -> dict[str, int]:
        """Make the user's vectors match their rows (e.g. rows stored before the Postgres had
        pgvector): re-embed every row, drop vectors whose row is gone. Returns counts per kind;
        `SemanticSearchOff` without pgvector."""
        self._require_vectors()
        counts: dict[str, int] = {}
        for kind, repo in self.repos.items():
            async with self.pool.connection() as conn:
                ids = await repo.ids_of_user(conn, user_id)
                rows = await repo.get_many(conn, user_id, ids)
            stale = await self.index.item_ids(user_id, kind) - set(ids)
            await self.index.delete(user_id, kind, sorted(stale))
            texts = [item_text(kind, rows[i]) for i in ids]
            vectors = await self.embeddings.aembed_documents(texts) if texts else []
            await self.index.upsert(
                [VectorPoint(kind, i, user_id, list(v)) for i, v in zip(ids, vectors, strict=True)]
            )
            counts[kind] = len(ids)
        return counts


def _fold_duplicates(kind: Kind, hits: list[Hit[Any]]) -> list[Hit[Any]]:
    """Keep the best-ranked of items whose text is the same (case and spacing ignored)."""
    kept: dict[str, Hit[Any]] = {}
    for hit in hits:
        key = " ".join(item_text(kind, hit.item.model_dump()).lower().split())
        if key in kept:
            kept[key].duplicates += 1
        else:
            kept[key] = hit
    return list(kept.values())
