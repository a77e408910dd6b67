"""The analytics agent: business questions answered with read-only SQL, KPIs, root causes, charts.

Modules:
- `spec`: the agent's registration and its subgraph (`analytics_agent()`), its entry.
- `react`: `build_analytics_agent` (LangChain v1 `create_agent` over the analytics tools),
  `answer_question` / `astream_answer` (one question -> `AnalyticsAnswer`, progress events
  first) and `build_analytics_graph` (the subgraph for the root graph).
- `answer`: `AnalyticsAnswer` (the REST shape) and how it is assembled from a turn's tool results.
- `planner`: the deterministic plan that runs the same tools when no chat model is configured.
- `tools`: the agent's tools (`ANALYTICS_TOOLS`): the analytics operations fed from the
  conversation (result ids), with progress events and artifacts.
- `middleware`: the `@wrap_tool_call` middleware turning tool exceptions into ToolMessages.
- `prompts`: the system prompt and fixed texts.

The engine and the operations live in `tools.analytics` (dataset and seeding, SQL guard, read-only
executor, semantic layer, KPI analysis, root-cause analysis, charts, `AnalyticsContext`).
"""
