"""What a file is, from its bytes (issue 17): the formats beyond PDF and text, never trusted from the name.

:func:`sniff` looks at the bytes in this order:

1. a ZIP container (``PK\\x03\\x04``) is opened and its entries decide
   (OOXML by its main part: ``word/document.xml`` -> DOCX,
   ``ppt/presentation.xml`` -> PPTX, ``xl/workbook.xml`` -> XLSX; EPUB by its
   ``mimetype`` entry or ``META-INF/container.xml`` with an OPF package);
   OpenDocument by its ``mimetype`` entry; XPS by its ``.fdseq`` document sequence; CBZ when every member
   is an image; any other archive is refused by :func:`rag.ingest.extract.extract_bytes`;
2. magic numbers through ``filetype`` (a well-kept pure-Python sniffing
   library): PNG, JPEG, TIFF are read by OCR; other images, and legacy
   Office (OLE2) files, are named so the refusal can say what they are (an OLE2 file holding an
   ``EncryptedPackage`` stream is a password-protected DOCX/XLSX/PPTX, not a legacy file; one holding a
   ``Workbook`` or ``Book`` stream, by its directory read with xlrd's compound-document reader, is a legacy
   Excel workbook, read by :mod:`rag.ingest.office.xls`; a .doc or .ppt stays :data:`OLE2`); MOBI by its
   ``BOOKMOBI`` header; FB2 by its ``<FictionBook`` root;
3. text: an HTML document (doctype or ``<html>``/``<head>``/``<body>`` at the
   start, read as Latin-1 so any ASCII-compatible charset is seen; unless the file is named as text or Markdown,
   also any tag the WHATWG sniffing standard opens HTML with, ``<script``, ``<div``, ``<p`` ...), then a
   delimited table (:func:`rag.ingest.office.sheets.looks_like_csv`) unless the file
   is named as text or Markdown.

It returns ``None`` for everything else: the PDF and text branches of
:mod:`rag.ingest.extract` take it from there, unchanged.
"""

from __future__ import annotations

import io
import zipfile

from rag.ingest.office.sheets import looks_like_csv
from rag.ingest.web.html import looks_like_html, sniffs_as_html
from rag.types import MediaType

#: Not supported, but named in the refusal: legacy binary Office files (OLE2 compound documents).
OLE2 = "application/x-ole-storage"

#: Any ZIP archive that is not one of the formats read here.
ZIP = "application/zip"

#: Not supported, but named in the refusal: an Outlook e-mail (.msg), an OLE2 file of ``__substg1.0_`` property
#: streams (MS-OXMSG), which was refused as a Word or PowerPoint 97-2003 file (a walk, 2026-12-07).
OUTLOOK_MSG = "application/vnd.ms-outlook"
#: An encrypted (password-protected) OOXML file: Office stores it as an OLE2 compound document holding
#: ``EncryptionInfo`` and ``EncryptedPackage`` streams (MS-OFFCRYPTO), so it is no legacy Office file.
ENCRYPTED_OOXML = "application/x-encrypted-ooxml"
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")
#: Not supported, but named in the refusal with what to do (a walk over SheetJS's test files, 2026-12-07: XLSB and
#: Apple Numbers files were "a ZIP archive that is not one of the formats read here", and flat OpenDocument,
#: Excel 2003 XML and SYLK files were read as text, their markup indexed as evidence).
XLSB = "application/vnd.ms-excel.sheet.binary.macroenabled.12"
IWORK = "application/x-iwork"
FLAT_ODF = "application/x-flat-opendocument"
OFFICE_2003_XML = "application/x-office-2003-xml"
SYLK = "application/x-sylk"
NAMED_UNSUPPORTED = {
    XLSB: "an Excel binary workbook (.xlsb), not read here; save it as .xlsx in Excel and add that",
    IWORK: "an Apple Numbers, Pages or Keynote file, not read here; export it as XLSX, DOCX, PPTX or PDF and add that",
    FLAT_ODF: "a flat OpenDocument file (.fodt, .fods or .fodp), not read here; save it as .odt, .ods or .odp",
    OFFICE_2003_XML: "an Excel or Word 2003 XML file, not read here; save it as .xlsx or .docx",
    SYLK: "a SYLK spreadsheet (.slk), not read here; save it as .xlsx or .csv",
}
#: The first record of an Excel 2.x-4.0 worksheet (BIFF2-4, no OLE2 container, which xlrd reads): a BOF record
#: (0x0009, 0x0209 or 0x0409) of 4 or 6 bytes.
_BIFF_BOF = (b"\x09\x00\x04\x00", b"\x09\x02\x06\x00", b"\x09\x04\x06\x00")

