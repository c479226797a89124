"""Legacy Excel workbooks (.xls: BIFF5-BIFF8 inside an OLE2 compound document) read with xlrd, laid out as XLSX is.

An OLE2 file (``D0 CF 11 E0``) is a workbook when xlrd finds its ``Workbook`` (or ``Book``) stream; a Word 97-2003
document or a PowerPoint 97-2003 deck, the other OLE2 files a user drops, is refused as before ("legacy Office
file (.doc/.ppt)", with how to save it), and an encrypted one as password-protected. Each visible sheet is a section
whose used rows are a Markdown table, one ``rows`` part per sheet row (A1 numbering), as
:func:`rag.ingest.office.sheets.write_sheet` writes every spreadsheet: the same locators (``'Q1'!A2:E9``), caption
rows and merged header rows. Cells read as Excel shows them (:func:`rag.ingest.office.numfmt.format_cell` under the
cell's own number format; dates as ISO 8601 by the workbook's date system; ``TRUE``/``FALSE``; errors as ``#DIV/0!``).

What a reader cannot see is left out and reported (issue 37's rule, as for XLSX): hidden and very hidden sheets,
hidden rows and columns, cells under the number format ``;;;``, in a font under 2 pt, or in white on no fill.
Charts and pictures of a .xls are not read (xlrd does not parse drawings). The whole file is parsed by xlrd in
memory: the contained child's memory and time limits bound it (``OOM_alloc.xls`` of calamine's tests reads in
30 ms); rows and cells are counted by :class:`rag.ingest.limits.RowBudget` as for XLSX.
"""

from __future__ import annotations

import os

from rag.errors import ExtractionError
from rag.ingest.canonical import CanonicalBuilder, file_stem
from rag.ingest.limits import Limits, RowBudget, resolve
from rag.ingest.office import numfmt
from rag.ingest.office.numfmt import format_cell
from rag.ingest.office.office_hidden import MIN_VISIBLE_PT, Hidden
from rag.ingest.office.sheets import comments_warning, workbook_warnings, write_sheet
from rag.types import Document, MediaType

#: What a Word or PowerPoint 97-2003 file (an OLE2 file with no workbook stream) is told.
LEGACY = "legacy Office file (.doc/.ppt, Word or PowerPoint 97-2003); save it as DOCX or PPTX (or PDF) and add that file"
#: What an encrypted .xls is told.
ENCRYPTED = "password-protected (an encrypted XLS); remove the password in Excel and add the file again"
#: Excel's error codes (BIFF ``BOOLERR`` records), as a cell shows them.
_ERRORS = {0x00: "#NULL!", 0x07: "#DIV/0!", 0x0F: "#VALUE!", 0x17: "#REF!", 0x1D: "#NAME?", 0x24: "#NUM!",
           0x2A: "#N/A"}
_WHITE = (255, 255, 255)


def _open(data: bytes, name: str):
    """The xlrd book (formatting read, sheets loaded one at a time), or the refusal that says what the file is."""
    import xlrd  # imported here so `python -m rag --help` stays fast
    from xlrd.compdoc import CompDocError

    last: Exception | None = None
    for formatting in (True, False):  # BIFF5 and older books may not give their formatting
        try:
            with open(os.devnull, "w") as log:
                try:
                    return xlrd.open_workbook(file_contents=data, formatting_info=formatting, on_demand=True,
                                              logfile=log, ragged_rows=True)
                except CompDocError as e:  # a sector chain shared twice ("seen[3] == 4"), which Excel opens and
                    if "corruption" not in str(e).lower():  # saves (PHPExcel's bad_cfb_dir: a walk, 2026-12-07)
                        raise
                    return xlrd.open_workbook(file_contents=data, formatting_info=formatting, on_demand=True,
                                              logfile=log, ragged_rows=True, ignore_workbook_corruption=True)
        except xlrd.XLRDError as e:
            text = str(e)
            if "find workbook" in text.lower():  # "Can't find workbook in OLE2 compound document"
                raise ExtractionError(name, LEGACY) from e
            if "encrypt" in text.lower():
                raise ExtractionError(name, ENCRYPTED) from e
            last = e
        except NotImplementedError as e:  # "formatting_info=True not yet implemented" (BIFF 2-4)
            last = e
        except Exception as e:  # noqa: BLE001 - a damaged compound document fails in many ways; all mean one thing
            raise ExtractionError(name, f"damaged XLS ({type(e).__name__}: {str(e)[:120]})") from e
    raise ExtractionError(name, f"damaged XLS ({type(last).__name__}: {str(last)[:120]})")


def _why_hidden(book, xf_index: int) -> str | None:
    """Why a cell in format record ``xf_index`` shows nothing a reader sees, or ``None``: the number format
    ``;;;``, a font under :data:`MIN_VISIBLE_PT`, or a white font on no fill (or a white one)."""
    if not book.formatting_info or not 0 <= xf_index < len(book.xf_list):
        return None
    xf = book.xf_list[xf_index]
    fmt = book.format_map.get(xf.format_key)
    if fmt is not None and fmt.format_str and not fmt.format_str.replace(";", "").strip():
        return "number format ;;;"
    if 0 <= xf.font_index < len(book.font_list):
        font = book.font_list[xf.font_index]
        if font.height and font.height / 20 < MIN_VISIBLE_PT:  # twips
            return "under 2 pt"
        if book.colour_map.get(font.colour_index) == _WHITE:
            bg = xf.background
            painted = bg.fill_pattern != 0 and book.colour_map.get(bg.pattern_colour_index) not in (None, _WHITE)
            if not painted:
                return "white font"
    return None


