"""Building a canonical text from blocks: what every reader of issue 17 (DOCX, PPTX, HTML, EPUB, sheets, images) shares.

A reader walks its file and calls :meth:`CanonicalBuilder.heading`,
:meth:`CanonicalBuilder.block` and :meth:`CanonicalBuilder.lines`; the builder
joins them into one canonical text (design stage 1) and records, as it goes,
the exact 0-based code-point offsets of every heading line
(:class:`rag.types.Heading`) and of every addressable unit
(:class:`rag.types.Part`: slide, sheet row, paragraph, HTML section, OCR line).
Offsets are taken from the text being built, never computed afterwards, so
``canonical[part.start:part.end]`` is always the unit's own text.

Layout of the canonical text: blocks separated by one blank line; a heading is
a Markdown ATX line (``## Title``) so the chunker (strategy E) splits there
and a person reading the stored text sees the structure; a block of lines (a
list, a table) keeps one unit per line. Every piece is NFC-normalised with
``\\n`` line ends before it is appended, as the design asks for text files.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from rag.errors import ExtractionError
from rag.ingest import EXTRACTOR_VERSION
from rag.types import Box, Document, Heading, LocatorKind, Part

_SPACES = re.compile(r"[ \t\u00a0\u2007\u202f\u3000]+")
_INVISIBLE = dict.fromkeys(map(ord, "\ufeff\u200b\u200c\u200d\u2060\u00ad\u180e"), None)
#: Unicode tag characters (U+E0000..U+E007F) render as nothing yet spell ASCII text a model reads ("ASCII
#: smuggling", issue 26): dropped from every reader's text, like the zero-width characters.
_INVISIBLE.update(dict.fromkeys(range(0xE0000, 0xE0080), None))
_BLANK_LINES = re.compile(r"\n(?:[^\S\n]*\n)+")  # one way to match a run (issue 35: not "\n\s*\n+")


def clean_inline(text: str, *, keep_newlines: bool = True) -> str:
    """One piece of text as it goes into the canonical text.

    NFC; ``\\r\\n``/``\\r``/vertical tab (PowerPoint's line break) -> ``\\n``;
    zero-width characters and soft hyphens dropped; runs of spaces, tabs and
    no-break spaces -> one space; blank lines inside the piece closed up (a
    blank line is the block separator); ends stripped. With
    ``keep_newlines=False`` newlines become spaces too (table cells, headings).
    """
    text = unicodedata.normalize("NFC", text).translate(_INVISIBLE)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x0b", "\n").replace("\f", "\n")
    text = "".join(ch for ch in text if ch == "\n" or unicodedata.category(ch) != "Cc" or ch == "\t")
    if not keep_newlines:
        text = text.replace("\n", " ")
    text = "\n".join(_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    return _BLANK_LINES.sub("\n", text).strip()


def table_cell(text: str) -> str:
    """A table cell as written in a Markdown row: one line, ``|`` escaped as ``\\|``."""
    return clean_inline(text, keep_newlines=False).replace("|", "\\|")


def markdown_row(cells: list[str]) -> str:
    """``| a | b |`` from already cleaned cells."""
    return "| " + " | ".join(cells) + " |"


def markdown_separator(n: int) -> str:
    """The Markdown header separator ``| --- | --- |`` for ``n`` columns."""
    return "|" + " --- |" * max(1, n)


def markdown_table(rows: list[list[str]]) -> list[str]:
    """A table's Markdown lines from already cleaned cells (:func:`table_cell`): the first row is the header, then
    the separator, then the other rows; every row padded with empty cells to the widest. ``[]`` for no rows."""
    if not rows:
        return []
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    return [markdown_row(rows[0]), markdown_separator(width)] + [markdown_row(r) for r in rows[1:]]


def file_stem(name: str) -> str:
    """The user's file name without folders and extension (a title of last resort)."""
    base = re.split(r"[\\/]", name)[-1]
    stem = base.rsplit(".", 1)[0] if "." in base.strip(".") else base
    return stem.strip() or base or "untitled"


@dataclass(frozen=True)
class Unit:
    """What a line or block is as an addressable unit (a :class:`rag.types.Part` without offsets)."""

    kind: LocatorKind
    number: int
    scope: str = ""
    scope_number: int | None = None
    anchor: str = ""
    box: Box | None = None


class CanonicalBuilder:
    """Accumulates a canonical text with its headings and parts (see the module docstring).

    Not thread-safe; one per document. :meth:`document` returns the finished
    :class:`rag.types.Document`.
    """

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._len = 0
        self.headings: list[Heading] = []
        self.parts: list[Part] = []

    @property
    def length(self) -> int:
        """Code points written so far."""
        return self._len

    def _append(self, text: str) -> int:
        """Append ``text`` after a blank line (none before the first block); returns its start offset."""
        if self._pieces:
            self._pieces.append("\n\n")
            self._len += 2
        start = self._len
        self._pieces.append(text)
        self._len += len(text)
        return start

    def heading(self, level: int, title: str) -> Heading | None:
        """Write ``#``*level + title as its own block; returns the :class:`Heading` (``None`` for a blank title).

        ``level`` is clamped to 1..6; the title is cleaned to one line.
        """
        title = clean_inline(title, keep_newlines=False)
        if not title:
            return None
        level = min(6, max(1, int(level)))
        line = "#" * level + " " + title
        start = self._append(line)
        h = Heading(level, title, start, start + len(line))
        self.headings.append(h)
        return h

    def block(self, text: str, unit: Unit | None = None, *, clean: bool = True) -> tuple[int, int] | None:
        """Write one block (a paragraph); with ``unit``, record it as a :class:`Part`. Returns its span.

        Blank text writes nothing and returns ``None``.
        """
        text = clean_inline(text) if clean else text
        if not text:
            return None
        start = self._append(text)
        if unit is not None:
            self.add_part(unit, start, start + len(text))
        return start, start + len(text)

    def lines(self, lines: list[tuple[str, Unit | None]]) -> tuple[int, int] | None:
        """Write one block made of lines (a list, a table, OCR lines), each line its own :class:`Part`.

        Lines are written as given (the caller cleans them: :func:`table_cell`,
        :func:`clean_inline`); blank lines are dropped. Returns the block's span.
        """
        lines = [(t, u) for t, u in lines if t.strip()]
        if not lines:
            return None
        start = self._append("\n".join(t for t, _ in lines))
        pos = start
        for text, unit in lines:
            if unit is not None:
                self.add_part(unit, pos, pos + len(text))
            pos += len(text) + 1
        return start, pos - 1

    def add_part(self, unit: Unit, start: int, end: int) -> None:
        """Record ``unit`` at ``[start, end)`` (offsets into the text written so far)."""
        self.parts.append(Part(unit.kind, unit.number, start, end, unit.scope, unit.scope_number, unit.anchor,
                               unit.box))

    def text(self) -> str:
        """The canonical text written so far."""
        return "".join(self._pieces)

    def document(self, data: bytes, name: str, media_type: str, *, title: str, extractor: str,
                 warnings: tuple[str, ...] = (), empty_reason: str = "no text found") -> Document:
        """The finished :class:`rag.types.Document` (``id`` = sha256 of ``data``).

        Raises ``ExtractionError(name, empty_reason)`` when nothing was written.
        """
        canonical = self.text()
        if not canonical.strip():
            raise ExtractionError(name, empty_reason)
        return Document(
            id=hashlib.sha256(data).hexdigest(), name=name, media_type=media_type, canonical=canonical,
            title=clean_inline(title, keep_newlines=False) or file_stem(name), size_bytes=len(data),
            extractor=extractor, extractor_version=EXTRACTOR_VERSION, headings=tuple(self.headings),
            warnings=tuple(warnings), parts=tuple(sorted(self.parts, key=lambda p: p.start)),
        )
