"""Stage 1 of the design: file bytes -> canonical text + locator map.

One entry point, :func:`extract_bytes` (bytes + the user's file name ->
:class:`Document`), and :func:`extract_path` for files on disk. The media
type is sniffed from the bytes, never trusted from the name:

* ``%PDF-`` in the first KiB -> PDF, extracted by :mod:`rag.ingest.pdf.extract` (PyMuPDF);
* the formats of issue 17, recognised by :func:`rag.ingest.sniff.sniff`
  (ZIP containers by their entries, images by magic numbers, HTML and CSV
  by their text): DOCX (:mod:`rag.ingest.office.docx`), PPTX (:mod:`rag.ingest.office.pptx`),
  XLSX and CSV (:mod:`rag.ingest.office.sheets`), HTML (:mod:`rag.ingest.web.html`),
  EPUB (:mod:`rag.ingest.web.epub`), PNG/JPEG/TIFF by OCR (:mod:`rag.ingest.image`);
  other archives, images and legacy Office files are refused naming what they are;
* text (a BOM, strict UTF-8, or an encoding :mod:`rag.ingest.charset` guesses; :mod:`rag.ingest.textfile`)
  -> ``text/markdown`` when the name ends ``.md``/``.markdown`` or the text has ``#`` headings, else
  ``text/plain``;
* anything else is refused with a reason.

Text is normalised ONCE, before any offset is taken: BOM stripped, ``\\r\\n``
and ``\\r`` -> ``\\n``, Unicode NFC. Every offset in the system (chunks,
citations, ``#char=``) is a 0-based Python code-point offset into
``Document.canonical``.

Every failure raises :class:`rag.errors.ExtractionError` naming the file and
the reason; nothing else escapes :func:`extract_bytes`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import unicodedata

from rag.errors import ExtractionError
from rag.ingest import EXTRACTOR_VERSION, coverage, textfile
from rag.ingest.image import IMAGE_TYPES, extract_image
from rag.ingest.limits import Limits, check_size, check_zip, resolve
from rag.ingest.office.docx import extract_docx
from rag.ingest.office.odf import extract_odf
from rag.ingest.office.pptx import extract_pptx
from rag.ingest.office.sheets import extract_csv, extract_xlsx
from rag.ingest.office.xls import LEGACY, extract_xls
from rag.ingest.pdf.extract import PAGED, Progress, extract_pdf
from rag.ingest.sniff import ENCRYPTED_OOXML, NAMED_UNSUPPORTED, OLE2, OUTLOOK_MSG, ZIP, sniff
from rag.ingest.web.epub import extract_epub
from rag.ingest.web.html import extract_html
from rag.ingest.web.markdown_hidden import strip_hidden_html
from rag.ingest.web.markdown_render import render_markdown
from rag.text import FENCE_RE
from rag.types import Document, Heading, MediaType, PageSpan  # noqa: F401

# --------------------------------------------------------------------------- text

_INVISIBLE = dict.fromkeys(map(ord, "\ufeff\u200b\u200c\u200d\u2060\u00ad\u180e"), None)
#: Unicode tag characters render as nothing but spell text a model reads (issue 26): never kept.
_TAGS = dict.fromkeys(range(0xE0000, 0xE0080), None)
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*$")
_ANCHOR = re.compile(r"\[\[[^\[\]]*\]\]\s*$|\{#[^{}]*\}\s*$")
#: Closing hashes of an ATX heading, from the start of the space run before them (issue 35: linear).
_CLOSING_HASHES = re.compile(r"(?<![ \t])[ \t]+#+$")


def normalise_text(text: str) -> str:
    """The canonical form of decoded text: BOM stripped, ``\\r\\n``/``\\r`` -> ``\\n``, Unicode tag characters
    (invisible, issue 26) dropped, NFC.

    Applied once, before any offset is taken (design, stage 1).
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n").translate(_TAGS)
    return unicodedata.normalize("NFC", text)


def is_blank(text: str) -> bool:
    """True when ``text`` holds only whitespace and invisible characters (BOM, zero-width, soft hyphen)."""
    return not text.translate(_INVISIBLE).strip()


