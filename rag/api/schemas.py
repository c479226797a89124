"""The API's requests and responses as pydantic models (issue 38): what ``/docs`` shows and what a bad body is
checked against (422 with the field and the reason, :mod:`rag.api.errors`).

Responses declare the keys a program relies on and allow the rest (``extra="allow"``): the answer record is
:meth:`rag.answer.record.Answer.to_json`, whose full list of keys is pinned by the answer layer's tests, not here.
Every offset is 0-based code points into the document's canonical text; pages are 1-based physical pages.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rag.answer.followup import RewriteMethod
from rag.types import RetrievalMode

#: The longest question or query accepted, characters (a question is a sentence, not a document).
MAX_QUESTION_CHARS = 4000
#: The most documents one request may name as its scope.
MAX_SCOPE = 500

Mode = Literal[tuple(m.value for m in RetrievalMode)]  # type: ignore[valid-type]
Rewrite = Literal[tuple(m.value for m in RewriteMethod)]  # type: ignore[valid-type]


def _not_blank(text: str) -> str:
    """``text`` unchanged when it holds a character other than white space; else ``ValueError`` (a 422 naming the
    field): a question of spaces is no question, as an empty one (the new user's walk of the API, 2026-12-06: it was
    answered as a refusal of "")."""
    if not text.strip():
        raise ValueError("must hold a word, not only white space")
    return text


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class SearchRequest(BaseModel):
    """``POST /v1/search``: the top ``k`` chunks for ``query`` (no gate, no model), as ``rag search --json``."""

    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="What to search for.")
    _query_words = field_validator("query")(_not_blank)
    k: int = Field(20, ge=1, le=200, description="Hits to return.")
    mode: Mode = Field("hybrid", description="hybrid (dense and BM25 fused by RRF), dense or bm25 alone.")
    documents: list[str] | None = Field(None, max_length=MAX_SCOPE,
                                        description="Search only these documents (ids or unique prefixes).")
    collection: str | None = Field(None, description="The collection to search (default: the data folder's own).")


class AskRequest(BaseModel):
    """``POST /v1/ask``: one question answered with ``[n]`` citations, or refused without the model."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    _question_words = field_validator("question")(_not_blank)
    documents: list[str] | None = Field(None, max_length=MAX_SCOPE,
                                        description="Ask within these documents only (ids or unique prefixes).")
    collection: str | None = Field(None, description="The collection to ask (default: the data folder's own).")
    history: list[str] = Field(default_factory=list, max_length=50,
                               description="Earlier questions of the conversation, oldest first: a follow-up is "
                                           "made standalone from them before the search.")
    chat: int | Literal["new"] | None = Field(None, description="Continue saved chat ID, or 'new': the turn is saved "
                                                                "in the store's chats, as `rag ask --chat`.")
    rewrite: Rewrite = Field("keywords", description="How a follow-up becomes standalone.")
    stream: bool = Field(False, description="Answer as Server-Sent Events (queue, sources, key_passage, token, "
                                            "verdict, done, error) instead of one JSON object.")


class Citation(_Open):
    """One numbered source: ``index`` is the ``n`` of ``[n]``; ``quote`` its verbatim text, ``start``/``end``
    its offsets into the document's canonical text; ``locator`` the object and ``locator_label`` the words."""

    index: int
    document_id: str
    document_name: str
    locator_label: str
    fragment: str
    quote: str
    start: int
    end: int
    locator: dict[str, Any] | None = None
    chunk_id: int
    cosine_distance: float
    columns: list[str] = Field(default_factory=list, description="The column names of the table the quote sits in "
                                                                 "(its header row); empty outside a table.")
    first_column: int = Field(0, description="The 0-based column of the quote's first cell (a wide row's piece "
                                             "starts mid-row).")


class AnswerRecord(_Open):
    """The answer: the ``ask --json`` record (:meth:`rag.answer.record.Answer.to_json`), ``format`` its version."""

    format: int
    query: str
    answer: str | None = Field(description="The checked answer with its [n], or the key passage; null when refused.")
    refused: bool
    refusal: str | None
    verdict: str = Field(description="supported, partly_supported, may_not_answer or refused.")
    verdict_reason: str | None = None
    confidence: float | None = Field(None, description="The calibrated chance that the shown answer is right "
                                                        "(issue 39; null for a refusal or without a combiner). "
                                                        "The gate's P(the sources answer) is gate.score.")
    citations: list[Citation]
    key_passage: dict[str, Any] | None = None


class Hit(_Open):
    rank: int
    chunk_id: int
    document_id: str
    document_name: str
    content: str
    start: int
    end: int
    page: int | None
    cosine_distance: float
    rrf_score: float
    locator_label: str
    fragment: str
    locator: dict[str, Any]


class SearchResponse(_Open):
    query: str
    mode: str
    retrieval: dict[str, Any]
    hits: list[Hit]


class Passage(_Open):
    """A chunk: its verbatim ``text`` (``canonical[start:end]``), locator and the app's ``viewer_url``."""

    chunk_id: int
    document_id: str
    document_name: str
    text: str
    start: int
    end: int
    locator: dict[str, Any]
    locator_label: str
    fragment: str
    viewer_url: str


class JobOut(_Open):
    id: int
    state: str = Field(description="queued, running, done, failed or cancelled.")
    document_id: str
    name: str
    stage: str | None
    fraction: float
    elapsed_s: float
    reason: str | None


class DocumentOut(_Open):
    id: str
    name: str
    status: str = Field(description="queued, indexing, ready or failed.")
    reason: str | None
    chunk_count: int
    pages: int
    warnings: list[str]


class DocumentList(_Open):
    collection: str
    documents: list[DocumentOut]


class UploadItem(_Open):
    document_id: str | None = Field(description="None for a file refused before it was queued (status failed).")
    name: str
    status: str = Field(description="queued (with job_id), or at once duplicate, exists or failed.")
    job_id: int | None
    reason: str | None = None
    error: str | None = Field(default=None, description="A refused file's error code: empty_file, too_large, "
                                                        "unsupported_type.")


class UploadResponse(_Open):
    collection: str
    files: list[UploadItem]


class ErrorDetail(BaseModel):
    code: str
    status: int
    message: str
    file: str | None = None


class ErrorBody(BaseModel):
    """Every error: ``{"error": {"code", "status", "message", "file"}}``."""

    error: ErrorDetail


ERRORS = {c: {"model": ErrorBody} for c in (400, 404, 409, 413, 415, 422, 429, 503)}