def _text(book, cell) -> str:
    """One xlrd cell as Excel shows it (see the module docstring)."""
    import xlrd

    kind, value = cell.ctype, cell.value
    if kind in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
        return ""
    if kind == xlrd.XL_CELL_TEXT:
        return str(value)
    if kind == xlrd.XL_CELL_BOOLEAN:
        return "TRUE" if value else "FALSE"
    if kind == xlrd.XL_CELL_ERROR:
        return _ERRORS.get(value, "#ERROR")
    fmt = None
    if book.formatting_info and 0 <= cell.xf_index < len(book.xf_list):
        f = book.format_map.get(book.xf_list[cell.xf_index].format_key)
        fmt = f.format_str if f is not None else None
    if kind == xlrd.XL_CELL_DATE:
        section = numfmt.sections(fmt)[0] if fmt else ""
        if section and (numfmt.is_elapsed(section) or numfmt.is_time_only(section)):
            return format_cell(value, fmt)  # the serial itself: a duration of 1.5 days is 36:00:00, no date
        try:
            return format_cell(xlrd.xldate.xldate_as_datetime(value, book.datemode), fmt)
        except (ValueError, OverflowError, xlrd.xldate.XLDateError):
            return format_cell(value)
    return format_cell(value, fmt)


def _sheet_rows(book, sheet, budget: RowBudget, hidden: Hidden) -> list[tuple[int, list[str]]]:
    """The rows of one sheet with content, ``(1-based row number, cell texts)``, hidden rows, columns and cells
    left out and counted in ``hidden``; each row counted by ``budget`` before it is kept."""
    hidden_cols = {c for c, info in sheet.colinfo_map.items() if info.hidden}
    rows = []
    for r in range(sheet.nrows):
        cells = sheet.row(r)
        texts = [_text(book, c) for c in cells]
        if not any(texts):
            continue
        budget.row(max(i for i, t in enumerate(texts) if t) + 1)
        info = sheet.rowinfo_map.get(r)
        if info is not None and info.hidden:
            hidden.add("in hidden rows", sum(bool(t) for t in texts))
            continue
        for i, t in enumerate(texts):
            if not t:
                continue
            if i in hidden_cols:
                hidden.add("in hidden columns")
                texts[i] = ""
            elif (why := _why_hidden(book, cells[i].xf_index)) is not None:
                hidden.add(why)
                texts[i] = ""
        rows.append((r + 1, texts))
    return rows


def extract_xls(data: bytes, name: str, *, limits: Limits | None = None) -> Document:
    """Legacy Excel (.xls) bytes -> :class:`rag.types.Document` of media type XLS, one section per non-empty visible
    sheet, laid out and located as XLSX (see the module docstring).

    Raises ``ExtractionError(name, reason)`` for an OLE2 file that holds no workbook (:data:`LEGACY`: a .doc or
    .ppt), an encrypted one (:data:`ENCRYPTED`), a damaged one (``damaged XLS (...)``), or a workbook whose visible
    sheets are empty; :class:`rag.errors.LimitExceeded` past the row or cell limits (issue 26).
    """
    limits = resolve(limits)
    book = _open(data, name)
    budget, hidden = RowBudget(name, limits), Hidden("cells")
    b = CanonicalBuilder()
    hidden_sheets, captions, written, notes = [], [], 0, 0
    try:
        for i in range(book.nsheets):
            sheet = book.sheet_by_index(i)
            if sheet.visibility != 0:  # 1 hidden, 2 very hidden
                hidden_sheets.append(sheet.name)
                continue
            rows = _sheet_rows(book, sheet, budget, hidden)
            notes += len(getattr(sheet, "cell_note_map", None) or {})  # read only with the formatting
            merges = [(clo + 1, rlo + 1, chi, rhi) for rlo, rhi, clo, chi in sheet.merged_cells[:10000]]
            written += write_sheet(b, sheet.name, rows, heading=True, budget=budget, merges=merges,
                                   captions=captions)
            book.unload_sheet(i)
    except ExtractionError:  # LimitExceeded among them
        raise
    except Exception as e:  # noqa: BLE001 - xlrd's record errors all mean the same to the user
        raise ExtractionError(name, f"damaged XLS ({type(e).__name__}: {str(e)[:120]})") from e
    finally:
        book.release_resources()
    warnings = workbook_warnings(name, "XLS", written, hidden_sheets, hidden) + comments_warning(notes)
    title = captions[0] if captions and len(captions[0]) <= 200 else file_stem(name)
    return b.document(data, name, MediaType.XLS.value, title=title, extractor="xls", warnings=tuple(warnings))