def clean_heading_title(raw: str) -> str:
    """A heading's words: closing ``#``s, ``[[anchor]]``/``{#id}`` suffixes and emphasis marks removed."""
    title = _CLOSING_HASHES.sub("", raw)
    title = _ANCHOR.sub("", title).rstrip()
    return title.strip().strip("*_").strip() or raw.strip()


def markdown_headings(canonical: str) -> tuple[Heading, ...]:
    """ATX headings (``#`` .. ``######``) outside fenced code blocks, with their line offsets."""
    headings: list[Heading] = []
    fence: str | None = None
    pos = 0
    for line in canonical.split("\n"):
        m = FENCE_RE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence) and not line.strip()[len(mark):].strip():
                fence = None
        elif fence is None:
            h = _ATX.match(line)
            if h and h.group(2).strip():
                headings.append(Heading(len(h.group(1)), clean_heading_title(h.group(2)), pos, pos + len(line)))
        pos += len(line) + 1
    return tuple(headings)


def _stem(name: str) -> str:
    base = re.split(r"[\\/]", name)[-1]
    stem = base.rsplit(".", 1)[0] if "." in base.strip(".") else base
    return stem.strip() or base or "untitled"


def extract_text(data: bytes, name: str) -> Document:
    """Markdown / plain text bytes -> :class:`Document` (design stage 1, text branch).

    Decoding, front matter and comments follow :mod:`rag.ingest.textfile`: a BOM names the encoding,
    other non-UTF-8 text is decoded by :func:`rag.ingest.charset.guess` with a warning naming the encoding; in
    Markdown, YAML/TOML front matter becomes ``metadata`` (its ``title`` the title), HTML comments and hidden
    raw HTML are dropped and the inline markup is rendered (:mod:`rag.ingest.web.markdown_render`), all before
    any offset is taken. Raises ``ExtractionError`` for bytes that are not
    text and for empty or blank-looking files.
    """
    try:
        decoded = textfile.decode(data)
    except ValueError as e:
        raise ExtractionError(name, str(e)) from e
    canonical = normalise_text(decoded.text)
    warnings = [decoded.warning] if decoded.warning else []
    is_md = name.lower().endswith((".md", ".markdown")) or bool(markdown_headings(canonical))
    meta: dict = {}
    if is_md:
        meta, canonical, problem = textfile.split_front_matter(canonical)
        if problem:
            warnings.append(problem)
        canonical = textfile.strip_html_comments(canonical)
        canonical, hidden = strip_hidden_html(canonical)  # issue 37: raw HTML under the HTML reader's rules
        if hidden.total:
            warnings.append(hidden.warning())
        canonical = render_markdown(canonical)  # issue 37: link text without URL, no emphasis marks
        canonical, refs = textfile.strip_reference_definitions(canonical)  # issue 26: ``[//]: # (...)`` is hidden
        if refs:
            warnings.append(f"hidden text left out: {refs} link reference definition(s) (Markdown comments such as "
                            "[//]: # (...)); never indexed or read by the model")
    if is_blank(canonical):
        raise ExtractionError(name, "empty or blank-looking file (only whitespace or invisible characters)")
    headings = markdown_headings(canonical) if is_md else ()
    level1 = [h.title for h in headings if h.level == 1]
    fm_title = " ".join(str(meta.get("title") or "").split())
    title = fm_title or (level1[0] if level1 else (headings[0].title if headings else _stem(name)))
    return Document(
        id=hashlib.sha256(data).hexdigest(),
        name=name,
        media_type=MediaType.MARKDOWN if is_md else MediaType.TEXT,
        canonical=canonical,
        title=title,
        size_bytes=len(data),
        extractor="text",
        extractor_version=EXTRACTOR_VERSION,
        headings=headings,
        warnings=tuple(warnings),
        metadata=textfile.metadata_pairs(meta),
        encoding=decoded.encoding,
        left_out=tuple(hidden.texts) if is_md else (),
    )


