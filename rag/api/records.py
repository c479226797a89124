"""The JSON the API answers with, built from the library's records (issue 38): documents, jobs, search hits,
passages and turns. A turn is :meth:`rag.answer.record.Answer.to_json`, the ``ask --json`` record, with the
same ``followup`` / ``scope`` / ``chat_id`` keys the CLI adds (:func:`rag.cli.answer.turn_json`) and ``format``
(:data:`rag.answer.record.ANSWER_FORMAT`), so a program reads one record whichever way it asked.

Offsets are 0-based code points into the document's stored canonical text (``canonical[start:end] ==
quote``); pages 1-based physical pages; times ISO 8601 UTC (documents) or Unix seconds (jobs' ``started``).
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any
from urllib.parse import urlencode

from rag.answer.cite import evidence_pages, fragment, locator_label, row_locator
from rag.answer.record import ANSWER_FORMAT, Answer
from rag.store.jobs import Job
from rag.store.records import ChunkRow, DocumentRow
from rag.store.results import IngestResult
from rag.store.store import Store
from rag.types import Hit, QueryPlan

#: The app's viewer page (``app_pages/2_Source.py``), where a citation opens at its place.
SOURCE_PAGE = "/Source"


def document_json(doc: DocumentRow, store: Store | None = None, job: Job | None = None) -> dict[str, Any]:
    """One document as ``status --json`` lists it (every :class:`rag.store.records.DocumentRow` field), plus
    ``coverage`` (the warnings about text a reader sees but extraction missed, the OCR'd pages) and, with
    ``store``, ``versions`` (earlier versions it replaced) and ``job`` (its newest job)."""
    out = asdict(doc)
    out["warnings"] = list(doc.warnings)
    out["ocr_pages"] = list(doc.ocr_pages)
    out["coverage"] = {"warnings": [w for w in doc.warnings if "coverage" in w.lower() or "ocr" in w.lower()],
                       "ocr_pages": list(doc.ocr_pages)}
    if store is not None:
        out["versions"] = [asdict(v) for v in store.versions(doc.id)] if doc.versions else []
    if job is not None:
        out["job"] = job_json(job)
    return out


def job_json(job: Job) -> dict[str, Any]:
    """One job: ``id``, ``state``, ``stage`` and its words (``stage_text``), ``done``/``total``, ``fraction``
    (0..1), ``elapsed_s`` since it started, ``eta_s``, ``reason`` and ``retryable`` when it failed, ``result``
    (the :class:`rag.store.results.IngestResult` of a finished job), the document's ``document_id`` and ``name``."""
    elapsed = None if job.started is None else round((time.time() if job.active else job.heartbeat or job.started)
                                                     - job.started, 1)
    return {"id": job.id, "kind": str(job.kind), "state": str(job.state), "document_id": job.doc_id,
            "name": job.name, "stage": job.stage, "stage_text": job.stage_text(), "done": job.done,
            "total": job.total, "fraction": round(job.fraction, 4), "elapsed_s": max(0.0, elapsed or 0.0),
            "eta_s": None if job.eta_s() is None else round(job.eta_s(), 1), "reason": job.reason,
            "retryable": job.retryable, "result": job.result, "attempts": job.attempts,
            "created_at": job.created_at, "finished_at": job.finished_at}


def upload_json(r: IngestResult) -> dict[str, Any]:
    """What ``POST /v1/documents`` says of one file: its document id, name, ``status`` (``queued`` with a
    ``job_id``, or at once ``duplicate`` / ``exists`` / ``failed`` with the ``reason``) and the result's fields."""
    return {"document_id": r.document_id, "name": r.name, "status": str(r.status), "job_id": r.job_id,
            "reason": r.reason, "existing_name": r.existing_name, "existing_id": r.existing_id,
            "replaced_id": r.replaced_id}


def hits_json(store: Store, query: str, hits: list[Hit], plan: QueryPlan, mode: str) -> dict[str, Any]:
    """``search --json``'s object (:mod:`rag.cli.store`): ``query``, ``mode``, ``retrieval`` and the ``hits``,
    best first, each with its scores (``cosine_distance``, ``rrf_score``, each leg's rank, ``bm25_score``,
    ``rerank_score``) and its locator (object, label, URL fragment, 1-based evidence ``page``)."""
    rows = store.chunks([h.chunk_id for h in hits])
    pages = evidence_pages(rows, query, store)
    out = [{"rank": h.rank, "chunk_id": h.chunk_id, "document_id": r.document_id, "document_name": r.document_name,
            "page": p, "start": r.start, "end": r.end, "section": list(r.section), "content": r.content,
            "cosine_distance": round(h.cosine_distance, 6), "media_type": r.media_type,
            "locator_label": locator_label(r, p), "fragment": fragment(r, p), "locator": row_locator(r).to_json(),
            "rrf_score": round(h.rrf_score, 6), "dense_rank": h.dense_rank, "bm25_rank": h.bm25_rank,
            "bm25_score": None if h.bm25_score is None else round(h.bm25_score, 4),
            "rerank_score": None if h.rerank_score is None else round(h.rerank_score, 4)}
           for h, r, p in zip(hits, rows, pages)]
    return {"query": query, "mode": mode, "retrieval": plan.to_json(), "hits": out}


def viewer_url(app_url: str, row: ChunkRow, collection: str | None = None) -> str:
    """The app's viewer at the passage: ``<app>/Source?doc=&chunk=&start=&end=`` (plus ``page`` for a PDF and
    ``collection`` for another than the default), the link a ``[n]`` opens in the app (``ui/format.py``)."""
    params: dict[str, Any] = {"doc": row.document_id, "chunk": row.chunk_id, "start": row.start, "end": row.end}
    if row.page is not None:
        params["page"] = row.page
    if collection:
        params["collection"] = collection
    return f"{app_url.rstrip('/')}{SOURCE_PAGE}?{urlencode(params)}"


def passage_json(row: ChunkRow, app_url: str, collection: str | None = None) -> dict[str, Any]:
    """``GET /v1/passages/{chunk_id}``: the chunk's verbatim ``text`` (its content, ``canonical[start:end]``),
    ``start``/``end``, section, role, its locator (object, label, fragment) and the app's ``viewer_url``."""
    return {"chunk_id": row.chunk_id, "document_id": row.document_id, "document_name": row.document_name,
            "media_type": row.media_type, "text": row.content, "start": row.start, "end": row.end,
            "section": list(row.section), "page": row.page, "page_end": row.page_end, "role": str(row.role),
            "locator": row_locator(row).to_json(), "locator_label": locator_label(row), "fragment": fragment(row),
            "viewer_url": viewer_url(app_url, row, collection)}


def turn_json(turn: Any, answer: Answer, chat_id: int | None) -> dict[str, Any]:
    """The answer of one turn: ``ask --json``'s object (:meth:`Answer.to_json`, then ``followup`` when there was
    a history, ``scope`` with documents, ``chat_id`` when saved) with ``format`` first. Its ``confidence`` is the
    record's own (issue 39: the calibrated chance that the shown answer is right); the gate's P(the sources answer
    the question) is ``gate.score``."""
    d: dict[str, Any] = {"format": ANSWER_FORMAT, **answer.to_json()}
    fu = turn.followup
    if turn.previous:
        d["followup"] = {"question": fu.question, "standalone": fu.standalone, "method": fu.method or None}
    if turn.scope is not None:
        d["scope"] = list(turn.scope)
    if chat_id is not None:
        d["chat_id"] = chat_id
    return d
