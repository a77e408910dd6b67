"""The knowledge base engine: documents, chunks, vectors and BM25 postings in Postgres.

One engine every process and replica shares (the embedded pgserver Postgres 16 when
DATABASE_URL is unset; any Postgres with pgvector otherwise):

- `analysis`: the English analyzer both indexing and queries use (tantivy's, unchanged);
- `bm25`: the lexical leg's BM25 query (one SQL statement);
- `schema`: the tables (``knowledge.*``), created idempotently under an advisory lock;
- `engine`: `KnowledgeEngine`, the blocking API (dense leg on pgvector HNSW, exact BM25 in
  SQL from postings, transactional document writes where the registry row is the commit point);
- `connect`: which Postgres to use;
- `legacy`: the one-time import of a knowledge base from the old layout (Qdrant local mode +
  tantivy under DATA_DIR).
"""
