"""The knowledge agent: hybrid retrieval over the user's documents, with reflection.

`spec` (its one entry: registration, quality gates, edges), `nodes` (evaluate_query, retrieve,
grade_documents, transform_query), `answering` (generate_answer, grade_response, the answer and
its API data), `edges` (routing functions), `state` (the state section), `llm` / `prompts` (the
model-backed strategies), `strategies` (the offline query-side ones) and `extractive` (the
offline answer and its grade, quoting `passages` with the `text` helpers), `probe` (the
router's data probe), `common` (shared helpers).

The engine it searches (`KnowledgeStore`, retrieval, ingestion, loaders) is `tools.knowledge`,
opened by the app's knowledge component; the agent only reads it from its services.
"""
