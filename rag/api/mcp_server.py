"""The MCP server (issue 38, item 3), on the official ``mcp`` SDK's :class:`mcp.server.mcpserver.MCPServer`:
an AI assistant searches and asks the user's documents and gets checked citations back.

Tools (each calls what the REST routes call, :mod:`rag.api.turns` and the store):

* ``search_documents(query, k, mode, documents, collection)`` - hits with scores and locators;
* ``ask(question, documents, collection, history)`` - the checked answer with its ``[n]``, the verdict and its
  reason, the confidence, the key passage and the citations (document, locator, verbatim quote, offsets);
  it waits for the model in the same queue as the HTTP answers;
* ``list_documents(collection)`` - every document with its status;
* ``get_passage(chunk_id, collection)`` - a passage's verbatim text, locator and viewer URL.

Resources: every ready document of the default collection is listed as ``rag://documents/<id>`` (its name,
media type); reading one gives its canonical text, the text every offset points into.

Transports: stdio (``rag mcp``, :func:`run_stdio`) and streamable HTTP at ``/mcp`` in the API server
(:mod:`rag.api.app`), behind the same access rule (:mod:`rag.api.auth`). A tool's failure (an unknown
document, the models still loading) is a tool error with the API's message, never a crash of the server.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import Resource as MCPResource

from rag.api import turns
from rag.api.errors import ApiError, not_found
from rag.api.records import document_json, hits_json, passage_json
from rag.api.service import ApiService
from rag.errors import RagError
from rag.types import DocStatus, RetrievalMode

#: The URI scheme of the documents as resources.
DOCUMENT_URI = "rag://documents/{doc_id}"
#: How long a tool waits for the models to load before it answers that they are loading.
READY_WAIT_S = 120.0

INSTRUCTIONS = ("Search and ask the user's own documents. `ask` answers from them with [n] citations checked by the "
                "server (document, locator, verbatim quote) and a verdict; when the documents do not hold the answer "
                "it says so (refused) instead of guessing: report that to the user, do not answer from elsewhere. "
                "`search_documents` finds passages; `get_passage` reads one; `list_documents` lists the files.")


def _wait_ready(service: ApiService) -> None:
    """Wait (up to :data:`READY_WAIT_S`) while the models load: an assistant's first call right after start."""
    t0 = time.monotonic()
    while service.loading and time.monotonic() - t0 < READY_WAIT_S:
        time.sleep(0.2)


T = TypeVar("T")

def _call(fn: Callable[..., T], *args: Any, error: type[Exception] = ToolError) -> T:
    """Run ``fn``; an API or domain error becomes the SDK's ``error`` (a tool's ``is_error`` result with the
    message, for the assistant to read; any other exception is a crash, whose text the SDK withholds)."""
    try:
        return fn(*args)
    except ApiError as e:
        raise error(f"{e.code} ({e.status}): {e.message}") from e
    except RagError as e:
        raise error(str(e)) from e


def compact_answer(record: dict[str, Any]) -> dict[str, Any]:
    """What an assistant needs of the answer record: the checked answer, verdict and reason, confidence, the
    key passage's text and locator, a note when the key passage stands as the answer, and the citations."""
    kp = record.get("key_passage") or {}
    return {"answer": record.get("answer"), "refused": record["refused"], "refusal": record.get("refusal"),
            "verdict": record["verdict"], "verdict_reason": record.get("verdict_reason"),
            "confidence": record.get("confidence"), "notice": record.get("notice"), "note": record.get("note"),
            "key_passage": {"text": kp.get("text"), "index": kp.get("index"),
                            "locator_label": kp.get("locator_label")} if kp else None,
            "citations": [{"n": c["index"], "document_id": c["document_id"], "document_name": c["document_name"],
                           "locator_label": c["locator_label"], "locator": c.get("locator"), "quote": c["quote"],
                           "start": c["start"], "end": c["end"], "chunk_id": c["chunk_id"]}
                          for c in record.get("citations", [])]}


class DocumentsServer(MCPServer):
    """:class:`MCPServer` whose resource list is the store's ready documents, read at each listing."""

    def __init__(self, service: ApiService, **kw: Any):
        super().__init__(**kw)
        self.service = service

    async def list_resources(self) -> list[MCPResource]:
        import anyio.to_thread

        docs = await anyio.to_thread.run_sync(lambda: self.service.store().documents())
        listed = [MCPResource(uri=DOCUMENT_URI.format(doc_id=d.id), name=d.name, title=d.label,
                              description=f"{d.media_type}, {d.chunk_count} chunks" + (f", {d.pages} pages" if d.pages
                                                                                       else ""),
                              mime_type="text/plain")
                  for d in docs if d.status == DocStatus.READY]
        return [*await super().list_resources(), *listed]


