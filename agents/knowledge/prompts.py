"""Prompts of the knowledge agent's model-backed stages, and its fixed answer texts."""

from __future__ import annotations

EVALUATE_SYSTEM = """\
You tune a hybrid search engine over the user's documents. It mixes a keyword leg (BM25: exact \
words, identifiers, error codes, names, quoted phrases) and a semantic leg (embeddings: meaning, \
paraphrase, concepts). Classify the user's latest question:
- lexical: exact identifiers, codes, numbers, names, quoted phrases or rare terms must match;
- semantic: a natural-language or conceptual question whose wording may differ from the documents;
- balanced: both matter.
Give lambda_mult between 0 and 1 (0 = keyword leg only, 1 = semantic leg only): about 0.2-0.4 \
for lexical, 0.5 for balanced, 0.6-0.8 for semantic.
Also give search_query: the question as a standalone search query. Resolve references to the \
earlier conversation ("it", "that file"), keep identifiers and quoted text exactly, drop \
greetings and filler."""

EVALUATE_USER = """\
Earlier conversation (may be empty):
{history}

Latest question: {question}"""

GRADE_DOCUMENT_SYSTEM = """\
You grade one document retrieved for a user's question. It is relevant when it contains \
information that answers the question or directly supports an answer; sharing a few words or \
the general topic is not enough. Give relevant (true/false), score between 0 and 1 (how much of \
the answer it provides: 0 = nothing, 1 = all of it) and a one-sentence reason."""

GRADE_DOCUMENT_USER = """\
Question: {question}

Document "{title}":
{text}"""

TRANSFORM_SYSTEM = """\
A search over the user's documents did not find good enough material for the question, or the \
answer built from it failed its check. Write one better search query: use other words and \
synonyms, name the concepts the answer would contain, split off what is not needed. Keep \
identifiers, codes and quoted phrases exactly. Do not repeat an earlier query. Give the query \
and a short reason."""

TRANSFORM_USER = """\
Question: {question}

Queries already tried:
{queries}

Why they failed:
{reasons}

Titles of the documents they found:
{titles}"""

GENERATE_SYSTEM = """\
You answer questions from the user's own documents. Use ONLY the numbered sources below. \
After each statement, cite the source(s) it comes from as [1], [2] (several: [1][3]). If the \
sources do not contain the answer, say so plainly; never fill gaps from outside knowledge. \
Be concise. Do not add a list of sources; it is appended for you."""

GENERATE_USER = """\
Sources:
{sources}

Question: {question}"""

GRADE_RESPONSE_SYSTEM = """\
You check an answer that was written from numbered sources. grounded: every statement is \
supported by the source(s) it cites. answers_question: it actually answers the question (an \
honest "the documents do not say" is grounded but does not answer). Give score between 0 and 1 \
and list the problems (empty when there are none)."""

GRADE_RESPONSE_USER = """\
Question: {question}

Sources:
{sources}

Answer:
{answer}"""

EMPTY_KNOWLEDGE_BASE = """\
I have no documents to answer from yet: the knowledge base is empty, and I will not guess. \
Add your documents (files or folders: .md, .txt, .rst, .html, .pdf, .docx, .pptx, .xlsx, .csv, \
.json, BEIR-style .jsonl) with \
`python main.py ingest PATH...`, or upload them with `POST /documents`, then ask again."""

LOW_CONFIDENCE = "Low confidence: {reason}."
