"""The SQL guard: every refusal case, with obfuscations, and what it lets through."""

from __future__ import annotations

import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from tools.analytics.guard import SQLRefused, validate_sql

SALES = "analytics.sales"

#: (id, SQL, a fragment the refusal message must contain)
REFUSED: list[tuple[str, str, str]] = [
    # DDL
    ("ddl-drop", f"DROP TABLE {SALES}", "DROP statement"),
    ("ddl-create", "CREATE TABLE analytics.x (a int)", "CREATE statement"),
    ("ddl-create-as", f"CREATE TABLE analytics.x AS SELECT * FROM {SALES}", "not a SELECT"),
    ("ddl-alter", f"ALTER TABLE {SALES} ADD COLUMN x int", "not a SELECT"),
    ("ddl-truncate", f"TRUNCATE {SALES}", "not a SELECT"),
    ("ddl-grant", f"GRANT SELECT ON {SALES} TO PUBLIC", "not a SELECT"),
    ("ddl-comment-prefix", f"/* harmless */ DROP TABLE {SALES}", "not a SELECT"),
    # DML, also hidden in CTEs and subqueries
    ("dml-insert", "INSERT INTO analytics.plants VALUES (9, 'x', 'y')", "not a SELECT"),
    ("dml-update", f"UPDATE {SALES} SET sale_price = 0", "not a SELECT"),
    ("dml-delete", f"DELETE FROM {SALES}", "not a SELECT"),
    (
        "dml-merge",
        f"MERGE INTO {SALES} s USING analytics.dealers d ON true WHEN MATCHED THEN DELETE",
        "not a SELECT",
    ),
    ("dml-in-cte", f"WITH d AS (DELETE FROM {SALES} RETURNING *) SELECT count(*) FROM d", "DELETE"),
    (
        "dml-in-nested-cte",
        f"WITH a AS (WITH b AS (UPDATE {SALES} SET financed = true "
        "RETURNING deal_id) SELECT * FROM b) SELECT * FROM a",
        "UPDATE",
    ),
    (
        "dml-insert-cte-lower",
        "with x as (insert into analytics.plants values (9,'a','b') returning 1) select * from x",
        "INSERT",
    ),
    # more than one statement
    ("multi-two-selects", "SELECT 1; SELECT 2", "2 statements"),
    ("multi-select-drop", f"SELECT 1; DROP TABLE {SALES}", "2 statements"),
    ("multi-empty-between", f"SELECT 1;; DELETE FROM {SALES}", "2 statements"),
    ("multi-comment-hidden", f"SELECT 1 /* ; */; DROP TABLE {SALES}", "2 statements"),
    ("multi-transaction", "BEGIN; SELECT 1; COMMIT", "3 statements"),
    # sleeping
    ("sleep", "SELECT pg_sleep(10)", "pg_sleep"),
    ("sleep-upper", "SELECT PG_SLEEP(1)", "pg_sleep"),
    ("sleep-quoted", 'SELECT "pg_sleep"(1)', "pg_sleep"),
    ("sleep-qualified", "SELECT pg_catalog.pg_sleep(1)", "schema-qualified"),
    ("sleep-in-where", f"SELECT * FROM {SALES} WHERE pg_sleep(1) IS NOT NULL", "pg_sleep"),
    ("sleep-for", "SELECT pg_sleep_for('1 minute')", "pg_sleep_for"),
    ("sleep-in-cte", "WITH s AS (SELECT pg_sleep(5)) SELECT * FROM s", "pg_sleep"),
    # COPY
    ("copy-to-stdout", f"COPY {SALES} TO STDOUT", "COPY"),
    ("copy-query-to-file", "COPY (SELECT 1) TO '/tmp/x'", "COPY"),
    ("copy-from-file", f"COPY {SALES} FROM '/etc/passwd'", "COPY"),
    ("copy-program", f"COPY {SALES} TO PROGRAM 'sh'", "COPY"),
    # functions outside the allow-list
    ("fn-set-config", "SELECT set_config('role', 'postgres', false)", "set_config"),
    ("fn-current-setting", "SELECT current_setting('data_directory')", "current_setting"),
    ("fn-version", "SELECT version()", "version"),
    ("fn-read-file", "SELECT pg_read_file('/etc/passwd')", "pg_read_file"),
    ("fn-ls-dir", "SELECT pg_ls_dir('.')", "pg_ls_dir"),
    ("fn-lo-import", "SELECT lo_import('/etc/passwd')", "lo_import"),
    ("fn-dblink", "SELECT * FROM dblink('host=x', 'DELETE FROM t') AS t(a int)", "table functions"),
    ("fn-dblink-exec", "SELECT dblink_exec('host=x', 'DROP TABLE t')", "dblink_exec"),
    (
        "fn-query-to-xml",
        "SELECT query_to_xml('select * from pg_authid', true, true, '')",
        "query_to_xml",
    ),
    ("fn-nextval", "SELECT nextval('analytics.seq')", "nextval"),
    ("fn-terminate", "SELECT pg_terminate_backend(1)", "pg_terminate_backend"),
    ("fn-txid", "SELECT txid_current()", "txid_current"),
    ("fn-advisory-lock", "SELECT pg_advisory_lock(1)", "pg_advisory_lock"),
    ("fn-notify", "SELECT pg_notify('c', 'x')", "pg_notify"),
    ("fn-in-order-by", f"SELECT deal_id FROM {SALES} ORDER BY random()", "rand"),
    ("fn-user-defined", "SELECT analytics.evil()", "schema-qualified"),
    # set-returning functions, as columns and as sources
    ("srf-generate-series", "SELECT generate_series(1, 100000000)", "generate"),
    ("srf-from", "SELECT count(*) FROM generate_series(1, 100000000)", "table functions"),
    ("srf-rows-from", "SELECT * FROM ROWS FROM (generate_series(1, 3))", "table functions"),
    ("srf-lateral", f"SELECT * FROM {SALES}, LATERAL generate_series(1, 10) g", "generate"),
    ("srf-unnest", "SELECT unnest(ARRAY[1, 2])", "unnest"),
    ("srf-json-each", "SELECT * FROM json_each('{}')", "table functions"),
    (
        "srf-recursive-cte",
        "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t",
        "recursive",
    ),
    # other schemas and unknown tables
    ("schema-pg-catalog", "SELECT * FROM pg_catalog.pg_roles", "pg_catalog"),
    ("schema-pg-unqualified", "SELECT rolname FROM pg_roles", "no table pg_roles"),
    ("schema-authid", "SELECT rolpassword FROM pg_authid", "no table pg_authid"),
    ("schema-information", "SELECT * FROM information_schema.tables", "information_schema"),
    ("schema-public", "SELECT * FROM public.users", "public"),
    ("schema-personal", "SELECT * FROM personal.tasks", "personal"),
    ("schema-quoted-upper", 'SELECT * FROM "ANALYTICS"."sales"', "ANALYTICS"),
    ("schema-quoted-catalog", 'SELECT * FROM "pg_catalog"."pg_class"', "pg_catalog"),
    ("schema-three-part", "SELECT * FROM otherdb.analytics.sales", "another database"),
    ("schema-unknown-table", "SELECT * FROM analytics.pg_roles", "no table pg_roles"),
    (
        "schema-in-subquery",
        f"SELECT * FROM {SALES} WHERE dealer_id IN (SELECT usesysid FROM pg_user)",
        "pg_user",
    ),
    ("schema-in-exists", "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_authid)", "pg_catalog"),
    (
        "schema-in-join",
        f"SELECT * FROM {SALES} s JOIN pg_stat_activity a ON true",
        "pg_stat_activity",
    ),
    (
        "schema-cte-shadow-escape",
        "SELECT * FROM (WITH pg_roles AS (SELECT 1 AS a) SELECT * FROM pg_roles) x, pg_roles",
        "no table pg_roles",
    ),
    (
        "schema-cte-sibling-scope",
        "SELECT (WITH pg_shadow AS (SELECT 1) SELECT 1), * FROM pg_shadow",
        "pg_shadow",
    ),
    (
        "schema-union-branch",
        "SELECT name FROM analytics.plants UNION SELECT rolname FROM pg_roles",
        "pg_roles",
    ),
    # writes and locks through SELECT syntax
    ("select-into", f"SELECT * INTO public.copy FROM {SALES}", "SELECT ... INTO"),
    ("select-into-temp", f"SELECT * INTO TEMP t FROM {SALES}", "SELECT ... INTO"),
    ("for-update", f"SELECT * FROM {SALES} FOR UPDATE", "row lock"),
    ("for-share", f"SELECT * FROM {SALES} FOR SHARE", "row lock"),
    ("for-no-key-update-nowait", f"SELECT * FROM {SALES} FOR NO KEY UPDATE NOWAIT", "row lock"),
    ("for-update-in-subquery", f"SELECT * FROM (SELECT * FROM {SALES} FOR UPDATE) s", "row lock"),
    # casts that probe the catalog
    ("cast-regclass", "SELECT 'pg_authid'::regclass", "REGCLASS"),
    ("cast-oid", "SELECT CAST(1 AS oid)", "cast"),
    ("cast-regproc", "SELECT 'pg_sleep'::regproc", "cast"),
    # parameters, session and transaction control
    ("param-dollar", "SELECT $1", "parameter"),
    ("param-colon", "SELECT :x", "parameter"),
    ("set-role", "SET ROLE postgres", "not a SELECT"),
    ("reset-role", "RESET ROLE", "not a SELECT"),
    ("set-timeout", "SET statement_timeout = 0", "not a SELECT"),
    ("show", "SHOW search_path", "not a SELECT"),
    ("explain-analyze", f"EXPLAIN ANALYZE DELETE FROM {SALES}", "not a SELECT"),
    ("lock-table", f"LOCK TABLE {SALES}", "not a SELECT"),
    ("vacuum", "VACUUM", "not a SELECT"),
    ("prepare", "PREPARE p AS SELECT 1", "not a SELECT"),
    ("do-block", "DO $$ BEGIN PERFORM pg_sleep(1); END $$", "not a SELECT"),
    ("call", "CALL analytics.p()", "not a SELECT"),
    ("declare-cursor", "DECLARE c CURSOR FOR SELECT 1", "not a SELECT"),
    ("values-root", "VALUES (1)", "not a SELECT"),
    # malformed
    ("empty", "   ", "empty"),
    ("garbage", "SELECT FROM WHERE (((", "parse"),
    ("too-long", "SELECT 1" + " " * 30_000, "characters long"),
]


