"""An XLSX package's parts read around openpyxl (issue 37; a new user's walk, 2026-12-07): a package mended before
openpyxl can open it (:func:`repaired`), and the cell comments counted for a warning (:func:`cell_comments`)."""

from __future__ import annotations

import io
import zipfile

#: A workbook is mended at most this many times before it is called damaged (:func:`repaired`).
MAX_REPAIRS = 3
_MISSING = "There is no item named '"
_EMPTY_SST = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
              b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="0" uniqueCount="0"/>')


def repaired(body: bytes, error: KeyError | IndexError) -> tuple[bytes, str] | None:
    """``(mended package, what was mended)`` for openpyxl's missing-part error ``error``, else ``None``: a part
    stored under another case (Go's excelize writes ``xl/SharedStrings.xml``; ZIP names are case-sensitive, Excel's
    are not) is renamed; a shared-strings part declared and absent (a workbook of inline strings) is added empty.
    Both files open in Excel and LibreOffice and were refused as damaged (a new user's walk, 2026-12-07). On an
    ``IndexError``, a styles part with no cell style formats (``cellStyleXfs``, which openpyxl indexes; SheetJS's
    xlsx-stream-d-date-cell.xlsx, written by a streaming writer, opens in Excel) gets the default one."""
    if isinstance(error, IndexError):
        return _styles_mended(body)
    msg = str(error)
    if _MISSING not in msg:
        return None
    want = msg.split(_MISSING, 1)[1].split("'", 1)[0]
    with zipfile.ZipFile(io.BytesIO(body)) as zin:
        same = [n for n in zin.namelist() if n.casefold() == want.casefold() and n != want]
        if not same and not want.casefold().endswith("sharedstrings.xml"):
            return None
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
            for info in zin.infolist():
                zout.writestr(want if same and info.filename == same[0] else info.filename, zin.read(info))
            if not same:
                zout.writestr(want, _EMPTY_SST)
    return out.getvalue(), (f"{same[0]} read as {want}" if same else f"{want} missing, read as empty")


_DEFAULT_STYLE_XF = b'<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'


def _styles_mended(body: bytes) -> tuple[bytes, str] | None:
    """The package with a default ``cellStyleXfs`` put before ``cellXfs`` in ``xl/styles.xml`` when it has none."""
    with zipfile.ZipFile(io.BytesIO(body)) as zin:
        if "xl/styles.xml" not in zin.namelist():
            return None
        styles = zin.read("xl/styles.xml")
        at = styles.find(b"<cellXfs")
        if b"cellStyleXfs" in styles or at < 0:
            return None
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
            for info in zin.infolist():
                zout.writestr(info.filename, styles[:at] + _DEFAULT_STYLE_XF + styles[at:]
                              if info.filename == "xl/styles.xml" else zin.read(info))
    return out.getvalue(), "xl/styles.xml had no cell style formats, read with the default one"


#: Comments counted at most (a hostile part of millions is not read to its end).
MAX_COMMENTS = 100_000


def cell_comments(package: zipfile.ZipFile) -> int:
    """How many cell comments (``xl/comments*.xml``, ECMA-376 part 1, 18.7) a workbook holds, as the DOCX and ODF readers
    count theirs for a warning (PhpSpreadsheet's formscomments.xlsx: two notes dropped without a word, a new user's
    walk, 2026-12-07); at most :data:`MAX_COMMENTS`, 0 for parts that do not parse."""
    from lxml import etree

    n = 0
    for part in package.namelist():
        if not (part.lower().startswith("xl/comments") and part.lower().endswith(".xml")):
            continue
        try:
            with package.open(part) as fh:
                for _, el in etree.iterparse(fh, events=("end",), resolve_entities=False, no_network=True,
                                             huge_tree=False):
                    if isinstance(el.tag, str) and el.tag.rsplit("}", 1)[-1] == "comment":
                        n += 1
                        if n >= MAX_COMMENTS:
                            return n
                    el.clear()
        except Exception:  # noqa: BLE001 - a damaged comments part (bad XML, bad deflate data) only loses the warning
            continue
    return n
