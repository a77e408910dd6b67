"""The lexical leg's query: exact BM25 (tantivy's and Lucene's formula) in one SQL statement.

``score(chunk) = sum over query terms t of qtf(t) * idf(t) * tf * (k1 + 1) /
(tf + k1 * (1 - b + b * dl / avgdl))`` with ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``,
N and avgdl from ``knowledge.corpus``, tf and dl from ``knowledge.postings``.
"""

from __future__ import annotations

#: BM25 over the postings of the query terms; N and avgdl from the corpus row. One round trip:
#: each term's df is counted on the covering index first (tiny), then the postings are read once.
BM25_SQL = """
WITH q AS (SELECT term, qtf FROM unnest(%(terms)s::text[], %(qtf)s::int[]) AS t(term, qtf)),
c AS (SELECT chunks::float8 AS n, total_length::float8 / greatest(chunks, 1) AS avgdl
      FROM knowledge.corpus WHERE kb = %(kb)s AND owner = %(owner)s AND chunks > 0),
w AS (SELECT q.term, q.qtf * ln(1 + (c.n - d.df + 0.5) / (d.df + 0.5)) AS weight
      FROM q CROSS JOIN c CROSS JOIN LATERAL (
        SELECT count(*)::float8 AS df FROM knowledge.postings p
        WHERE p.kb = %(kb)s AND p.owner = %(owner)s AND p.term = q.term) d
      WHERE d.df > 0),
s AS (SELECT p.chunk, sum(w.weight * p.tf * (%(k1)s + 1)
             / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.dl / c.avgdl))) AS score
      FROM w JOIN knowledge.postings p
        ON p.kb = %(kb)s AND p.owner = %(owner)s AND p.term = w.term
      CROSS JOIN c
      GROUP BY p.chunk ORDER BY score DESC, p.chunk LIMIT %(n)s)
SELECT ch.chunk_id::text, ch.document_id::text, s.score
FROM s JOIN knowledge.chunks ch ON ch.id = s.chunk
ORDER BY s.score DESC, s.chunk
"""
