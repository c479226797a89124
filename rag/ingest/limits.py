"""Reader limits (issue 26): every figure a hostile or huge file could blow up, checked BEFORE the work it bounds.

A :class:`Limits` record carries the limit settings of :class:`rag.settings.Settings` (same field names, same
defaults; ``Limits.from_settings``) down to the readers, which check them at their entry (file size, ZIP members,
frame headers, page count) or as they go (rows and cells, OCR pages and seconds). Hitting one raises
:class:`rag.errors.LimitExceeded` (an :class:`rag.errors.ExtractionError`) naming the setting and the figure, so
the document fails with that reason in the CLI and the app and nothing else is affected.

* :func:`check_zip` - the one guard every ZIP-based reader (DOCX, PPTX, XLSX, EPUB, ODF) goes through: members,
  inflated size and compression ratio read from the archive's central directory, before anything is inflated.
  Python's :mod:`zipfile` (which python-docx, python-pptx, openpyxl and ebooklib all read through) never returns
  more than a member's declared size (a member that inflates further fails its CRC check), so the declared
  sizes checked here bound what the libraries can inflate;
* :class:`OcrBudget` - OCR pages (counted up front) and OCR seconds (after each page) of one document;
* :class:`RowBudget` - rows with content and cells written of one spreadsheet or CSV file.
"""

from __future__ import annotations

import dataclasses
import io
import struct
import zipfile
from dataclasses import dataclass

from rag.errors import LimitExceeded

MiB = 1024 * 1024

#: Members smaller than this (inflated) are never refused for their compression ratio (a run of zeros is legal).
RATIO_GRACE_BYTES = 1 * MiB


@dataclass(frozen=True)
class Limits:
    """The reader limits of one extraction (fields and defaults as in :class:`rag.settings.Settings`).

    Units: MiB (``*_mb``), megapixels, pages, seconds, rows, cells; ``max_zip_ratio`` inflated/compressed.
    """

    max_upload_mb: int = 50
    max_zip_member_mb: int = 100
    max_zip_total_mb: int = 300
    max_zip_ratio: int = 100
    max_zip_members: int = 10000
    max_image_megapixels: int = 50
    max_image_total_megapixels: int = 1000
    max_pages: int = 5000
    max_ocr_pages: int = 300
    max_ocr_seconds: int = 1800
    max_sheet_rows: int = 200000
    max_sheet_cells: int = 2000000

    @classmethod
    def from_settings(cls, settings=None) -> "Limits":
        """The limits of ``settings`` (default :func:`rag.settings.get_settings`: ``rag.toml``, ``RAG_*``)."""
        if settings is None:
            from rag.settings import get_settings

            settings = get_settings()
        return cls(**{f.name: getattr(settings, f.name) for f in dataclasses.fields(cls)})

    @property
    def max_image_pixels(self) -> int:
        """:attr:`max_image_megapixels` in pixels."""
        return self.max_image_megapixels * 1_000_000


def resolve(limits: Limits | None) -> Limits:
    """``limits``, or the current settings' when ``None`` (what a reader called without limits uses)."""
    return limits if limits is not None else Limits.from_settings()


# --------------------------------------------------------------------------- file size


def check_size(size: int, name: str, limits: Limits) -> None:
    """Raise :class:`LimitExceeded` when a file of ``size`` bytes is over ``max_upload_mb``.

    Call it with the size the file system reports (``os.stat``) before reading a file from disk.
    """
    if size > limits.max_upload_mb * MiB:
        raise LimitExceeded(name, "max_upload_mb", "the file is", size, limits.max_upload_mb * MiB, "bytes")


# --------------------------------------------------------------------------- ZIP containers


def _declared_entries(data: bytes) -> int | None:
    """The entry count the end-of-central-directory record declares (ZIP64 too), read before the directory
    itself is parsed (parsing a million entries costs hundreds of MB); ``None`` when there is no such record."""
    tail = data[-(65536 + 22):]
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(tail):
        return None
    count = struct.unpack("<H", tail[at + 10:at + 12])[0]
    if count == 0xFFFF:
        z64 = tail.rfind(b"PK\x06\x06", 0, at)
        if z64 >= 0 and z64 + 40 <= len(tail):
            count = struct.unpack("<Q", tail[z64 + 32:z64 + 40])[0]
    return count


