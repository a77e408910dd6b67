"""Question to SQL: schema-aware generation with a model, the semantic layer without one.

With a model: the model gets the schema (`tools.analytics.schema.describe`), the metric
definitions of the semantic layer (so "damage rate" means what the catalogue says), the dataset's
"today", and the guard's rules; it answers with a `SQLDraft` (structured output). The draft is
validated by the guard; a refused draft goes back once with the refusal, then the semantic layer
takes over. Without a model, or when the model fails, the semantic layer answers.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import date

import psycopg
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from tools.analytics import ask, semantic
from tools.analytics.catalogue import DEMO_LAYER, SemanticLayer
from tools.analytics.catalogue_file import Catalogue
from tools.analytics.guard import ALLOWED_FUNCTIONS, SQLRefused, WriteRefused, validate_sql
from tools.analytics.intent import write_request
from tools.analytics.outputs import SQLGeneration
from tools.analytics.reference import DATA_END, DATA_START
from tools.analytics.schema import describe
from tools.analytics.source import DEMO_SCOPE, Scope

#: Plans a validated query without running it; raises the database's error (psycopg.Error).
Check = Callable[[str], Awaitable[None]]

log = logging.getLogger(__name__)

SQL_SYSTEM = """You write PostgreSQL for an automotive business analytics database.

Schema (only these tables exist; always qualify them with the schema, e.g. analytics.sales):
{schema}

Metric definitions (use these exact formulas; percentages are 0-100):
{metrics}

Rules:
- Write exactly ONE SELECT statement (CTEs allowed). Never write INSERT/UPDATE/DELETE/DDL, COPY,
  SET, transactions, SELECT INTO, FOR UPDATE, parameters or comments.
- Read only tables of schema analytics. Allowed functions: {functions}.
- Aggregate (GROUP BY) instead of returning raw rows; name output columns in snake_case;
  round money and rates to 2 decimals; order rankings by the metric.
- The data covers {start} to {end}. Today is {today}: "last quarter", "this year", "since
  March" count back from today.
"""


CATALOGUE_SYSTEM = """You write PostgreSQL for a business question over the user's database.

Catalogue (only these tables and columns exist; qualify tables by schema, e.g. {example}):
{catalogue}

Rules:
- Write exactly ONE SELECT statement (CTEs allowed). Never write INSERT/UPDATE/DELETE/DDL, COPY,
  SET, transactions, SELECT INTO, FOR UPDATE, parameters or comments; the database is read-only.
- Read only the tables above (schemas: {schemas}); never system catalogs. Allowed functions:
  {functions}.
- When a catalogue metric fits the question, use its SQL exactly. Join along the listed foreign
  keys. Aggregate (GROUP BY) instead of returning raw rows; name output columns in snake_case.
- Today is {today}.
"""


class SQLDraft(BaseModel):
    """A model's SQL for a question."""

    sql: str = Field(description="One PostgreSQL SELECT over the allowed tables.")
    explanation: str = Field(default="", description="One sentence: what the query computes.")


def _metric_lines(layer: SemanticLayer) -> str:
    return "\n".join(
        f"- {m.label} ({m.fact}): "
        + (m.sql() if m.denominator is None else f"{m.scale:g} * {m.numerator} / {m.denominator}")
        for m in layer.metrics
    )


def system_prompt(today: date, layer: SemanticLayer = DEMO_LAYER) -> str:
    """The SQL-generation system prompt for `today` (the demo's metrics from `layer`)."""
    return SQL_SYSTEM.format(
        schema=describe(),
        metrics=_metric_lines(layer),
        functions=ALLOWED_FUNCTIONS[0],
        start=DATA_START.isoformat(),
        end=DATA_END.isoformat(),
        today=today.isoformat(),
    )


def catalogue_prompt(catalogue: Catalogue, today: date) -> str:
    """The SQL-generation system prompt over an external database's catalogue."""
    first = catalogue.visible_tables()[0].key if catalogue.visible_tables() else "public.t"
    return CATALOGUE_SYSTEM.format(
        example=first,
        catalogue=catalogue.describe(),
        schemas=", ".join(catalogue.schemas),
        functions=ALLOWED_FUNCTIONS[0],
        today=today.isoformat(),
    )


async def generate_sql(
    question: str,
    today: date,
    model: BaseChatModel | None = None,
    *,
    max_sql_chars: int = 20_000,
    attempts: int = 2,
    catalogue: Catalogue | None = None,
    scope: Scope = DEMO_SCOPE,
    check: Check | None = None,
    layer: SemanticLayer = DEMO_LAYER,
) -> SQLGeneration:
    """SQL for `question`: the model's (validated) when one is given, else the model-free one
    (the demo's semantic layer `layer`, or `catalogue`'s when an external database is
    connected).

    Never raises for an unanswerable question: `sql` is None and `message` says what can be
    asked. A request to change data is refused in words, before the model (`write_request`)
    or when the model's SQL would write (no retry, no model-free count in its place). Model
    errors (transport, parsing) fall back to the model-free answer. With `check`, a draft the
    database rejects (EXPLAIN) goes back to the model once with the error.
    """

    def fallback_for() -> SQLGeneration:
        if catalogue is not None:
            return ask.generate(question, catalogue, today)
        return semantic.generate(question, today, layer)

    if model is None or write_request(question):
        return fallback_for()  # a request to change data is refused there, model or not
    prompt = (
        system_prompt(today, layer) if catalogue is None else catalogue_prompt(catalogue, today)
    )
    messages = [SystemMessage(prompt), HumanMessage(question)]
    structured = model.with_structured_output(SQLDraft, method="function_calling")
    refusal = ""
    db_retried = False
    for _ in range(max(1, attempts)):
        try:
            draft = await structured.ainvoke(messages)
        except Exception as exc:  # noqa: BLE001 - any model failure falls back to the catalogue
            log.warning(
                "SQL generation by the model failed (%s); using the semantic layer",
                type(exc).__name__,
            )
            break
        if not isinstance(draft, SQLDraft):
            draft = SQLDraft.model_validate(draft)
        try:
            validated = validate_sql(draft.sql, max_chars=max_sql_chars, scope=scope)
            if check is not None:
                await check(validated.sql)
        except WriteRefused as exc:  # the question asked for a write: no retry, no count
            return SQLGeneration(
                question=question,
                sql=None,
                method="model",
                message="Nothing ran: the SQL written for this question would change data, and "
                f"the analytics agent is read-only. {exc}",
            )
        except SQLRefused as exc:
            refusal = str(exc)
            messages += [HumanMessage(f"Your SQL was refused: {refusal}\nWrite a corrected query.")]
            continue
        except psycopg.errors.QueryCanceled:
            raise  # a timeout is not the model's to fix
        except psycopg.DatabaseError as exc:
            if db_retried:
                refusal = f"the database rejected it: {str(exc).strip()[:300]}"
                break
            db_retried = True
            error = str(exc).strip().splitlines()[0][:500]
            messages += [
                HumanMessage(f"The database rejected your SQL: {error}\nWrite a corrected query.")
            ]
            continue
        return SQLGeneration(
            question=question, sql=validated.sql, method="model", explanation=draft.explanation
        )
    fallback = fallback_for()
    if refusal and fallback.sql is None:
        fallback.message = f"The model's SQL was refused ({refusal}).\n{fallback.message}"
    return fallback
