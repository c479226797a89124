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
    """A file needs more than a limit allows (issue 26): refused, never retried as it is.

    ``limit`` names the setting (e.g. ``"extract_memory_mb"``), ``figure`` what the file needed or held
    when it was stopped, in the setting's unit; ``reason`` says both in words.
    """

    def __init__(self, name: str, reason: str, *, limit: str, figure: float | int | str):
        self.limit = limit
        self.figure = figure
        super().__init__(name, reason)


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