# --------------------------------------------------------------------------- sniffing

#: What the refusals list as readable.
SUPPORTED = ("PDF, DOCX, PPTX, XLSX, XLS, CSV, ODT, ODS, ODP, HTML, EPUB, FB2, MOBI, XPS, CBZ, PNG/JPEG/TIFF images, "
             "Markdown or text")


def _csv(data: bytes, name: str, limits: Limits | None = None) -> Document:
    """A CSV file decoded as a text file is (:func:`rag.ingest.textfile.decode`: a byte-order mark, UTF-16 without
    one, UTF-8, else the detector's guess, with its warning), then read as a table (a Windows-1251 CSV is Cyrillic; until
    2026-12-07 a guessed single-byte code page gave way to Windows-1252, which the guess no longer needs). Before, anything but UTF-8 was read as Windows-1252: a Shift-JIS CSV from markitdown's
    tests became "–¼‘O" (a walk, 2026-12-07)."""
    try:
        decoded = textfile.decode(data)
    except ValueError as e:
        raise ExtractionError(name, str(e)) from e
    text = decoded.text[1:] if decoded.text.startswith("\ufeff") else decoded.text
    return extract_csv(data, name, text, warnings=(decoded.warning,) if decoded.warning else (), limits=limits)


#: Issue 17's readers by sniffed media type: ``(bytes, name, limits) -> Document`` (limits: issue 26).
READERS = {
    MediaType.DOCX.value: extract_docx,
    MediaType.PPTX.value: extract_pptx,
    MediaType.XLSX.value: extract_xlsx,
    MediaType.XLS.value: extract_xls,
    MediaType.CSV.value: _csv,
    MediaType.HTML.value: lambda data, name, limits=None: extract_html(data, name),
    MediaType.EPUB.value: extract_epub,
    **{t: (lambda data, name, limits=None, _t=t: extract_image(data, name, _t, limits=limits)) for t in IMAGE_TYPES},
    # issue 28: OpenDocument text, spreadsheet and presentation (odfdo)
    **{t: (lambda data, name, limits=None, _t=t: extract_odf(data, name, _t, limits=limits))
       for t in (MediaType.ODT.value, MediaType.ODS.value, MediaType.ODP.value)},
    # issue 28: the paged formats PyMuPDF opens, read like a PDF with page locators
    **{t: (lambda data, name, limits=None, _t=t: extract_pdf(data, name, limits=limits, media_type=_t)) for t in PAGED},
}


def _refuse_unsupported(kind: str, name: str) -> None:
    """Raise the refusal for a recognised but unsupported type."""
    if kind == ENCRYPTED_OOXML:
        raise ExtractionError(name, "password-protected (an encrypted DOCX, XLSX or PPTX); remove the password "
                                    "in the Office application and add the file again")
    if kind == OLE2:
        raise ExtractionError(name, LEGACY)
    if kind == OUTLOOK_MSG:
        raise ExtractionError(name, "an Outlook e-mail (.msg), not read here; save the message as HTML or PDF (its "
                                    "attachments as files of their own) and add those")
    if kind in NAMED_UNSUPPORTED:
        raise ExtractionError(name, NAMED_UNSUPPORTED[kind])
    if kind == ZIP:
        raise ExtractionError(name, f"unsupported file type (a ZIP archive that is not one of the formats read here); "
                                    f"expected {SUPPORTED}")
    raise ExtractionError(name, f"unsupported file type ({kind}); expected {SUPPORTED}")


def is_pdf_bytes(data: bytes) -> bool:
    """PDF magic: ``%PDF-`` within the first 1024 bytes (the spec tolerates leading junk)."""
    return b"%PDF-" in data[:1024]


def _describe_bytes(data: bytes) -> str:
    import filetype

    kind = filetype.guess(data[:8192])
    if kind is not None:
        return kind.mime
    head = data[:512].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html", b"<head", b"<body")) or b"<html" in head:
        return "HTML"
    if head.startswith(b"<"):
        return "XML/HTML"
    if b"\x00" in data[:4096]:  # valid UTF-8, but no text file holds NUL bytes (a UTF-32 file without a BOM was
        return "binary data (NUL bytes)"  # refused as "unsupported file type (text); expected ... text": a walk)
    try:
        data[:4096].decode("utf-8")
        return "text"
    except UnicodeDecodeError:
        return "binary data"