@pytest.mark.parametrize(
    "sql, fragment", [(s, f) for _, s, f in REFUSED], ids=[i for i, _, _ in REFUSED]
)
def test_refused(sql: str, fragment: str) -> None:
    with pytest.raises(SQLRefused) as info:
        validate_sql(sql)
    message = str(info.value)
    assert message.startswith("SQL refused")
    assert fragment.lower() in message.lower(), message


ACCEPTED = [
    "SELECT count(*) FROM analytics.sales",
    "SeLeCt CoUnT(*) FrOm AnAlYtIcS.SaLeS",
    'SELECT count(*) FROM "analytics"."sales"',
    "SELECT count(*) FROM sales",  # unqualified names resolve to analytics
    "SELECT 1 -- a trailing comment",
    "SELECT /* pg_sleep(1) */ count(*) FROM analytics.sales",
    "WITH pg_roles AS (SELECT region FROM analytics.dealers) SELECT * FROM pg_roles",
    "WITH a AS (SELECT * FROM analytics.sales), b AS (SELECT * FROM a) SELECT count(*) FROM b",
    "SELECT d.region, ROUND(100.0 * SUM(CASE WHEN s.financed THEN 1 ELSE 0 END) / "
    "NULLIF(COUNT(*), 0), 2) FROM analytics.sales s JOIN analytics.dealers d USING (dealer_id) "
    "GROUP BY 1 ORDER BY 2 DESC LIMIT 3",
    "SELECT date_trunc('month', sold_on)::date, to_char(sold_on, 'YYYY-\"Q\"Q'), "
    "extract(year FROM sold_on), sold_on - interval '30 days' FROM analytics.sales",
    "SELECT carrier, rank() OVER (ORDER BY avg(damaged::int) DESC) FROM analytics.shipments "
    "GROUP BY carrier",
    "SELECT name FROM analytics.plants UNION ALL SELECT name FROM analytics.dealers",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY sale_price) FROM analytics.sales",
    "SELECT count(*) FILTER (WHERE gap_sold) FROM analytics.sales WHERE dealer_id = ANY "
    "(ARRAY[1, 2])",
    "SELECT version FROM analytics.dataset_info",
]


