"""What one ingest tells its caller: :class:`IngestResult` and its :class:`IngestStatus`, the conflict policy
:class:`OnConflict` (issue 16) and :func:`clean_name` (a display name from a client's file name). The records
of :mod:`rag.store.writer`, re-exported there; a finished job keeps its result as :meth:`IngestResult.to_json`.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from rag.text import counted
from rag.types import DocStatus


class IngestStatus(StrEnum):
    """What happened to one file (the ``status`` of :class:`IngestResult` and of ``ingest --json``)."""

    READY = DocStatus.READY.value
    DUPLICATE = "duplicate"
    FAILED = DocStatus.FAILED.value
    BUSY = "busy"
    EXISTS = "exists"
    QUEUED = DocStatus.QUEUED.value
    CANCELLED = "cancelled"


class OnConflict(StrEnum):
    """What to do with different bytes under a name the store already holds (issue 16).

    ``replace``: the new version takes the old one's place (the old one leaves
    the index in the same transaction and is kept as a previous version);
    ``keep-both``: both stay, as two documents; ``ask``: nothing is done and
    the result says ``exists`` (the app then asks the user).
    """

    REPLACE = "replace"
    KEEP_BOTH = "keep-both"
    ASK = "ask"


def clean_name(name: str) -> str:
    """A display name from a client-supplied file name: the last path component
    (``/`` and ``\\`` both split), NFC, without control characters (NUL included).

    Display metadata only: the store never uses it as a path. An empty result
    becomes ``"unnamed"``.
    """
    base = unicodedata.normalize("NFC", str(name)).replace("\\", "/").split("/")[-1]
    base = "".join(ch for ch in base if unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp")).strip()
    return base if base not in ("", ".", "..") else "unnamed"


@dataclass(frozen=True)
class IngestResult:
    """What happened to one file.

    ``status``: ``ready`` (indexed now), ``duplicate`` (the same bytes, or
    the same text, already indexed: nothing done; ``existing_name`` says
    under which name), ``failed`` (``reason`` says why; the row stays,
    retryable), ``busy`` (another process is indexing the same bytes right
    now) or ``exists`` (other bytes are indexed under this name and the
    caller asked to be asked, :class:`OnConflict`; nothing done;
    ``existing_id`` names that document). ``replaced_id`` /
    ``replaced_added_at`` the version this one replaced (issue 16).
    ``message`` is the one-line status the CLI prints; ``elapsed_ms`` wall time; ``coverage`` the share
    (0..1) of the words a person sees that the extracted text holds (issue 37), ``None`` when not audited.
    """

    document_id: str
    name: str
    status: str
    reason: str | None = None
    chunk_count: int = 0
    warnings: tuple[str, ...] = ()
    elapsed_ms: float = 0.0
    existing_name: str | None = None
    existing_id: str | None = None
    same_text: bool = False
    replaced_id: str | None = None
    replaced_added_at: str | None = None
    job_id: int | None = None
    retryable: bool | None = None
    coverage: float | None = None

    def to_json(self) -> dict[str, Any]:
        """Every field (``warnings`` a list): what a finished job keeps as its ``result``."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "IngestResult":
        """The inverse of :meth:`to_json` (unknown keys ignored)."""
        known = {k: (tuple(v) if k == "warnings" else v) for k, v in d.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    @property
    def message(self) -> str:
        short = self.document_id[:8]
        if self.status == IngestStatus.READY:
            line = f"ready      {self.name} ({short}): {counted(self.chunk_count, 'chunk')}"  # not "1 chunks"
            if self.replaced_id:
                line += (f"; replaced the version added {self.replaced_added_at} ({self.replaced_id[:8]}), "
                         "kept as a previous version")
            return line
        if self.status == IngestStatus.DUPLICATE:
            other = self.existing_name and (self.existing_name != self.name or self.same_text)
            if other:
                return f"duplicate  {self.name} ({short}): already indexed, same text as {self.existing_name}; nothing done"
            return f"duplicate  {self.name} ({short}): same bytes already indexed; nothing done"
        if self.status == IngestStatus.BUSY:
            return f"busy       {self.name} ({short}): being indexed by another process"
        if self.status == IngestStatus.EXISTS:
            return (f"exists     {self.name} ({short}): another version is indexed under this name "
                    f"({(self.existing_id or '')[:8]}); nothing done")
        if self.status == IngestStatus.QUEUED:
            return f"queued     {self.name} ({short}): job {self.job_id}"
        if self.status == IngestStatus.CANCELLED:
            return f"cancelled  {self.name} ({short})"
        hint = "" if self.retryable is None else ("; a retry may help" if self.retryable else "")
        return f"failed     {self.name} ({short}): {self.reason}{hint}"
