"""Stage 1 of the design: file bytes -> canonical text + locator map.

INTERFACE FILE (records fixed; implementation in progress, issue 3).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PageSpan:
    """One PDF page inside the canonical text.

    ``page`` is the 1-based physical page number (what ``#page=N`` takes);
    ``label`` the PDF page label if the file defines labels, else ``None``;
    ``start``/``end`` are 0-based code-point offsets into ``Document.canonical``
    (``end`` exclusive). Pages with no text layer have ``start == end``.
    """

    page: int
    label: str | None
    start: int
    end: int


@dataclass(frozen=True)
class Heading:
    """A section heading found in the canonical text.

    ``level`` 1 for ``#``, 2 for ``##`` ...; ``title`` the heading's words;
    ``start``/``end`` the offsets of the heading line in the canonical text
    (0-based code points, ``end`` exclusive, newline not included).
    """

    level: int
    title: str
    start: int
    end: int


@dataclass(frozen=True)
class Document:
    """An extracted document.

    ``id`` is the hex sha256 of the original bytes; ``name`` the user's file
    name (display metadata only, never used as a path); ``media_type`` sniffed
    from the bytes (``application/pdf``, ``text/markdown``, ``text/plain``);
    ``canonical`` the stored text every offset points into (NFC, ``\\n`` line
    ends); ``title`` the document title used in chunk headers; ``pages`` one
    :class:`PageSpan` per physical page (PDF only, empty otherwise);
    ``headings`` in order of offset; ``warnings`` human-readable (e.g. pages
    with no text layer, a repaired file).
    """

    id: str
    name: str
    media_type: str
    canonical: str
    title: str
    size_bytes: int
    extractor: str
    extractor_version: str
    pages: tuple[PageSpan, ...] = ()
    headings: tuple[Heading, ...] = ()
    warnings: tuple[str, ...] = ()
    image_only_pages: tuple[int, ...] = ()

    @property
    def page_count(self) -> int:
        return len(self.pages)

    def page_at(self, offset: int) -> int | None:
        """1-based physical page holding canonical offset ``offset``; ``None`` for non-PDF documents."""
        if not self.pages:
            return None
        starts = [p.start for p in self.pages]
        i = bisect.bisect_right(starts, offset) - 1
        i = max(0, min(i, len(self.pages) - 1))
        # skip back over empty pages sitting at the same offset
        while i > 0 and self.pages[i].start == self.pages[i].end and self.pages[i].start >= offset:
            i -= 1
        return self.pages[i].page


def extract_bytes(data: bytes, name: str) -> Document:
    """Extract a document from its bytes. Raises ``ExtractionError(name, reason)``."""
    raise NotImplementedError


def extract_path(path) -> Document:
    """Extract a file from disk, named by its base name. Raises ``ExtractionError``."""
    from pathlib import Path

    p = Path(path)
    return extract_bytes(p.read_bytes(), p.name)
