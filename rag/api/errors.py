"""Clear JSON errors (issue 38, item 4): ``{"error": {"code", "status", "message", "file"}}`` for every failure.

A bad input gets 400 (malformed), 413 (too large), 415 (a type this product does not read, sniffed from the
bytes), 422 (well-formed but invalid: an unknown mode, an empty question); 404 an unknown document, job, chunk or
collection; 409 a document still indexing; 429 the answer queue is full (``Retry-After``); 503 while the models
load or when a model is missing (``Retry-After`` while loading). Domain errors (:mod:`rag.errors`) are mapped
here, once, so every route, the OpenAI endpoint and the SSE stream say the same thing for the same fault.
"""

from __future__ import annotations

from typing import Any

from rag.errors import ExtractionError, LimitExceeded, ModelError, RagError, StoreError


class ApiError(Exception):
    """One HTTP error: ``status`` (an HTTP code), ``code`` a stable machine word (``not_found``,
    ``still_indexing``, ``queue_full``, ...), ``message`` for a person, ``file`` the file's name when one is
    concerned, ``retry_after`` seconds (429, 503) or ``None``."""

    def __init__(self, status: int, code: str, message: str, *, file: str | None = None,
                 retry_after: float | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.file, self.retry_after = status, code, message, file, retry_after

    def to_json(self) -> dict[str, Any]:
        """``{"error": {"code", "status", "message", "file"}}`` (``file`` only when one is concerned)."""
        err: dict[str, Any] = {"code": self.code, "status": self.status, "message": self.message}
        if self.file is not None:
            err["file"] = self.file
        return {"error": err}

    def headers(self) -> dict[str, str]:
        """``Retry-After`` (whole seconds, at least 1) when the client should come back later."""
        return {} if self.retry_after is None else {"Retry-After": str(max(1, round(self.retry_after)))}


def not_found(what: str, ident: str | int) -> ApiError:
    """404 for an unknown ``what`` (``document``, ``job``, ``chunk``, ``collection``, ``chat``)."""
    return ApiError(404, "not_found", f"no {what} with id {ident}")


def from_rag_error(e: RagError) -> ApiError:
    """The HTTP error of a domain error: a limit 413, another extraction failure 422, a missing or broken model
    503, a store's refusal 409 when a document is being indexed, else 400; the message is the error's own."""
    if isinstance(e, LimitExceeded):
        return ApiError(413, "too_large", str(e), file=e.name)
    if isinstance(e, ExtractionError):
        return ApiError(422, "unreadable", str(e), file=e.name)
    if isinstance(e, ModelError):
        return ApiError(503, "model_unavailable", str(e))
    if isinstance(e, StoreError) and "being indexed" in str(e):
        return ApiError(409, "still_indexing", str(e))
    if isinstance(e, StoreError) and str(e).startswith("no "):
        return ApiError(404, "not_found", str(e))
    return ApiError(400, "bad_request", str(e))
