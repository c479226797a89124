"""The domain errors of the pipeline.

Every error names the file (display name, never a server path) or the
resource and the reason, so the UI can show it as is and the CLI can print it
and exit non-zero. Raise them ``from`` the underlying cause.
"""

from __future__ import annotations


class RagError(Exception):
    """Base class: a failure the user can read and act on."""


class ExtractionError(RagError):
    """A file could not be turned into canonical text.

    ``name`` is the user's file name; ``reason`` a short phrase such as
    ``"password-protected"`` or ``"no text layer (scanned?)"``.
    """

    def __init__(self, name: str, reason: str):
        self.name = name
        self.reason = reason
        super().__init__(f"{name}: {reason}")


class LimitExceeded(ExtractionError):
    """A file is over one of the reader limits (issue 26): refused before the work that limit bounds.

    ``limit`` is the :class:`rag.settings.Settings` field that sets it (``max_zip_member_mb`` ...),
    ``figure`` what this file has and ``maximum`` the setting's value, both in ``unit``; ``what`` says
    what was measured (``"member word/document.xml inflates to"``). The reason reads
    ``"<what> 1.2 GB, over the limit of 100 MB (setting max_zip_member_mb)"``.
    """

    def __init__(self, name: str, limit: str, what: str, figure: float, maximum: float, unit: str = "", *,
                 over: bool = True):
        self.limit, self.figure, self.maximum, self.unit, self.what = limit, figure, maximum, unit, what
        lead = f"{what} {_figure(figure, unit)}, over" if over else what
        super().__init__(name, f"{lead} the limit of {_figure(maximum, unit)} (setting {limit})")


class StageTimedOut(LimitExceeded):
    """A step of indexing one document ran out of its time budget (issue 35, :mod:`rag.ingest.budget`):
    ``stage`` which (``extract``, ``ocr``, ``chunk``, ``embed`` ...), ``figure`` the seconds it ran,
    ``maximum`` its limit in seconds, ``detail`` where it was (``"on page 7 of 15"``). The reason reads
    ``"chunking stopped after 61 s on page 7 of 15, over its time limit of 60 s (retry with a larger limit:
    rag jobs retry --limit SECONDS)"``; ``limit`` is ``extract_seconds`` (the setting that caps them all)."""

    def __init__(self, name: str, stage: str, seconds: float, limit_s: float, detail: str = ""):
        self.limit, self.figure, self.maximum, self.unit = "extract_seconds", round(seconds), limit_s, "s"
        self.what, self.stage, self.detail = f"{stage} stopped", stage, detail
        where = f" {detail}" if detail else ""
        ExtractionError.__init__(
            self, name, f"{STAGE_WORDS.get(stage, stage)} stopped after {seconds:.0f} s{where}, over its time limit "
                        f"of {limit_s:.0f} s (retry with a larger limit: rag jobs retry --limit SECONDS)")


#: How each stage of indexing a document is named in a reason (:class:`StageTimedOut`).
STAGE_WORDS = {"start": "reading the file", "extract": "reading the file", "ocr": "OCR", "roles": "role tagging",
               "chunk": "chunking", "units": "cutting into sentences", "embed": "embedding",
               "sentences": "embedding the sentences"}


def _figure(value: float, unit: str) -> str:
    """A figure as a person reads it: bytes as KB/MB/GB (``unit`` ``"bytes"``), else ``12,345 unit``."""
    if unit == "bytes":
        for size, suffix in ((2**30, "GB"), (2**20, "MB"), (2**10, "KB")):
            if value >= size:
                return f"{value / size:.1f}".removesuffix(".0") + f" {suffix}"
        return f"{int(value)} bytes"
    text = f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
    return f"{text} {unit}".strip()


class Cancelled(RagError):
    """Work stopped because the user cancelled it (a job of the queue, issue 25)."""


class ModelError(RagError):
    """A model file is missing, corrupt, or cannot be loaded; the message names the fixing command."""


class StoreError(RagError):
    """The store cannot be opened or written (e.g. embedding model mismatch)."""


class ModelMismatchError(StoreError):
    """The store was indexed with another embedding model; ``stale`` lists the documents to re-index."""

    def __init__(self, message: str, stale: list[str] | None = None):
        self.stale = stale or []
        super().__init__(message)


#: Exceptions that, under an :class:`ExtractionError`, are a fault of the reader's code rather than of the file (a
#: name that is not there): the document is failed as retryable, and its reason says so. Before, a half-applied
#: update made every ODF file "damaged ODT (NameError ...)", not to be retried (a new user's walk, 2026-12-07). A
#: missing optional package (ImportError) keeps its reader's own message, which says what to install (a review).
READER_FAULTS = (NameError, SyntaxError)


def reader_fault(e: ExtractionError) -> str | None:
    """The reason to show when ``e`` hides a fault of the reader's code (:data:`READER_FAULTS`), else ``None``."""
    if isinstance(e.__cause__, READER_FAULTS):
        return (f"internal error in the reader ({type(e.__cause__).__name__}), not a fault of the file; "
                "a retry after an update may help")
    return None
