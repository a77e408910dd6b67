"""The SQL guard: only one read-only SELECT over schema `analytics` gets through.

`validate_sql(text)` parses with sqlglot (postgres dialect) and refuses, with `SQLRefused` naming
the reason and what is allowed:

- anything but exactly one statement that is a SELECT (CTEs and UNION/INTERSECT/EXCEPT of
  SELECTs allowed): DDL, DML (also inside a CTE), COPY, SET, transaction control, SELECT INTO,
  row locks (FOR UPDATE/SHARE), query parameters, WITH RECURSIVE (an unbounded row generator);
- a table outside schema `analytics` (pg_catalog, information_schema, public, personal, ...) or
  one the schema does not have; unqualified names resolve to `analytics` (CTE names are scoped as
  Postgres scopes them), table functions (`FROM generate_series(...)`) are refused;
- a function outside `ALLOWED_FUNCTIONS` (pg_sleep, set_config, dblink, lo_import, generate_series,
  ...), or any schema-qualified function; a cast to a type outside `ALLOWED_TYPES` (regclass,
  oid, ...).

What runs is not the text given but sqlglot's rendering of the validated tree, with every table
qualified and comments dropped, so what the guard checked is what Postgres executes (no parser
differential through comments, quoting or case). The guard is one of three layers: the SQL then
runs as a role that can only read `analytics`, inside a READ ONLY transaction.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.optimizer.qualify_tables import qualify_tables

from tools.analytics.schema import MARKER_TABLE, SCHEMA, TABLE_NAMES
from tools.analytics.source import DEMO_SCOPE, Scope

#: sqlglot expression classes (typed functions) a query may use.
ALLOWED_FUNCTION_CLASSES: frozenset[str] = frozenset(
    {
        # aggregates
        "Count", "Sum", "Avg", "Min", "Max", "Stddev", "StddevPop", "StddevSamp", "Variance",
        "VariancePop", "PercentileCont", "PercentileDisc", "Median", "Mode", "GroupConcat",
        "LogicalOr", "LogicalAnd", "Corr", "CovarPop", "CovarSamp", "RegrSlope", "RegrIntercept",
        "ArrayAgg",
        # boolean connectives (sqlglot models AND / OR as functions)
        "And", "Or", "Xor",
        # conditionals and casts
        "Case", "If", "Coalesce", "Nullif", "Greatest", "Least", "Cast", "TryCast", "Exists",
        # numbers
        "Round", "Abs", "Ceil", "Floor", "Trunc", "Sqrt", "Pow", "Ln", "Log", "Exp", "Sign",
        # dates
        "Extract", "TimestampTrunc", "DateTrunc", "TimeToStr", "CurrentDate", "CurrentTimestamp",
        "DateAdd", "DateSub", "DateDiff", "StrToDate", "TsOrDsToDate", "Date", "TimeStrToDate",
        # text
        "Lower", "Upper", "Length", "Concat", "ConcatWs", "Substring", "Trim", "Left", "Right",
        "Replace", "Initcap", "SplitPart", "StrPosition",
        # window functions
        "RowNumber", "Rank", "DenseRank", "Ntile", "Lag", "Lead", "FirstValue", "LastValue",
        "NthValue", "PercentRank", "CumeDist",
        # literals
        "Array",
    }
)  # fmt: skip

#: Functions sqlglot leaves untyped (`Anonymous`) that a query may use, by lower-case name.
ALLOWED_ANONYMOUS: frozenset[str] = frozenset(
    {"make_date", "age", "date_part", "to_date", "justify_interval", "width_bucket", "every"}
)

#: Every function the guard allows, by name, for error messages and the model's prompt.
ALLOWED_FUNCTIONS: tuple[str, ...] = (
    "count, sum, avg, min, max, stddev, variance, percentile_cont, percentile_disc, mode, "
    "string_agg, bool_and, bool_or, corr, regr_slope, array_agg, case, coalesce, nullif, "
    "greatest, least, cast, round, abs, ceil, floor, trunc, sqrt, power, ln, log, exp, sign, "
    "extract, date_part, date_trunc, to_char, to_date, make_date, age, current_date, now, lower, "
    "upper, length, concat, substring, trim, left, right, replace, initcap, split_part, position, "
    "row_number, rank, dense_rank, ntile, lag, lead, first_value, last_value, nth_value, "
    "percent_rank, cume_dist, width_bucket",
)

#: Cast targets a query may use.
ALLOWED_TYPES: frozenset[str] = frozenset(
    {
        "SMALLINT", "INT", "BIGINT", "DECIMAL", "DOUBLE", "FLOAT", "TEXT", "VARCHAR", "CHAR",
        "DATE", "TIMESTAMP", "TIMESTAMPTZ", "BOOLEAN", "INTERVAL", "BIGDECIMAL",
    }
)  # fmt: skip

#: Tree nodes that write, lock, change session state or bind parameters.
FORBIDDEN_NODES: tuple[type[exp.Expr], ...] = (
    exp.DML,
    exp.DDL,
    exp.Command,
    exp.Copy,
    exp.Into,
    exp.Lock,
    exp.Set,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
    exp.Grant,
    exp.Placeholder,
    exp.Parameter,
    exp.SessionParameter,
    exp.Pragma,
    exp.Describe,
    exp.Show,
    exp.Use,
    exp.LoadData,
    exp.Kill,
)

READABLE_TABLES: frozenset[str] = TABLE_NAMES | {MARKER_TABLE}


class SQLRefused(ValueError):
    """The SQL is not one read-only SELECT over schema `analytics`; the message says why."""


class WriteRefused(SQLRefused):
    """The SQL would change data or the schema (DML, DDL, COPY, SELECT INTO, ...)."""


#: Statements and clauses that change data or the schema (a refusal of one is a WriteRefused).
WRITES: tuple[type[exp.Expr], ...] = (
    exp.DML, exp.DDL, exp.Copy, exp.Into, exp.Merge, exp.Create, exp.Drop, exp.Alter,
    exp.TruncateTable, exp.Grant, exp.Revoke, exp.Comment,
)  # fmt: skip
#: Statements sqlglot leaves as a bare Command that change data or the schema.
COMMAND_WRITES = frozenset({"TRUNCATE", "ALTER", "GRANT", "REVOKE", "COMMENT", "REINDEX", "CLUSTER",
                            "VACUUM", "REFRESH", "IMPORT", "SECURITY", "REASSIGN"})  # fmt: skip


@dataclass(frozen=True)
class ValidatedSQL:
    """A query the guard accepted: the canonical SQL to run and the tables it reads."""

    sql: str
    tables: tuple[str, ...]


def _refuse(reason: str, scope: Scope = DEMO_SCOPE, *, writes: bool = False) -> SQLRefused:
    if scope is DEMO_SCOPE:
        where = f"schema {SCHEMA} ({', '.join(sorted(TABLE_NAMES))})"
    else:
        shown = scope.names()
        where = (
            f"schema {', '.join(scope.schemas)} ({shown[:300]}{'...' if len(shown) > 300 else ''})"
        )
    kind = WriteRefused if writes else SQLRefused
    return kind(
        f"SQL refused: {reason}. Only one read-only SELECT (CTEs allowed) over the tables of "
        f"{where} can run: the analytics agent is read-only and never changes data, whatever "
        "the question asks."
    )


def validate_sql(text: str, *, max_chars: int = 20_000, scope: Scope = DEMO_SCOPE) -> ValidatedSQL:
    """Check `text` and return the SQL to execute, or raise `SQLRefused`.

    `scope` names the readable schemas and tables (the demo's `analytics` by default); an
    unqualified table resolves to the first schema of the scope that has it.
    """
    if not text or not text.strip():
        raise _refuse("the SQL is empty", scope)
    if len(text) > max_chars:
        raise _refuse(f"the SQL is {len(text)} characters long (at most {max_chars})", scope)
    try:
        statements = [s for s in sqlglot.parse(text, read="postgres") if s is not None]
    except SqlglotError as exc:
        raise _refuse(
            f"it does not parse as PostgreSQL ({str(exc).splitlines()[0][:200]})", scope
        ) from None
    if len(statements) != 1:
        raise _refuse(f"it holds {len(statements)} statements, not one", scope)
    tree = statements[0]
    if not _is_select(tree):
        label = _statement(tree)
        writes = isinstance(tree, WRITES) or label in COMMAND_WRITES
        article = "an" if label[:1] in "AEIOU" else "a"
        change = " (it would change data)" if writes else ""
        raise _refuse(
            f"it is {article} {label} statement{change}, not a SELECT", scope, writes=writes
        )
    for node in tree.walk():
        _check_node(node, scope)
    tree = normalize_identifiers(tree, dialect="postgres")
    _check_cte_names(tree, scope)
    if scope is DEMO_SCOPE:
        tree = qualify_tables(tree, db=SCHEMA, dialect="postgres")
    _qualify(tree, scope)
    tables = _check_tables(tree, scope)
    rendered = tree.sql(dialect="postgres", comments=False)
    _check_round_trip(rendered, scope)
    return ValidatedSQL(rendered, tables)


def _names_visible_cte(table: exp.Table) -> bool:
    """Whether unqualified `table` names a CTE visible where it stands, as Postgres scopes them.

    A CTE is visible in its query's body (every branch of a UNION the WITH belongs to, every
    subquery nested in it) and in the CTEs after it in the same WITH (all of them under WITH
    RECURSIVE), nowhere else: not in a sibling subquery, not in the query around the one that
    defines it. Anything else an unqualified name could mean is a real table.
    """
    name = table.name
    path: list[exp.Expr] = [table]
    node = table.parent
    while node is not None:
        with_ = node.args.get("with_")
        if isinstance(with_, exp.With):
            ctes = list(with_.expressions)
            if path[-1] is with_:  # inside one of this WITH's CTEs: only earlier ones are seen
                position = next(i for i, cte in enumerate(ctes) if cte is path[-2])
                visible = ctes if with_.args.get("recursive") else ctes[:position]
            else:
                visible = ctes
            if any(cte.alias_or_name == name for cte in visible):
                return True
        path.append(node)
        node = node.parent
    return False


def _check_cte_names(tree: exp.Expr, scope: Scope) -> None:
    """Postgres refuses a WITH naming one CTE twice; refuse it here rather than guess which."""
    for with_ in tree.find_all(exp.With):
        names = [cte.alias_or_name for cte in with_.expressions]
        for name in names:
            if names.count(name) > 1:
                raise _refuse(f"the WITH names CTE {name} more than once", scope)


def _statement(tree: exp.Expr) -> str:
    """The statement's keyword as written (TRUNCATE, VACUUM), not sqlglot's class name."""
    if isinstance(tree, exp.Command):
        return str(tree.name).split()[0].upper() if str(tree.name).strip() else "COMMAND"
    return {"truncatetable": "TRUNCATE"}.get(tree.key, tree.key.upper())


def _qualify(tree: exp.Expr, scope: Scope) -> None:
    """Qualify each unqualified table that is not a CTE visible where it stands with the first
    scope schema that has it; refuse one no scope schema has."""
    for table in list(tree.find_all(exp.Table)):
        if table.db or not isinstance(table.this, exp.Identifier):
            continue
        if _names_visible_cte(table):
            continue
        schema = scope.resolve(table.name)
        if schema is None:
            raise _refuse(f"there is no table {table.name} in {', '.join(scope.schemas)}", scope)
        table.set("db", exp.to_identifier(schema))
        if not table.alias:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name)))


def _check_round_trip(rendered: str, scope: Scope = DEMO_SCOPE) -> None:
    """Refuse SQL whose rendering does not read back as the same single SELECT.

    What executes is the rendering, not the text that was checked; sqlglot's generator can
    render an odd tree (``SELECT LATERAL ...``) as text Postgres would read differently, so the
    rendering is parsed and checked again rather than trusted.
    """
    problem = "its normalised form does not read back as the same query"
    try:
        again = [s for s in sqlglot.parse(rendered, read="postgres") if s is not None]
    except SqlglotError:
        raise _refuse(problem, scope) from None
    if len(again) != 1 or not _is_select(again[0]):
        raise _refuse(problem, scope)
    if again[0].sql(dialect="postgres", comments=False) != rendered:
        raise _refuse(problem, scope)
    for node in again[0].walk():
        _check_node(node, scope)
    _check_tables(again[0], scope)


def _is_select(tree: exp.Expr) -> bool:
    if isinstance(tree, exp.Select):
        return True
    if isinstance(tree, exp.SetOperation):
        return _is_select(tree.left) and _is_select(tree.right)
    if isinstance(tree, exp.Subquery):
        return _is_select(tree.this)
    return False


def _function_name(node: exp.Func) -> str:
    """The function's name as Postgres spells it (UNNEST, not sqlglot's EXPLODE)."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    rendered = node.sql(dialect="postgres")
    return rendered.split("(", 1)[0].strip().lower() or node.sql_name().lower()