_ODF = {MediaType.ODT.value, MediaType.ODS.value, MediaType.ODP.value}
_IMAGE_NAMES = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp", ".tif", ".tiff", ".jxr")

_OOXML_MAIN = {
    "word/document.xml": MediaType.DOCX.value,
    "ppt/presentation.xml": MediaType.PPTX.value,
    "xl/workbook.xml": MediaType.XLSX.value,
}
_TEXT_NAMES = (".txt", ".md", ".markdown", ".text")
_CSV_NAMES = (".csv", ".tsv")


def sniff_zip(data: bytes) -> str:
    """The media type of a ZIP container from its entries (:data:`ZIP` when none of ours, or unreadable)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = set(zf.namelist())
            declared = _declared_mimetype(zf) if "mimetype" in names else None
            if declared is not None:
                return declared
            kind = _by_entries(names)
            if kind == ZIP and "_rels/.rels" in names:
                kind = _OOXML_MAIN.get(office_document(zf) or "", kind)
            return kind
    except (zipfile.BadZipFile, OSError, ValueError, RuntimeError):
        return ZIP


#: The prefix of an OOXML package's main part, by the folder its ``officeDocument`` relationship points into.
_MAIN_FOLDERS = {"word/": "word/document.xml", "ppt/": "ppt/presentation.xml", "xl/": "xl/workbook.xml"}


def office_document(zf: zipfile.ZipFile) -> str | None:
    """The part an OOXML package's ``_rels/.rels`` names as its main document, normalised to the usual name of that
    kind ("word/document2.xml" -> "word/document.xml"), or ``None``. Word for the web saves its body as
    ``word/document2.xml``, which a check for the fixed name called "a ZIP archive that is not one of the formats read
    here" (docx-rs's fixtures, a walk, 2026-12-07); the readers follow the relationship themselves."""
    from rag.ingest.office.ooxml import part_rels  # the packages' own reader (no entities, no network)

    try:
        if zf.getinfo("_rels/.rels").file_size > 1 << 16:
            return None
    except KeyError:
        return None
    for target in part_rels(zf, "", "officeDocument").values():
        return next((main for folder, main in _MAIN_FOLDERS.items() if target.lstrip("/").startswith(folder)), None)
    return None


def _declared_mimetype(zf: zipfile.ZipFile) -> str | None:
    """EPUB or the ODF type that the archive's ``mimetype`` entry declares, else ``None``."""
    try:
        declared = zf.read("mimetype")[:100].strip().decode("ascii", "replace")
    except (KeyError, zipfile.BadZipFile, OSError, RuntimeError):
        declared = ""
    if declared == "application/epub+zip":
        return MediaType.EPUB.value
    if declared in _ODF:
        return declared
    return None


def _by_entries(names: set[str]) -> str:
    """The media type that a ZIP's entry names tell: OOXML's main part, an EPUB's package, XPS, a comic of
    images; else :data:`ZIP`."""
    for part, media in _OOXML_MAIN.items():
        if part in names:
            return media
    if "META-INF/container.xml" in names and any(n.endswith(".opf") for n in names):
        return MediaType.EPUB.value
    if any(n.lower().endswith(".fdseq") for n in names):
        return MediaType.XPS.value
    if "xl/workbook.bin" in names:
        return XLSB
    if any(n.endswith((".iwa", "Index.zip")) and (n.startswith("Index") or "/Index" in n) for n in names):
        return IWORK  # "Index/Document.iwa", or a bundle zipped whole ("Attendance.numbers/Index.zip")
    files = [n for n in names if not n.endswith("/") and n.lower() != "comicinfo.xml"]
    if files and all(n.lower().endswith(_IMAGE_NAMES) for n in files):
        return MediaType.CBZ.value
    return ZIP


