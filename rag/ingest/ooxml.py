"""Strict OOXML read as Transitional (issue 28, item 3): the same DOCX, XLSX and PPTX parts under other names.

ISO/IEC 29500 *Strict* (Office's "Strict Open XML" save option; LibreOffice and calamine write it too) uses
``http://purl.oclc.org/ooxml/...`` namespaces and relationship types where the Transitional files every
Office library reads use ``http://schemas.openxmlformats.org/...``. openpyxl, python-docx and python-pptx know
only the latter: a Strict workbook with data was refused as "every sheet of this XLSX is empty". The XML of
the package is the same otherwise, so :func:`transitional` renames the namespaces in every XML part (the
package's own size limits were checked before: :func:`rag.ingest.limits.check_zip`) and the readers proceed.
"""

from __future__ import annotations

import io
import zipfile

#: Strict namespace (and relationship-type) prefixes and their Transitional names (ECMA-376 Part 1, annex A).
STRICT_TO_TRANSITIONAL = (
    (b"http://purl.oclc.org/ooxml/spreadsheetml/main", b"http://schemas.openxmlformats.org/spreadsheetml/2006/main"),
    (b"http://purl.oclc.org/ooxml/wordprocessingml/main",
     b"http://schemas.openxmlformats.org/wordprocessingml/2006/main"),
    (b"http://purl.oclc.org/ooxml/presentationml/main", b"http://schemas.openxmlformats.org/presentationml/2006/main"),
    (b"http://purl.oclc.org/ooxml/officeDocument/relationships",
     b"http://schemas.openxmlformats.org/officeDocument/2006/relationships"),
    (b"http://purl.oclc.org/ooxml/officeDocument/extendedProperties",
     b"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"),
    (b"http://purl.oclc.org/ooxml/officeDocument/customProperties",
     b"http://schemas.openxmlformats.org/officeDocument/2006/custom-properties"),
    (b"http://purl.oclc.org/ooxml/officeDocument/docPropsVTypes",
     b"http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"),
    (b"http://purl.oclc.org/ooxml/drawingml/spreadsheetDrawing",
     b"http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"),
    (b"http://purl.oclc.org/ooxml/drawingml/wordprocessingDrawing",
     b"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"),
    (b"http://purl.oclc.org/ooxml/drawingml/chart", b"http://schemas.openxmlformats.org/drawingml/2006/chart"),
    (b"http://purl.oclc.org/ooxml/drawingml/picture", b"http://schemas.openxmlformats.org/drawingml/2006/picture"),
    (b"http://purl.oclc.org/ooxml/drawingml/main", b"http://schemas.openxmlformats.org/drawingml/2006/main"),
    (b"http://purl.oclc.org/ooxml/officeDocument/math", b"http://schemas.openxmlformats.org/officeDocument/2006/math"),
)
_MARK = b"http://purl.oclc.org/ooxml/"


def is_strict(data: bytes) -> bool:
    """Whether the OOXML package ``data`` uses Strict names (its content types or main relationships do)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return any(_MARK in zf.read(n)[:1 << 16] for n in ("_rels/.rels", "[Content_Types].xml")
                       if n in zf.namelist())
    except (zipfile.BadZipFile, OSError, RuntimeError, KeyError):
        return False


def transitional(data: bytes) -> tuple[bytes, bool]:
    """``(package, converted)``: a Strict package rewritten with Transitional names (module doc), or ``data``
    itself when it is not Strict (or not a readable ZIP: the reader then says what is wrong)."""
    if not is_strict(data):
        return data, False
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename.endswith((".xml", ".rels")) and _MARK in body:
                for strict, trans in STRICT_TO_TRANSITIONAL:
                    body = body.replace(strict, trans)
            dst.writestr(info, body)
    return out.getvalue(), True
