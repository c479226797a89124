"""Time budgets of one document's indexing (issue 35, item 2): every step bounded, the bound growing with the
document's size, under one hard ceiling.

A document is read in stages (:data:`STAGES`): ``extract`` (the reader, page by page for PDF; ``ocr`` pages
inside it), then the text stages ``roles`` (reference lists, contents, navigation: :mod:`rag.ingest.roles`),
``chunk`` and ``units`` (sentence units), then ``embed`` in the worker. Each report of progress renews the
budget of the stage it belongs to (:func:`allowance`): a reader that reads page after page never runs out, one
stuck on a page does, after :data:`PAGE_S`. Nothing runs past :attr:`Budget.ceiling_s` (the setting
``extract_seconds``, or the larger limit of ``rag jobs retry --limit``).

Optional stages (:data:`OPTIONAL`) degrade rather than fail: the document is indexed without them, with a
warning the user sees (:data:`SKIPPED_WARNING`). Only extraction and chunking running out fail the document,
with the stage and the limit in its reason (:func:`stopped_reason`).

Figures (2 cores, loaded): PyMuPDF plus the layout rules read a page in 20-300 ms; OCR takes 2-8 s a page;
role tagging and chunking take about 1-3 s per million characters. Every allowance is ten times that or more.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

#: The stages of one document, in order.
STAGES = ("extract", "ocr", "roles", "chunk", "units", "embed")
#: Stages a document is indexed without when they run out of time.
OPTIONAL = frozenset({"roles", "units"})

#: Seconds a reader may take before its first progress report: this plus :data:`PER_MB_S` per MiB of file.
START_S = 30.0
PER_MB_S = 10.0
#: Seconds one PDF page may take (renewed at every page read).
PAGE_S = 30.0
#: Seconds one page read by OCR may take (renewed at every OCR page).
OCR_PAGE_S = 120.0
#: A text stage (roles, chunk, units): this many seconds plus :data:`TEXT_PER_MCHAR_S` per million characters.
TEXT_S = 15.0
TEXT_PER_MCHAR_S = 30.0
#: Embedding: this many seconds plus :data:`EMBED_PER_TEXT_S` per text embedded (the int8 encoder embeds one in
#: 16 ms on quiet cores).
EMBED_S = 60.0
EMBED_PER_TEXT_S = 0.5

#: What the user reads when an optional stage was left out.
SKIPPED_WARNING = {
    "roles": "reference lists and tables of contents were not detected: the tagger ran out of time ({detail})",
    "units": "sentence search is off for this document: cutting it into sentences ran out of time ({detail})",
}


class StageTimeout(Exception):
    """A stage ran out of its budget (:class:`Deadline`): ``stage``, ``seconds`` spent, ``offset`` the
    canonical-text offset (0-based code points) it had reached, when known."""

    def __init__(self, stage: str, seconds: float, offset: int | None = None):
        self.stage, self.seconds, self.offset = stage, seconds, offset
        super().__init__(f"{stage} ran out of time after {seconds:.0f} s")


def allowance(stage: str, *, size_bytes: int = 0, chars: int = 0, texts: int = 0) -> float:
    """Seconds the next piece of ``stage`` may take: a reader's start (grows with ``size_bytes``), one PDF
    page, one OCR page, a text stage (grows with ``chars``, characters of canonical text) or embedding (grows
    with ``texts``). Raises ``ValueError`` for an unknown stage (allowed: :data:`STAGES` and ``start``)."""
    if stage == "start":
        return START_S + PER_MB_S * size_bytes / 2**20
    if stage == "extract":
        return PAGE_S
    if stage == "ocr":
        return OCR_PAGE_S
    if stage in ("roles", "chunk", "units"):
        return TEXT_S + TEXT_PER_MCHAR_S * chars / 1e6
    if stage == "embed":
        return EMBED_S + EMBED_PER_TEXT_S * texts
    raise ValueError(f"unknown stage {stage!r}; allowed: start, {', '.join(STAGES)}")


@dataclass
class Budget:
    """The running budget of one document: ``ceiling_s`` the most it may take in all (seconds, wall), and
    ``floor_s`` the least any one allowance gives (the larger limit of a retry; 0 = the figures above)."""

    ceiling_s: float
    floor_s: float = 0.0
    started: float = 0.0
    deadline: float = 0.0
    stage: str = "start"
    renewed: float = 0.0

    def __post_init__(self) -> None:
        self.started = self.started or time.monotonic()
        self.renewed = self.renewed or self.started
        self.deadline = self.deadline or self.started + self.ceiling_s  # until the first renew: the ceiling

    def renew(self, stage: str, **size: int) -> None:
        """A piece of ``stage`` starts now: it may take :func:`allowance` (at least ``floor_s``), never past
        the ceiling."""
        now = time.monotonic()
        self.stage, self.renewed = stage, now
        self.deadline = min(self.started + self.ceiling_s, now + max(self.floor_s, allowance(stage, **size)))

    @property
    def elapsed_s(self) -> float:
        """Seconds since the document started."""
        return time.monotonic() - self.started

    @property
    def stage_elapsed_s(self) -> float:
        """Seconds since the current piece of the stage started (its last :meth:`renew`)."""
        return time.monotonic() - (self.renewed or self.started)

    @property
    def allowed_s(self) -> float:
        """Seconds the current piece was given."""
        return self.deadline - (self.renewed or self.started)

    def over(self) -> bool:
        return time.monotonic() > self.deadline

    @property
    def at_ceiling(self) -> bool:
        """Whether the current deadline is the ceiling's (the whole document's limit, not the stage's)."""
        return self.deadline >= self.started + self.ceiling_s - 1e-6


class Deadline:
    """A cooperative deadline for a loop of pure Python work: :meth:`check` raises :class:`StageTimeout` once
    ``seconds`` have passed (the work stops cleanly; what the loop made so far is dropped by the caller).
    ``None`` seconds: never."""

    def __init__(self, stage: str, seconds: float | None):
        self.stage, self.seconds = stage, seconds
        self.t0 = time.monotonic()

    def check(self, offset: int | None = None) -> None:
        """Raise :class:`StageTimeout` (with ``offset``, where the work is) once the time is up."""
        if self.seconds is not None and time.monotonic() - self.t0 > self.seconds:
            raise StageTimeout(self.stage, time.monotonic() - self.t0, offset)
