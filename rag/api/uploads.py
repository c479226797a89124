"""An upload's limits before it is queued (issue 38, item 4: "upload limits as in the app").

The app refuses a file over ``max_upload_mb`` before reading it and names the type it read from the bytes when
it cannot read it (:func:`rag.ingest.extract.extract_bytes`); the API says the same before the file reaches the
queue, with the HTTP code a program can act on: 400 an empty file, 413 over the size limit (or a ZIP container
over its limits, :func:`rag.ingest.limits.check_zip`), 415 a type this product does not read (a legacy Office
file, another archive, a GIF, binary data; a ``.pdf`` name on other bytes). Everything else is accepted and
read by the worker, which may still fail it (damaged, password-protected, no text): that is the job's
``failed`` with its reason, never the request's.
"""

from __future__ import annotations

from typing import Any

from rag.api.errors import ApiError
from rag.errors import LimitExceeded
from rag.ingest import textfile
from rag.ingest.extract import READERS, SUPPORTED, is_pdf_bytes
from rag.ingest.limits import Limits, check_size, check_zip
from rag.ingest.sniff import ENCRYPTED_OOXML, NAMED_UNSUPPORTED, OLE2, ZIP, sniff

MiB = 1024 * 1024

_NAMED = {OLE2: "a legacy Office file (.doc/.ppt, Word or PowerPoint 97-2003); save it as DOCX or PPTX",
          ZIP: "a ZIP archive that is not one of the formats read here", **NAMED_UNSUPPORTED}


def _binary(data: bytes) -> bool:
    """NUL bytes in the first 8 KiB, no byte-order mark and no UTF-16/32 reading: not text (the same test as
    :func:`rag.ingest.extract.extract_bytes`)."""
    return b"\x00" in data[:8192] and textfile.bom_encoding(data) is None and textfile.decode_probe(data) is None


def screen(data: bytes, name: str, limits: Limits) -> None:
    """Raise :class:`rag.api.errors.ApiError` (400, 413, 415) naming ``name`` and the reason when the upload
    ``data`` cannot be queued; return when the worker may try it. Bounded: reads at most the sniffers' heads and
    a ZIP's central directory."""
    if not data:
        raise ApiError(400, "empty_file", f"{name}: empty file (0 bytes)", file=name)
    try:
        check_size(len(data), name, limits)
        if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
            check_zip(data, name, limits)
    except LimitExceeded as e:
        raise ApiError(413, "too_large", str(e), file=name) from e
    if is_pdf_bytes(data):
        return
    if name.lower().endswith(".pdf"):
        raise ApiError(415, "unsupported_type", f"{name}: not a PDF although named .pdf", file=name)
    kind = sniff(data, name)
    if kind in READERS or kind == ENCRYPTED_OOXML:  # a password-protected file fails in the worker, with its fix
        return
    if kind is not None:
        what = _NAMED.get(kind, kind)
        raise ApiError(415, "unsupported_type", f"{name}: unsupported file type ({what}); expected {SUPPORTED}",
                       file=name)
    if _binary(data):
        raise ApiError(415, "unsupported_type", f"{name}: unsupported file type (binary data); expected {SUPPORTED}",
                       file=name)


def refused_json(name: str, error: ApiError) -> dict[str, Any]:
    """A file :func:`screen` refused, as ``POST /v1/documents`` lists it beside the queued ones
    (:func:`rag.api.records.upload_json`'s fields): ``status`` ``failed``, the ``reason`` naming the file, and the
    ``error`` code (``empty_file``, ``too_large``, ``unsupported_type``)."""
    return {"document_id": None, "name": name, "status": "failed", "job_id": None, "reason": error.message,
            "error": error.code, "existing_name": None, "existing_id": None, "replaced_id": None}


#: The most files one upload request may carry (more: 413 before the body is read).
MAX_FILES = 100


class UploadSizeGuard:
    """ASGI middleware: an upload whose declared ``Content-Length`` is over ``max_upload_mb`` times
    :data:`MAX_FILES` (plus 1 MiB of multipart framing) is answered 413 before its body is read or spooled, so a
    3 GiB request never reaches the disk; each file is then checked on its own (:func:`screen`)."""

    def __init__(self, app, max_upload_mb: int, path: str = "/v1/documents"):
        self.app, self.path = app, path
        self.limit = max_upload_mb * MiB * MAX_FILES + MiB

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope.get("method") == "POST" and scope.get("path") == self.path:
            length = dict(scope.get("headers") or []).get(b"content-length")
            if length is not None and length.isdigit() and int(length) > self.limit:
                from starlette.responses import JSONResponse

                e = ApiError(413, "too_large", f"the request is {int(length)} bytes, over the {self.limit} an upload "
                                               f"of at most {MAX_FILES} files may be")
                return await JSONResponse(e.to_json(), status_code=413)(scope, receive, send)
        await self.app(scope, receive, send)
