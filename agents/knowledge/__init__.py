"""The knowledge agent: hybrid retrieval over the user's documents, with reflection.

Graph side: `agent` (registration, quality gates, edges), `nodes` (evaluate_query, retrieve,
grade_documents, transform_query), `answering` (generate_answer, grade_response, the answer and
its API data), `edges` (routing functions), `state` (the state section), `llm` / `prompts` (the
model-backed strategies), `strategies` / `answer` (the offline ones), `common` (shared helpers).
Engine: `store` (`KnowledgeStore`), `retriever`, `ingest`, `loaders`, `chunking`, `types`.
Interfaces: `api` (REST /documents), `cli` (`python main.py ingest`).
"""