def sniff(data: bytes, name: str) -> str | None:
    """The media type of ``data`` when it is one of issue 17's formats (or a named unsupported one), else ``None``.

    ``name`` only separates text flavours (a file named ``.txt``/``.md`` is
    never read as CSV); it never decides a binary type.
    """
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        return sniff_zip(data)
    by_magic = _by_magic(data)
    if by_magic is not None:
        return by_magic
    if b"\x00" in data[:8192]:
        return None
    return _sniff_text(data, name)


def _by_magic(data: bytes) -> str | None:
    """An image, an OLE2 file (an encrypted OOXML or an old Office file), MOBI or FB2 by their first bytes."""
    import filetype  # imported here so `python -m rag --help` stays fast

    kind = filetype.guess(data[:8192])
    if kind is not None and kind.mime.startswith("image/"):  # PNG, JPEG and TIFF among them
        return kind.mime
    if data.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        if _ENCRYPTED_PACKAGE in data[:1 << 20] or _ENCRYPTED_PACKAGE in data[-(1 << 20):]:
            return ENCRYPTED_OOXML
        streams = {n.casefold() for n in _ole2_streams(data)}  # "WORKBOOK" too (calamine's capitalized_wbook_stream)
        if streams & {"workbook", "book"}:
            return MediaType.XLS.value
        return OUTLOOK_MSG if any(n.startswith("__substg1.0_") for n in streams) else OLE2
    if data[:4] in _BIFF_BOF:
        return MediaType.XLS.value
    if data[60:68] == b"BOOKMOBI":
        return MediaType.MOBI.value
    if b"<FictionBook" in data[:2048]:
        return MediaType.FB2.value
    return None


def _ole2_streams(data: bytes) -> set[str]:
    """The entry names of an OLE2 compound document's directory (``Workbook``, ``WordDocument``, ...), read with
    xlrd's compound-document reader (linear in the file's size: its allocation table and directory); an empty set
    when it cannot read them (a damaged file stays :data:`OLE2`)."""
    import os

    from xlrd.compdoc import CompDoc

    try:
        with open(os.devnull, "w") as log:
            return {d.name for d in CompDoc(data, logfile=log).dirlist}
    except Exception:  # noqa: BLE001 - any damage means "not a workbook we can name"
        return set()


def _sniff_text(data: bytes, name: str) -> str | None:
    """HTML or CSV among text bytes (no NUL), else ``None``; a file named as text is never CSV."""
    lower = name.lower()
    head = data[:8192].decode("latin-1")
    low = head[:4096].lower()
    xml = low.lstrip("\ufeff\xef\xbb\xbf \t\r\n").startswith("<")  # an XML document, not a text that names one
    if xml and "<office:document" in low and "urn:oasis:names:tc:opendocument" in low:
        return FLAT_ODF
    if xml and ('progid="excel.sheet"' in low or 'progid="word.document"' in low
                or "urn:schemas-microsoft-com:office:spreadsheet" in low or "schemas.microsoft.com/office/word/2003" in low):
        return OFFICE_2003_XML
    if data.startswith(b"ID;P"):
        return SYLK
    if looks_like_html(head):
        return MediaType.HTML.value
    if lower.endswith((".html", ".htm", ".xhtml", ".shtml")) and ("<html" in head.lower() or "<body" in head.lower()):
        # a page named as one whose markup a browser reads although it opens oddly (bioRxiv's minified
        # "<!doctypehtml>"; a postlight/parser walk, 2026-12-07: its markup indexed as text)
        return MediaType.HTML.value
    if lower.endswith(_TEXT_NAMES):  # a Markdown file may open with "<div align=center>": it stays Markdown
        return None
    if sniffs_as_html(data[:8192].decode("latin-1")):
        return MediaType.HTML.value
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        if not lower.endswith(_CSV_NAMES):
            return None
        text = data.decode("cp1252", errors="replace")
    if looks_like_csv(text, named_csv=lower.endswith(_CSV_NAMES)):
        return MediaType.CSV.value
    return None
