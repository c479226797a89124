"""The REST endpoints (issue 38, item 1), each a few calls to the library the app and the CLI use.

========================================  =====================================================================
``POST /v1/documents``                    multipart upload, one or many files (field ``files``); answers at once
                                          with one job per file (the durable queue; a worker indexes them)
``GET /v1/documents``                     every document with its status
``GET /v1/documents/{id}``                status, warnings, coverage, pages, chunks, versions, newest job
``DELETE /v1/documents/{id}``             the document, its chunks, vectors and original (409 while indexing)
``GET /v1/jobs/{id}``                     stage, progress, elapsed, reason
``GET /v1/collections``                   the collections (each a store of its own)
``POST /v1/search``                       hits with scores and locators (``rag search --json``'s object)
``POST /v1/ask``                          the answer record (``rag ask --json``'s), or SSE with ``stream``
``GET /v1/passages/{chunk_id}``           canonical text, locator and the app's viewer URL
``GET /healthz``                          loading / ready, the model, the answer queue
========================================  =====================================================================

Every route takes ``collection`` (a query parameter, or a body field for search and ask). Sync routes run in
the server's thread pool, so searches run in parallel; answers wait for the model (:mod:`rag.api.answer_queue`).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from fastapi.responses import JSONResponse, StreamingResponse

from rag.api import schemas, stream, turns, uploads
from rag.api.errors import ApiError, from_rag_error, not_found
from rag.api.records import document_json, hits_json, job_json, passage_json, upload_json
from rag.api.service import ApiService
from rag.errors import RagError
from rag.ingest.limits import Limits
from rag.store.results import OnConflict

Collection = Annotated[str | None, Query(description="The collection (default: the data folder's own store).")]


def service_of(request: Request) -> ApiService:
    return request.app.state.service


def _read_limited(f: UploadFile, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of an upload (so one over the limit is seen without reading it all)."""
    return f.file.read(limit + 1)


def health(request: Request) -> dict[str, Any]:
    """Whether the models are loaded, which model answers, and the answer queue's length."""
    return service_of(request).health()


def list_collections(request: Request) -> dict[str, Any]:
    """The collections under the data folder: ``default`` (the folder's own store) first."""
    svc = service_of(request)
    return {"collections": [{"name": c.name, "default": c.is_default, "exists": c.exists}
                            for c in svc.collections.list()]}


def upload(request: Request, files: Annotated[list[UploadFile], File(description="One or more files.")],
           collection: Annotated[str | None, Form()] = None,
           on_conflict: Annotated[OnConflict, Form(description="Other bytes under a name already indexed: "
                                                               "replace (default), keep-both, or ask.")]
           = OnConflict.REPLACE) -> dict[str, Any]:
    """Queue the files for indexing and answer at once, one job per file (follow it at ``/v1/jobs/{id}``).

    Each file is checked first as the app checks it: empty, over ``max_upload_mb``, a type not read here
    (sniffed from the bytes, never the name). A bad file is its own entry, ``failed`` with the reason and the
    ``error`` code, and the others are queued, as the app takes a drop of several files one by one (a new user's
    walk of the API, 2026-12-06: one empty file refused the whole request, and the next bad file's reason was never
    said). When every file is bad, the first one's error is the answer: 400 empty, 413 too large, 415 a type not
    read here, naming the file. A file the worker cannot read later is that job's ``failed`` with its reason."""
    svc = service_of(request)
    store = svc.store(collection)
    if len(files) > uploads.MAX_FILES:
        raise ApiError(413, "too_many_files", f"{len(files)} files in one request; at most {uploads.MAX_FILES}")
    limits = Limits.from_settings(store.settings)
    entries: list[dict[str, Any] | tuple[str, bytes]] = []
    bad: list[ApiError] = []
    for f in files:
        name = f.filename or "unnamed"
        data = _read_limited(f, limits.max_upload_mb * uploads.MiB)
        try:
            uploads.screen(data, name, limits)
        except ApiError as e:
            bad.append(e)
            entries.append(uploads.refused_json(name, e))
            continue
        entries.append((name, data))
    if len(bad) == len(files):
        raise bad[0]
    out = [upload_json(store.enqueue_bytes(e[1], e[0], on_conflict=on_conflict)) if isinstance(e, tuple) else e
           for e in entries]
    svc.ensure_worker(store)
    return {"collection": collection or "default", "files": out}


def list_documents(request: Request, collection: Collection = None) -> dict[str, Any]:
    """Every document (any status), oldest first."""
    store = service_of(request).store(collection)
    return {"collection": collection or "default", "documents": [document_json(d) for d in store.documents()]}