#: Members of an EPUB that no reader here reads (pictures, fonts, sound, video): the EPUB reader hands them to
#: ebooklib empty (:func:`rag.ingest.web.epub.without_media`), so their compression ratio bounds nothing (issue 37: one
#: e-book was refused whole because one PNG inside it inflates 137:1).
EPUB_UNREAD = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff", ".ico", ".ttf", ".otf", ".woff",
               ".woff2", ".eot", ".mp3", ".mp4", ".m4a", ".m4v", ".ogg", ".oga", ".ogv", ".webm", ".wav", ".aac",
               ".avi", ".mov", ".mpg", ".mpeg", ".flac", ".opus")
_EPUB_MIMETYPE = b"application/epub+zip"


def is_epub_unread(filename: str) -> bool:
    """Whether an EPUB member is one the reader never reads (:data:`EPUB_UNREAD`, by its name's extension)."""
    return filename.lower().endswith(EPUB_UNREAD)


def _is_epub(zf: zipfile.ZipFile, infos) -> bool:
    """Whether the archive says it is an EPUB: a small ``mimetype`` member (stored first, uncompressed) reading
    ``application/epub+zip``. Reads at most 64 bytes of that one member."""
    info = next((i for i in infos if i.filename == "mimetype"), None)
    if info is None or info.file_size > 64:
        return False
    try:
        return zf.read(info).strip() == _EPUB_MIMETYPE
    except (zipfile.BadZipFile, OSError, ValueError, RuntimeError, EOFError, NotImplementedError):
        return False


def check_zip(data: bytes, name: str, limits: Limits | None = None) -> tuple[str, ...]:
    """The guard of every ZIP-based reader: refuse an archive over a limit before any member is inflated.

    Checks, in order, from the central directory only: the number of members (``max_zip_members``), each
    member's inflated size (``max_zip_member_mb``), its compression ratio when it inflates past
    :data:`RATIO_GRACE_BYTES` (``max_zip_ratio``), and all members together (``max_zip_total_mb``).
    Raises :class:`LimitExceeded`; an archive whose directory cannot be read passes (the reader then refuses
    it as damaged, in its format's words). Never inflates anything but an EPUB's tiny ``mimetype``; costs about
    1 ms per 1,000 members.

    The limits apply to what is read (issue 37): in an EPUB, a member no reader reads (:func:`is_epub_unread`)
    is not refused for its ratio (its sizes still count); the sentences naming such members over the ratio
    limit are returned, for the reader's warning. Every other caller may ignore the result.
    """
    limits = resolve(limits)
    declared = _declared_entries(data)
    if declared is not None and declared > limits.max_zip_members:
        raise LimitExceeded(name, "max_zip_members", "the archive declares", declared, limits.max_zip_members,
                            "members")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            epub = len(infos) <= limits.max_zip_members and _is_epub(zf, infos)
    except (zipfile.BadZipFile, OSError, ValueError, RuntimeError, EOFError, struct.error):
        return ()  # nothing can be inflated from it either: the reader refuses it as damaged, in its format's words
    if len(infos) > limits.max_zip_members:
        raise LimitExceeded(name, "max_zip_members", "the archive holds", len(infos), limits.max_zip_members, "members")
    total = 0
    unread: list[str] = []
    for info in infos:
        size = int(info.file_size)
        if size > limits.max_zip_member_mb * MiB:
            raise LimitExceeded(name, "max_zip_member_mb", f"member {info.filename[:80]} inflates to", size,
                                limits.max_zip_member_mb * MiB, "bytes")
        if size > RATIO_GRACE_BYTES:
            ratio = size / max(int(info.compress_size), 1)
            if ratio > limits.max_zip_ratio and epub and is_epub_unread(info.filename):
                unread.append(f"{info.filename[:80]} (inflates {size / MiB:,.1f} MB at {round(ratio)}:1)")
            elif ratio > limits.max_zip_ratio:
                raise LimitExceeded(name, "max_zip_ratio",
                                    f"member {info.filename[:80]} inflates {size / MiB:,.0f} MB from "
                                    f"{info.compress_size / MiB:,.1f} MB, a ratio of", round(ratio), limits.max_zip_ratio)
        total += size
        if total > limits.max_zip_total_mb * MiB:
            raise LimitExceeded(name, "max_zip_total_mb", "the members inflate to more than", total,
                                limits.max_zip_total_mb * MiB, "bytes")
    return tuple(unread)


