"""The lexical leg's query: exact BM25 (tantivy's and Lucene's formula) in one SQL statement.

``score(chunk) = sum over query terms t of qtf(t) * idf(t) * tf * (k1 + 1) /
(tf + k1 * (1 - b + b * dl / avgdl))`` with ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``,
tf and dl from ``knowledge.postings``.

The statistics cover exactly the searched collections (``%(collections)s``): N and avgdl are
the sums of their ``knowledge.corpus`` rows, df counts their postings. A document filter (an SQL
condition on the chunk's document ``d``, `tools.knowledge.scope.compile_filters`) decides which
chunks are scored, inside the statement (before the LIMIT); it does not change the statistics.
"""

from __future__ import annotations

#: BM25 over the postings of the query terms; N and avgdl from the corpus rows. One round trip:
#: each term's df is counted on the covering index first (tiny), then the postings are read once.
#: ``{document_filter}`` is `document_filter`'s output ("" without a filter).
BM25_SQL = """
WITH q AS (SELECT term, qtf FROM unnest(%(terms)s::text[], %(qtf)s::int[]) AS t(term, qtf)),
c AS (SELECT sum(chunks)::float8 AS n, sum(total_length)::float8 / greatest(sum(chunks), 1) AS avgdl
      FROM knowledge.corpus WHERE kb = %(kb)s AND collection = ANY(%(collections)s)
      HAVING sum(chunks) > 0),
w AS (SELECT q.term, q.qtf * ln(1 + (c.n - d.df + 0.5) / (d.df + 0.5)) AS weight
      FROM q CROSS JOIN c CROSS JOIN LATERAL (
        SELECT count(*)::float8 AS df FROM knowledge.postings p
        WHERE p.kb = %(kb)s AND p.collection = ANY(%(collections)s) AND p.term = q.term) d
      WHERE d.df > 0),
s AS (SELECT p.chunk, sum(w.weight * p.tf * (%(k1)s + 1)
             / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.dl / c.avgdl))) AS score
      FROM w JOIN knowledge.postings p
        ON p.kb = %(kb)s AND p.collection = ANY(%(collections)s) AND p.term = w.term
      CROSS JOIN c{document_filter}
      GROUP BY p.chunk ORDER BY score DESC, p.chunk LIMIT %(n)s)
SELECT ch.chunk_id::text, ch.document_id::text, s.score
FROM s JOIN knowledge.chunks ch ON ch.id = s.chunk
ORDER BY s.score DESC, s.chunk
"""


def document_filter(where: str) -> str:
    """The clause that keeps only postings whose chunk's document ``d`` satisfies ``where``."""
    if not where:
        return ""
    return (
        "\n      WHERE EXISTS (SELECT 1 FROM knowledge.chunks fc JOIN knowledge.documents d"
        " ON d.kb = fc.kb AND d.collection = fc.collection AND d.document_id = fc.document_id"
        f" WHERE fc.id = p.chunk AND {where})"
    )
