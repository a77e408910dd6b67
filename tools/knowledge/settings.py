"""The knowledge capability's settings group: retrieval, reflection, chunking, ingestion.

A leaf: imports only pydantic, the standard library and `tools.settings_group`; `config.Settings`
composes it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, Field, field_validator

from tools.settings_group import SettingsGroup


class KnowledgeSettings(SettingsGroup):
    """Retrieval, reflection, chunking and ingestion of the knowledge base (group `knowledge`)."""

    enable_reflection: bool = Field(
        True,
        description="Master switch of the reflection loop (grading, query rewrite, retries).",
    )
    enable_document_grading: bool = Field(True, description="Grade retrieved documents.")
    enable_response_grading: bool = Field(True, description="Grade the generated answer.")
    enable_query_transformation: bool = Field(
        True,
        description="Rewrite the query when documents or answer fail.",
    )
    reflection_max_iterations: int = Field(2, ge=0, le=10, description="Max retrieval retries.")
    reflection_min_relevant_docs: int = Field(
        1,
        ge=0,
        le=100,
        description="Relevant documents needed to pass grading (never more than the knowledge "
        "base or the retrieved set holds); raise it to ask for corroboration by several "
        "documents.",
    )
    reflection_doc_score_threshold: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Mean relevance score the relevant documents need.",
    )
    enable_reranking: bool = Field(
        False,
        description="Rerank candidates with a cross-encoder.",
    )
    reranker_model: str = Field(
        "cross-encoder/ms-marco-MiniLM-L-6-v2",
        description="Cross-encoder model name or local path.",
    )
    reranker_fetch_k: int = Field(
        15,
        ge=1,
        le=1000,
        description="Candidates fetched for reranking.",
    )
    retrieval_top_k: int = Field(
        4,
        ge=1,
        le=100,
        description="Documents given to the answer.",
    )
    rrf_k: int = Field(
        60,
        ge=1,
        le=1000,
        description="Reciprocal Rank Fusion constant.",
    )
    fusion_adaptive: bool = Field(
        True,
        description="Weight the hybrid legs per query by their cross-leg support (the share of "
        "a leg's best hits the other leg also retrieves), so a leg matching noise counts less; "
        "off: every query uses the asked lambda (see the README's fusion section).",
    )
    fusion_agreement_depth: int = Field(
        20,
        ge=1,
        le=100,
        description="Best hits of each leg whose support by the other leg is counted.",
    )
    fusion_agreement_gain: float = Field(
        2.0,
        ge=0.0,
        le=4.0,
        description="How far the support difference moves a query's lambda (0: not at all; "
        "lambda stays within 0.1..0.9).",
    )
    chunk_size: int = Field(
        1200,
        ge=100,
        le=20_000,
        description="Target chunk size (characters).",
    )
    chunk_overlap: int = Field(
        200,
        ge=0,
        le=5_000,
        description="Overlap between chunks (characters).",
    )
    max_document_bytes: int = Field(
        20 * 1024 * 1024,
        ge=1,
        le=1 << 30,
        description="Largest file accepted for ingestion.",
    )
    hybrid_score_rerank: bool = Field(
        True,
        description="Reorder the fused hybrid candidates by their absolute relevance (model-free "
        "reranking; used when the cross-encoder is off).",
    )
    base_name: str = Field(
        "knowledge",
        validation_alias=AliasChoices("KNOWLEDGE_BASE_NAME"),
        pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$",
        description="Knowledge base to use (its rows in the knowledge.* tables of the Postgres).",
    )
    analyzer: Literal["english", "simple"] = Field(
        "english",
        validation_alias=AliasChoices("KNOWLEDGE_ANALYZER"),
        description="Lexical analyzer of the BM25 leg, the same for ingest and query: `english` "
        "(lowercase, ASCII folding, Snowball English stemmer: 'escalate' matches 'Escalation') "
        "or `simple` (the same without stemming). A knowledge base records the analyzer that "
        "built its postings and rebuilds them from the stored chunks, once, when this changes.",
    )
    phrase_boost: float = Field(
        1.0,
        ge=0.0,
        le=10.0,
        description='Weight of a quoted phrase ("...") in the lexical leg: a candidate holding '
        "every quoted phrase exactly scores (1 + PHRASE_BOOST) x its BM25, one holding the "
        "phrase's words within PHRASE_SLOP extra words half that boost; 0 turns it off.",
    )
    phrase_slop: int = Field(
        3,
        ge=0,
        le=50,
        description="Extra words allowed inside a quoted phrase for the proximity half-boost.",
    )
    chat_answer_threshold: float = Field(
        0.56,
        ge=0.0,
        le=1.0,
        description="Without a chat model, the chat agent answers from the knowledge base when "
        "the best passage's match to the message (the routing probe's score, 0..1) reaches "
        "this; below it, it lists what the agents can do. Calibrated by bench/chat_answer.py on "
        "the routing bench's labelled messages (see the README).",
    )
    dense_relevance_floor: float = Field(
        0.15,
        ge=-1.0,
        le=1.0,
        description="Cosine similarity at or below which a chunk counts as unrelated (relevance "
        "0); tuned for all-MiniLM-L6-v2.",
    )
    dense_relevance_ceiling: float = Field(
        0.65,
        ge=-1.0,
        le=1.0,
        description="Cosine similarity at or above which a chunk counts as a clear match "
        "(relevance 1); must be above DENSE_RELEVANCE_FLOOR.",
    )
    ingest_batch_documents: int = Field(
        256,
        ge=1,
        le=10_000,
        description="Documents embedded and written per ingestion batch (one transaction; "
        "larger batches let the model sort more texts by length: at 256, ingesting all of "
        "SciFact ran at 0.99x raw encoding; 64 ran at 0.65x).",
    )

    shared_writers: list[str] = Field(
        default_factory=list,
        validation_alias=AliasChoices("KNOWLEDGE_SHARED_WRITERS"),
        description="Comma-separated owner ids (key-...) that may upload to and delete from the "
        "shared collections every key reads; other keys write only their private collection. "
        "Without API_KEYS the one anonymous owner may. `main.py ingest` always may.",
    )
    max_document_metadata_keys: int = Field(
        32,
        ge=0,
        le=1000,
        description="Most keys in an upload's metadata (a JSON object of string, number and "
        "boolean values).",
    )
    max_document_metadata_bytes: int = Field(
        4096,
        ge=2,
        le=1_000_000,
        description="Largest upload metadata, in bytes of its JSON.",
    )

    @field_validator("shared_writers", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("dense_relevance_ceiling")
    @classmethod
    def _ceiling_above_floor(cls, value: float, info: Any) -> float:
        floor = info.data.get("dense_relevance_floor")
        if floor is not None and value <= floor:
            raise ValueError(f"must be above DENSE_RELEVANCE_FLOOR ({floor})")
        return value

    @field_validator("chunk_overlap")
    @classmethod
    def _overlap_below_size(cls, value: int, info: Any) -> int:
        size = info.data.get("chunk_size")
        if size is not None and value >= size:
            raise ValueError(f"must be smaller than CHUNK_SIZE ({size})")
        return value