#: What a file name's extension promises (issue 42, item 5): the media types its bytes may turn out to be.
_NAMED = {
    ".docx": ("a Word document", {MediaType.DOCX}), ".pptx": ("a PowerPoint deck", {MediaType.PPTX}),
    ".xlsx": ("an Excel workbook", {MediaType.XLSX}),
    ".xls": ("an Excel 97-2003 workbook", {MediaType.XLS}), ".odt": ("an OpenDocument text", {MediaType.ODT}),
    ".ods": ("an OpenDocument spreadsheet", {MediaType.ODS}),
    ".odp": ("an OpenDocument presentation", {MediaType.ODP}), ".epub": ("an EPUB book", {MediaType.EPUB}),
    ".html": ("an HTML page", {MediaType.HTML}), ".htm": ("an HTML page", {MediaType.HTML}),
    ".csv": ("a CSV table", {MediaType.CSV}), ".png": ("a PNG image", {MediaType.PNG}),
    ".jpg": ("a JPEG image", {MediaType.JPEG}), ".jpeg": ("a JPEG image", {MediaType.JPEG}),
    ".tif": ("a TIFF image", {MediaType.TIFF}), ".tiff": ("a TIFF image", {MediaType.TIFF}),
    ".txt": ("a text file", {MediaType.TEXT, MediaType.MARKDOWN}),
    ".md": ("a Markdown file", {MediaType.TEXT, MediaType.MARKDOWN}),
}

#: How a notice names what the bytes really are.
_REALLY = {MediaType.TEXT: "plain text", MediaType.MARKDOWN: "plain text", MediaType.DOCX: "a Word document (DOCX)",
           MediaType.PPTX: "a PowerPoint deck (PPTX)", MediaType.XLSX: "an Excel workbook (XLSX)",
           MediaType.XLS: "an Excel 97-2003 workbook (XLS)",
           MediaType.CSV: "a CSV table", MediaType.HTML: "an HTML page", MediaType.EPUB: "an EPUB book",
           MediaType.PDF: "a PDF"}


def misnamed_notice(name: str, media_type: MediaType) -> str | None:
    """The notice for a file whose bytes disagree with its name (issue 42, item 5), e.g.
    ``"report.docx is plain text, not a Word document: read as text"``; ``None`` when they agree or the
    extension promises nothing known."""
    dot = name.rfind(".")
    ext = name[dot:].lower() if dot > 0 else ""
    if ext not in _NAMED:
        return None
    promised, types = _NAMED[ext]
    if media_type in types:
        return None
    really = _REALLY.get(media_type, media_type.value)
    read_as = "text" if media_type in (MediaType.TEXT, MediaType.MARKDOWN) else really.split(" (")[0]
    return f"{name} is {really}, not {promised}: read as {read_as}"


def _with_notice(doc: Document, name: str) -> Document:
    notice = misnamed_notice(name, doc.media_type)
    return dataclasses.replace(doc, warnings=(notice,) + doc.warnings) if notice else doc


