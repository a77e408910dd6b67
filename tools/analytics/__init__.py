"""Analytics engine and operations: business questions answered with guarded, read-only SQL.

Module map (each module's docstring has the details):

- `reference`: the demo company's fixed vocabulary (plants, brands/models, dealers, carriers,
  seasonality factors, the data range 2024-01-01..2025-12-31).
- `dataset`: deterministic generator (fixed SEED) and the planted stories a root-cause analysis
  should find; `DATASET_VERSION`.
- `schema`: tables, keys, indexes, column descriptions of schema `analytics`; `describe()` for
  a model's prompt.
- `seed`: `ensure_seeded(conninfo, reader_user=..., reader_password=...) -> SeedReport`
  (**synchronous**; call it with `asyncio.to_thread` from async code). Idempotent (version
  marker), safe for concurrent starts (advisory lock), COPY-fast; creates the reader role.
- `guard`: `validate_sql(text, scope=...) -> ValidatedSQL` or `SQLRefused` (sqlglot, postgres
  dialect; `scope` = the readable schemas and tables, the demo's by default).
- `source`: `Scope`, `DEMO_SCOPE`, `check_role` (superuser / writable role warnings), the
  supported dialect (PostgreSQL only).
- `catalogue_file`: the catalogue format (tables, columns with roles, FKs, metrics as SQL,
  synonyms, hidden) and the user's edits laid over a derived catalogue (YAML).
- `introspect`: `read_schema` (a PostgreSQL schema as the agent's role sees it) and `derive`.
- `external`: `open_source(ANALYTICS_DATABASE_URL, schemas, catalogue_path) -> ExternalSource`.
- `ask`, `ask_sql`: model-free questions over any catalogue; `bundled`: the demo's semantic
  layer as a catalogue.
- `executor`: `reader_conninfo`, `open_reader_pool`, `run_readonly(pool, sql, ...)` (READ ONLY
  transaction, statement_timeout, EXPLAIN cost ceiling, row cap, server-side cursor,
  cancellation-safe) and `explain` (plan only).
- `catalogue`, `periods`, `semantic`: the semantic layer (metrics x dimensions x time filters);
  `semantic.generate(question, today) -> SQLGeneration`.
- `sqlgen`: `generate_sql(question, today, model)`: model-written SQL (validated, one repair
  round) or the semantic layer.
- `kpi`: `analyze(result, query_type) -> AnalysisOutput`.
- `rootcause`: `root_cause(run, metric, current, previous) -> RootCauseOutput`.
- `charts`: `configure_chart(result, question) -> ChartConfigOutput` (Vega-Lite), and
  `render_chart` / `arender_chart` (PNG or SVG through vl-convert).
- `frame`: a result's column roles and number formatting, shared by `kpi` and `charts`.
- `outputs`: the pydantic models everything returns.
- `context`: `AnalyticsContext` (the agent's context schema: reader pool, user id, demo mode,
  SQL model, reference date, limits; `AnalyticsContext.from_settings`) and progress events.
- `operations`: the capability's operations (`OPERATIONS`): `generate_sql`, `run_sql`,
  `list_kpis`, `compute_kpi`, `explain_change`, `make_chart` (the analytics agent's tools in
  `agents/analytics/tools.py` call them).

Wiring (app layer): at start-up `ensure_seeded(DATABASE_URL, reader_user=...,
reader_password=...)` in a thread, then `pool = open_reader_pool(reader_conninfo(DATABASE_URL,
user, password), max_size=settings.analytics.pool_size)`; `await pool.open()`; build one
`AnalyticsContext.from_settings(settings, pool, sql_model=...)` and `.with_user(id)` per request.
"""