def get_document(request: Request, doc_id: str, collection: Collection = None) -> dict[str, Any]:
    """One document (full id or a unique prefix): status, reason, warnings, coverage, pages, chunks, its
    earlier versions and its newest job."""
    store = service_of(request).store(collection)
    doc = store.find_document(doc_id)
    if doc is None:
        raise not_found("document", doc_id)
    return document_json(doc, store, store.jobs.for_document(doc.id))


def delete_document(request: Request, doc_id: str, collection: Collection = None) -> dict[str, Any]:
    """Delete a document with its chunks, vectors, original and earlier versions; 409 while it is indexed."""
    store = service_of(request).store(collection)
    doc = store.find_document(doc_id)
    if doc is None:
        raise not_found("document", doc_id)
    try:
        store.delete(doc.id)
    except RagError as e:
        raise from_rag_error(e) from e
    return {"deleted": doc.id, "name": doc.name}


def get_job(request: Request, job_id: int, collection: Collection = None) -> dict[str, Any]:
    """One indexing job: state, stage, progress (0..1), elapsed seconds, ETA, the reason it failed."""
    svc = service_of(request)
    store = svc.store(collection)
    job = store.jobs.get(job_id)
    if job is None:
        raise not_found("job", job_id)
    if job.active:
        svc.ensure_worker(store)  # a worker that stopped meanwhile (idle, or another process's) is replaced
    return job_json(job)


def search(request: Request, body: schemas.SearchRequest) -> dict[str, Any]:
    """The top ``k`` chunks for ``query``, best first, with their scores and locators (no gate, no model)."""
    svc = service_of(request)
    svc.require_ready(model=False)
    store = svc.store(body.collection)
    scope = turns.resolve_documents(store, body.documents)
    kw = {} if scope is None else {"doc_ids": scope}
    hits, plan = store.search_planned(body.query, k=body.k, mode=body.mode, **kw)
    return hits_json(store, body.query, hits, plan, body.mode)


async def ask(request: Request, body: schemas.AskRequest) -> Any:
    """Answer ``question`` with ``[n]`` citations (the ``rag ask --json`` record), or refuse without the model.

    With ``"stream": true`` the answer comes as Server-Sent Events: ``queue`` (the place in the line),
    ``sources``, ``key_passage``, ``token``..., ``verdict``, ``done`` (the record), or ``error``."""
    svc = service_of(request)
    q = turns.Question(body.question, body.collection, body.documents, tuple(body.history), body.chat,
                       body.rewrite)
    if body.stream:
        return StreamingResponse(await stream.events(svc, q), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
    from starlette.concurrency import run_in_threadpool

    return JSONResponse(await run_in_threadpool(turns.answer, svc, q))


def passage(request: Request, chunk_id: int, collection: Collection = None) -> dict[str, Any]:
    """A passage (chunk) by id: its verbatim text, offsets into the canonical text, locator, viewer URL."""
    svc = service_of(request)
    store = svc.store(collection)
    try:
        row = store.chunk(chunk_id)
    except RagError as e:
        raise not_found("chunk", chunk_id) from e
    return passage_json(row, request.app.state.app_url, collection)


def build_router() -> APIRouter:
    """The ``/v1`` REST routes and ``/healthz`` (the handlers above, in this order)."""
    r = APIRouter()
    r.add_api_route("/healthz", health, methods=["GET"], tags=["server"])
    r.add_api_route("/v1/collections", list_collections, methods=["GET"], tags=["documents"])
    r.add_api_route("/v1/documents", upload, methods=["POST"], tags=["documents"], status_code=202,
                    response_model=schemas.UploadResponse, responses=schemas.ERRORS)
    r.add_api_route("/v1/documents", list_documents, methods=["GET"], tags=["documents"],
                    response_model=schemas.DocumentList)
    r.add_api_route("/v1/documents/{doc_id}", get_document, methods=["GET"], tags=["documents"],
                    response_model=schemas.DocumentOut, responses=schemas.ERRORS)
    r.add_api_route("/v1/documents/{doc_id}", delete_document, methods=["DELETE"], tags=["documents"],
                    responses=schemas.ERRORS)
    r.add_api_route("/v1/jobs/{job_id}", get_job, methods=["GET"], tags=["documents"], response_model=schemas.JobOut,
                    responses=schemas.ERRORS)
    r.add_api_route("/v1/search", search, methods=["POST"], tags=["answers"], response_model=schemas.SearchResponse,
                    responses=schemas.ERRORS)
    r.add_api_route("/v1/ask", ask, methods=["POST"], tags=["answers"], response_model=schemas.AnswerRecord,
                    responses={**schemas.ERRORS, 200: {"content": {"application/json": {}, "text/event-stream": {}}}})
    r.add_api_route("/v1/passages/{chunk_id}", passage, methods=["GET"], tags=["answers"],
                    response_model=schemas.Passage, responses=schemas.ERRORS)
    return r