def is_rtf_bytes(data: bytes) -> bool:
    """RTF magic: ``{\\rtf`` at the start (after optional whitespace or a UTF-8 BOM)."""
    return data[:64].lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{\\rtf")


def with_coverage(doc: Document, data: bytes, limits: Limits) -> Document:
    """``doc`` with its text coverage (issue 37): a PDF's from its pages' audit, another format's from its
    independent auditor (:func:`rag.ingest.coverage.audit`), and the warning naming what was missed when it is
    under :data:`rag.ingest.coverage.MIN_COVERAGE`."""
    if doc.page_coverage:
        return dataclasses.replace(doc, coverage=round(sum(doc.page_coverage) / len(doc.page_coverage), 4))
    cov = coverage.audit(doc, data, limits)
    if cov is None:
        return doc
    warning = cov.warning()
    if warning and any(w.startswith("hidden text left out") for w in doc.warnings):
        warning += "; part of it may be the hidden text left out"
    return dataclasses.replace(doc, coverage=round(cov.share, 4),
                               warnings=doc.warnings + ((warning,) if warning else ()))


def extract_bytes(data: bytes, name: str, *, limits: Limits | None = None,
                  progress: Progress | None = None) -> Document:
    """Extract a document from its bytes (design stage 1).

    ``name`` is the user's file name, kept as display metadata only;
    ``progress(stage, done, total)`` hears a long reader's progress (a PDF's
    OCR: ``("ocr", pages done, pages to read)``; the Documents page's bar). Returns a
    :class:`Document` whose ``canonical`` text is the target of every offset.
    ``limits`` (default: the settings') bound the work (issue 26,
    :mod:`rag.ingest.limits`): a ZIP container is checked by
    :func:`rag.ingest.limits.check_zip` before it is even sniffed.
    Raises ``ExtractionError(name, reason)`` for every failure: empty file,
    not a PDF although named ``.pdf``, password-protected, damaged beyond
    repair, zero pages, no text layer, invalid UTF-8, blank-looking text,
    unsupported binary type, and each reader's own (damaged DOCX, no text
    found by OCR, ...); :class:`rag.errors.LimitExceeded` (a subclass) for
    a file over a limit.
    """
    if not data:
        raise ExtractionError(name, "empty file (0 bytes)")
    limits = resolve(limits)
    check_size(len(data), name, limits)
    if is_rtf_bytes(data):
        raise ExtractionError(name, "RTF (Rich Text Format) is not read here: read as plain text it would index "
                                    "its formatting codes; save it as DOCX, ODT or PDF and add that file")
    return _with_notice(_extract_bytes(data, name, limits, progress), name)


def _extract_bytes(data: bytes, name: str, limits: Limits, progress: Progress | None) -> Document:
    if is_pdf_bytes(data):
        return with_coverage(extract_pdf(data, name, limits=limits, progress=progress), data, limits)
    if name.lower().endswith(".pdf"):
        looks = _describe_bytes(data)
        if looks == "application/pdf":  # "%PDF" but no "%PDF-1.x" header (qpdf's issue-263.pdf: "%PDFn"; a walk,
            raise ExtractionError(name, "damaged PDF: no PDF header (%PDF-) in its first 1,024 bytes")  # 2026-12-07)
        raise ExtractionError(name, f"not a PDF although named .pdf (the bytes look like {looks})")
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        check_zip(data, name, limits)  # before sniffing: sniffing reads the EPUB ``mimetype`` member
    kind = sniff(data, name)
    if kind in READERS:
        return with_coverage(READERS[kind](data, name, limits=limits), data, limits)
    if kind is not None:
        _refuse_unsupported(kind, name)
    if b"\x00" in data[:8192] and textfile.bom_encoding(data) is None and textfile.decode_probe(data) is None:
        raise ExtractionError(name, f"unsupported file type ({_describe_bytes(data)}); expected {SUPPORTED}")
    try:
        return with_coverage(extract_text(data, name), data, limits)
    except ExtractionError as e:
        kind = _describe_bytes(data)
        if e.reason.startswith(("not valid UTF-8", "binary data")) and kind not in ("text", "binary data"):
            raise ExtractionError(name, f"unsupported file type ({kind}); expected {SUPPORTED}") from e
        raise


def extract_path(path, *, limits: Limits | None = None) -> Document:
    """Extract a file from disk, named by its base name. Raises ``ExtractionError``; a file over
    ``max_upload_mb`` (its size from the file system) is refused before it is read."""
    from pathlib import Path

    p = Path(path)
    limits = resolve(limits)
    try:
        check_size(p.stat().st_size, p.name, limits)
        data = p.read_bytes()
    except OSError as e:
        raise ExtractionError(p.name, f"cannot read file ({e.strerror or e})") from e
    return extract_bytes(data, p.name, limits=limits)