def build_mcp(service: ApiService, *, app_url: str) -> DocumentsServer:
    """The MCP server over ``service`` (see the module docstring): its four tools and one resource, added in
    this order."""
    import rag

    mcp = DocumentsServer(service, name="rag-documents", title="Document QA with honest citations",
                          instructions=INSTRUCTIONS, version=rag.__version__, log_level="WARNING")
    _add_search(mcp, service)
    _add_ask(mcp, service)
    _add_list_documents(mcp, service)
    _add_get_passage(mcp, service, app_url)
    _add_document(mcp, service)
    return mcp


def _add_search(mcp: DocumentsServer, service: ApiService) -> None:
    """The ``search_documents`` tool."""

    @mcp.tool(description="Search the user's documents: the best passages for `query`, each with its cosine "
                          "distance, document, locator and verbatim text. No answer is written.")
    def search_documents(query: str, k: int = 8, mode: str = "hybrid", documents: list[str] | None = None,
                         collection: str | None = None) -> dict[str, Any]:
        if mode not in {m.value for m in RetrievalMode}:
            raise ToolError(f"unknown mode {mode!r}; allowed: {', '.join(m.value for m in RetrievalMode)}")
        if not 1 <= k <= 50:
            raise ToolError("k must be between 1 and 50")
        _wait_ready(service)

        def run() -> dict[str, Any]:
            service.require_ready(model=False)
            store = service.store(collection)
            scope = turns.resolve_documents(store, documents)
            hits, plan = store.search_planned(query, k=k, mode=mode, **({} if scope is None else {"doc_ids": scope}))
            return hits_json(store, query, hits, plan, mode)

        return _call(run)


def _add_ask(mcp: DocumentsServer, service: ApiService) -> None:
    """The ``ask`` tool."""

    @mcp.tool(description="Answer `question` from the user's documents only. Returns the answer with [n] "
                          "citations checked by the server, the verdict (supported, partly_supported, "
                          "may_not_answer, refused) with its reason, the confidence and the citations (document, "
                          "locator, verbatim quote). A refusal means the documents do not hold the answer.")
    def ask(question: str, documents: list[str] | None = None, collection: str | None = None,
            history: list[str] | None = None) -> dict[str, Any]:
        if not question.strip():
            raise ToolError("the question is empty")
        _wait_ready(service)
        q = turns.Question(question, collection, documents, tuple(history or ()))
        return compact_answer(_call(turns.answer, service, q))


def _add_list_documents(mcp: DocumentsServer, service: ApiService) -> None:
    """The ``list_documents`` tool."""

    @mcp.tool(description="List the user's documents: id, name, status (ready, queued, indexing, failed) and "
                          "the reason a document failed.")
    def list_documents(collection: str | None = None) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            store = service.store(collection)
            keep = ("id", "name", "label", "media_type", "status", "reason", "chunk_count", "pages", "created_at")
            return {"documents": [{k: document_json(d)[k] for k in keep} for d in store.documents()]}

        return _call(run)


def _add_get_passage(mcp: DocumentsServer, service: ApiService, app_url: str) -> None:
    """The ``get_passage`` tool."""

    @mcp.tool(description="Read one passage by its chunk id (from a search hit or a citation): its verbatim "
                          "text, offsets into the document's canonical text, locator and the app's viewer URL.")
    def get_passage(chunk_id: int, collection: str | None = None) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            store = service.store(collection)
            try:
                row = store.chunk(chunk_id)
            except RagError as e:
                raise not_found("chunk", chunk_id) from e
            return passage_json(row, app_url, collection)

        return _call(run)


def _add_document(mcp: DocumentsServer, service: ApiService) -> None:
    """The document resource (:data:`DOCUMENT_URI`)."""

    @mcp.resource(DOCUMENT_URI, name="document", description="A document's canonical text (every citation's "
                                                             "start/end point into it).", mime_type="text/plain")
    def document(doc_id: str) -> str:
        def run() -> str:
            store = service.store()
            doc = store.find_document(doc_id)
            if doc is None or doc.status != DocStatus.READY:
                raise not_found("ready document", doc_id)
            return store.canonical_text(doc.id)

        return _call(run, error=ResourceNotFoundError)


def run_stdio(service: ApiService, *, app_url: str) -> None:
    """``rag mcp``: serve the tools over stdio until the client closes it (the models load meanwhile)."""
    mcp = build_mcp(service, app_url=app_url)
    service.start(background=True)
    try:
        mcp.run("stdio")
    finally:
        service.close()