# --------------------------------------------------------------------------- pixels and frames


def check_pixels(name: str, what: str, width: int, height: int, limits: Limits) -> None:
    """Raise :class:`LimitExceeded` when a ``width`` x ``height`` frame (``what``: ``"frame 3"``, ``"the image"``)
    is over ``max_image_megapixels``; called with header sizes, before decoding."""
    if width * height > limits.max_image_pixels:
        raise LimitExceeded(name, "max_image_megapixels", f"{what} is {width:,} x {height:,} pixels,",
                            round(width * height / 1e6, 1), limits.max_image_megapixels, "megapixels")


# --------------------------------------------------------------------------- OCR


class OcrBudget:
    """OCR pages and seconds left to one document (``max_ocr_pages``, ``max_ocr_seconds``).

    :meth:`plan` refuses a document needing more OCR pages than allowed before any is read;
    :meth:`spend` adds one page's OCR time and refuses past the seconds limit.
    """

    def __init__(self, name: str, limits: Limits) -> None:
        self.name, self.limits = name, limits
        self.pages = 0
        self.ms = 0.0

    def plan(self, pages: int, what: str = "pages") -> None:
        """Raise :class:`LimitExceeded` when ``pages`` pages (or frames: ``what``) would need OCR, over the limit."""
        if pages > self.limits.max_ocr_pages:
            raise LimitExceeded(self.name, "max_ocr_pages", f"{what} to read by OCR:", pages,
                                self.limits.max_ocr_pages, what)

    def spend(self, ms: float) -> None:
        """Count one page read by OCR in ``ms``; raise :class:`LimitExceeded` once the total passes the limit."""
        self.pages += 1
        self.ms += ms
        if self.ms > self.limits.max_ocr_seconds * 1000:
            raise LimitExceeded(self.name, "max_ocr_seconds", f"OCR of {self.pages} page(s) took",
                                round(self.ms / 1000), self.limits.max_ocr_seconds, "s")


# --------------------------------------------------------------------------- rows and cells


class RowBudget:
    """Rows with content and cells written in one spreadsheet or CSV file (``max_sheet_rows``, ``max_sheet_cells``).

    :meth:`row` is called for every row with content as it is read, before it is kept.
    """

    def __init__(self, name: str, limits: Limits) -> None:
        self.name, self.limits = name, limits
        self.rows = 0
        self.cells = 0
        self.written = 0

    def row(self, cells: int) -> None:
        """Count one row of ``cells`` cells (its width as written); raise :class:`LimitExceeded` past a limit."""
        self.rows += 1
        self.cells += cells
        if self.rows > self.limits.max_sheet_rows:
            raise LimitExceeded(self.name, "max_sheet_rows", "more rows with content than", self.rows,
                                self.limits.max_sheet_rows, "rows", over=False)
        if self.cells > self.limits.max_sheet_cells:
            raise LimitExceeded(self.name, "max_sheet_cells", f"the first {self.rows:,} rows already hold",
                                self.cells, self.limits.max_sheet_cells, "cells")

    def table(self, rows: int, width: int, sheet: str = "") -> None:
        """Count a table about to be written, ``rows`` x ``width`` cells (empty ones included: a sheet with one
        cell at A1 and one at XFD1 is 16,384 columns wide); raise :class:`LimitExceeded` past ``max_sheet_cells``."""
        self.written += rows * width
        if self.written > self.limits.max_sheet_cells:
            where = f"sheet {sheet!r} " if sheet else ""
            raise LimitExceeded(self.name, "max_sheet_cells",
                                f"{where}spans {rows:,} rows x {width:,} columns; the tables written hold",
                                self.written, self.limits.max_sheet_cells, "cells")