@pytest.mark.parametrize("sql", ACCEPTED)
def test_accepted_and_rendered_fully_qualified(sql: str) -> None:
    validated = validate_sql(sql)
    tree = sqlglot.parse_one(validated.sql, read="postgres")
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        assert table.db == "analytics" or table.name in ctes
    assert "/*" not in validated.sql and "--" not in validated.sql  # comments are dropped


def test_unqualified_names_run_in_analytics() -> None:
    assert validate_sql("SELECT count(*) FROM sales").sql == (
        "SELECT COUNT(*) FROM analytics.sales AS sales"
    )


TOKENS = st.sampled_from([
    "SELECT", "FROM", "WHERE", "analytics.sales", "pg_roles", "pg_catalog.pg_class", ";", "(",
    ")", "1", "*", "count(*)", "pg_sleep(1)", "DELETE", "UPDATE", "INSERT INTO", "WITH x AS",
    "x", "UNION", "--", "/*", "*/", "'", '"', "FOR UPDATE", "INTO", "generate_series(1,2)",
    "$1", "::regclass", "JOIN", "ON", "true", "LATERAL", "COPY", ",", "AS", "sales",
])  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(TOKENS, min_size=1, max_size=14).map(" ".join) | st.text(max_size=200))
def test_anything_is_either_refused_or_one_select_over_analytics(text: str) -> None:
    """Arbitrary input never crashes the guard; what it accepts reads only analytics tables."""
    try:
        validated = validate_sql(text)
    except SQLRefused:
        return
    tree = sqlglot.parse_one(validated.sql, read="postgres")
    assert isinstance(tree, exp.Select | exp.SetOperation | exp.Subquery)
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        assert table.db == "analytics" or table.name in ctes
    for node in tree.walk():
        assert not isinstance(node, exp.DML | exp.DDL | exp.Lock | exp.Into | exp.Copy)
        if isinstance(node, exp.Anonymous):
            assert node.name.lower() not in ("pg_sleep", "set_config", "dblink")


@pytest.mark.parametrize(
    "sql",
    ["SELECT LATERAL SELECT AS", "SELECT LATERAL (SELECT 1) AS x", "SELECT * FROM LATERAL SELECT"],
)
def test_sql_whose_rendering_reads_back_differently_is_refused(sql: str) -> None:
    """What runs is the guard's rendering, so a rendering that does not round-trip is refused."""
    with pytest.raises(SQLRefused, match="does not read back"):
        validate_sql(sql)