def _check_node(node: exp.Expr, scope: Scope = DEMO_SCOPE) -> None:
    if isinstance(node, FORBIDDEN_NODES):
        labels: dict[type[exp.Expr], str] = {
            exp.Into: "SELECT ... INTO",
            exp.Lock: "a row lock (FOR UPDATE / FOR SHARE)",
            exp.Placeholder: "a query parameter",
            exp.Parameter: "a query parameter",
        }
        label = labels.get(type(node), f"a {node.key.upper()} clause")
        raise _refuse(f"it contains {label}", scope, writes=isinstance(node, WRITES))
    if isinstance(node, exp.Func):
        if isinstance(node.parent, exp.Dot):
            raise _refuse(
                f"schema-qualified function {node.parent.sql('postgres')} is not allowed", scope
            )
        if isinstance(node, exp.Anonymous):
            allowed = str(node.name).lower() in ALLOWED_ANONYMOUS
        else:
            allowed = type(node).__name__ in ALLOWED_FUNCTION_CLASSES
        if not allowed:
            raise SQLRefused(
                f"SQL refused: function {_function_name(node)}() is not allowed. Allowed "
                f"functions: {ALLOWED_FUNCTIONS[0]}."
            )
    if isinstance(node, exp.DataType) and isinstance(node.parent, exp.Cast | exp.TryCast):
        name = node.this.name if isinstance(node.this, exp.DataType.Type) else str(node.this)
        if name not in ALLOWED_TYPES:
            raise _refuse(f"a cast to {node.sql('postgres')} is not allowed", scope)
    if isinstance(node, exp.With) and node.args.get("recursive"):
        raise _refuse("recursive CTEs (WITH RECURSIVE) are not allowed", scope)
    if isinstance(node, exp.Table) and not isinstance(node.this, exp.Identifier):
        raise _refuse("table functions (e.g. FROM generate_series(...)) are not allowed", scope)


def _check_tables(tree: exp.Expr, scope: Scope = DEMO_SCOPE) -> tuple[str, ...]:
    """Every table read is a known table of a scope schema; an unqualified one left must name
    a CTE visible where it stands (never a CTE of the same name elsewhere in the query)."""
    used: list[str] = []
    for table in tree.find_all(exp.Table):
        if table.args.get("catalog"):
            raise _refuse(f"{table.sql('postgres')} names another database", scope)
        schema, name = table.db, table.name
        if not schema:
            if _names_visible_cte(table):
                continue
            raise _refuse(f"table {name} is not in schema {scope.default_schema}", scope)
        if schema not in scope.schemas:
            what = "a system catalog" if schema in ("pg_catalog", "information_schema") else ""
            raise _refuse(
                f"schema {schema} is not readable{' (' + what + ')' if what else ''} "
                f"(table {schema}.{name})",
                scope,
            )
        if (schema, name) not in scope.tables:
            raise _refuse(f"{schema} has no table {name}", scope)
        label = name if scope is DEMO_SCOPE else f"{schema}.{name}"
        if label not in used:
            used.append(label)
    return tuple(used)
