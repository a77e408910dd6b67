"""The knowledge base engine: documents, chunks, vectors and BM25 postings in Postgres.

One engine every process and replica shares (the embedded pgserver Postgres 16 when
DATABASE_URL is unset; any Postgres with pgvector otherwise):

- `store`: `KnowledgeStore`, the async API the agent, the operations and the CLI call
  (ingestion, the document registry, hybrid search);
- `retriever`: hybrid retrieval (both legs, weighted RRF, the reranking stage);
- `ingest`: indexing of loaded documents (hash, skip-unchanged, chunk, embed, write);
- `loaders` / `chunking`: files to documents, documents to chunks;
- `types`: the value types (registry rows, ingestion reports, search hits);
- `operations`: the capability's typed operations (`OPERATIONS`: search, list, get, delete);
- `analysis`: the English analyzer both indexing and queries use (tantivy's, unchanged);
- `bm25`: the lexical leg's BM25 query (one SQL statement);
- `schema`: the tables (``knowledge.*``), created idempotently under an advisory lock;
- `engine`: `KnowledgeEngine`, the blocking API (dense leg on pgvector HNSW, exact BM25 in
  SQL from postings, transactional document writes where the registry row is the commit point);
- `connect`: which Postgres to use;
- `legacy`: the one-time import of a knowledge base from the old layout (Qdrant local mode +
  tantivy under DATA_DIR);
- `metrics`: retrieval metrics (nDCG, recall; BEIR readers) the bench and tests score with.
"""
