"""Spreadsheets (XLSX with openpyxl, CSV with the csv module) -> canonical text + sheet-row locators (issue 17).

Layout: each sheet is a section (a level-1 heading with the sheet's name;
a CSV file has one sheet and no heading), its used rows a Markdown table: the
first non-empty row is the header, then the ``| --- |`` separator, then one
line per non-empty row. Every row line is a :class:`rag.types.Part` of kind
``rows``: ``number`` is the row's own 1-based number in the sheet (as in A1:
row 7 is row 7 even when rows 3-6 are empty), ``scope`` the sheet name,
``anchor`` the used columns (``"A:D"``). So a chunk's locator is sheet + A1
row range, e.g. ``Q1!A12:D19``. The chunker repeats the header row in every
chunk's embedded text (:func:`rag.ingest.chunk.table_header`).

Numbers are kept as written: CSV cells are the file's own characters; XLSX
cells are shown as Excel shows them for the common number formats (fixed
decimals, thousands separators, percentages, currency symbols, scientific;
General as up to 15 significant digits, so ``0.1 + 0.2`` reads ``0.3``),
dates as ISO 8601. Formulas read their cached result (what Excel last
computed); a workbook saved without cached results shows those cells empty.
"""

from __future__ import annotations

import contextlib
import csv
import io
import zipfile

from rag.errors import ExtractionError
from rag.ingest.canonical import CanonicalBuilder, Unit, file_stem, markdown_row, markdown_separator, table_cell
from rag.ingest.limits import Limits, RowBudget, check_zip, resolve
from rag.ingest.office.numfmt import format_cell
from rag.ingest.office.office_hidden import Hidden, cell_hidden
from rag.ingest.office.ooxml import agrees, drawing_blocks, part_rels, safe_xml, transitional
from rag.ingest.office.xlsx_package import MAX_REPAIRS, cell_comments, repaired
from rag.types import Document, LocatorKind, MediaType

#: Delimiters tried when sniffing a CSV dialect (``|`` is left out: that is a Markdown table).
CSV_DELIMITERS = ",;\t"



def column_letter(n: int) -> str:
    """1-based column number -> A1 letters (1 -> ``A``, 27 -> ``AA``)."""
    out = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        out = chr(65 + r) + out
    return out





def write_sheet(b: CanonicalBuilder, sheet: str, rows: list[tuple[int, list[str]]], *, heading: bool,
                budget: RowBudget | None = None, merges: list[tuple[int, int, int, int]] | None = None,
                captions: list[str] | None = None, split: bool = True) -> bool:
    """Write one sheet: optional heading, then its rows as a Markdown table, one ``rows`` part per row; tables
    side by side (:func:`side_by_side`) each a table of its own, left to right.

    ``rows`` are ``(1-based row number, cells)`` with cells already text;
    empty rows and empty outer columns are dropped. Returns whether anything was written.
    ``budget`` counts the table's cells (rows x used columns) before it is padded (issue 26).
    ``merges`` (XLSX: the merged ranges, ``(min_col, min_row, max_col, max_row)`` 1-based) turns on issue 37's
    layout: leading title rows (one cell each) are the sheet's caption, a block before the table, and a
    header row with merged cells over a row of labels is joined with it (:func:`header_rows`); the caption's
    first line is appended to ``captions`` when given.
    """
    rows = [(n, [table_cell(c) for c in cells]) for n, cells in rows]
    rows = [(n, cells) for n, cells in rows if any(cells)]
    if not rows:
        return False
    blocks = side_by_side(rows) if split else []
    if len(blocks) > 1:
        if heading:
            b.heading(1, sheet)
        for a, z in blocks:
            write_sheet(b, sheet, [(n, [c if a <= i <= z else "" for i, c in enumerate(cells)]) for n, cells in rows],
                        heading=False, budget=budget, merges=merges, captions=captions, split=False)
        return True
    first = min(next(i for i, c in enumerate(cells) if c) for _, cells in rows)
    last = max(max(i for i, c in enumerate(cells) if c) for _, cells in rows)
    width = last - first + 1
    if budget is not None:
        budget.table(len(rows), width, sheet)
    rows = [(n, (cells + [""] * (last + 1 - len(cells)))[first:last + 1]) for n, cells in rows]
    span = f"{column_letter(first + 1)}:{column_letter(last + 1)}"
    if heading:
        b.heading(1, sheet)
    caption: list[tuple[int, list[str]]] = []
    head_rows = rows[:1]
    if merges is not None:
        while width >= 2 and len(rows) > 2 and len(caption) < 3 and (
                sum(bool(c) for c in rows[0][1]) == 1 or _titles_row(rows[0], first, merges)):
            caption.append(rows.pop(0))
        head_rows = header_rows(rows, [(a - first - 1, r0, c - first - 1, r1) for a, r0, c, r1 in merges])
    if caption and captions is not None:
        captions.append(next(c for c in caption[0][1] if c))
    if caption:
        b.lines([(" / ".join(c for c in cells if c), Unit(LocatorKind.ROWS, n, scope=sheet, anchor=span))
                 for n, cells in caption])
    head = join_header([cells for _, cells in head_rows])
    lines = [(markdown_row(head), Unit(LocatorKind.ROWS, head_rows[0][0], scope=sheet, anchor=span)),
             (markdown_separator(width), None)]
    lines += [(markdown_row(cells), Unit(LocatorKind.ROWS, n, scope=sheet, anchor=span))
              for n, cells in rows[len(head_rows):]]
    b.lines(lines)
    return True


#: At most this many tables are read side by side in one sheet; past it the sheet is read as one table.
MAX_BLOCKS = 20


def side_by_side(rows: list[tuple[int, list[str]]]) -> list[tuple[int, int]]:
    """The column blocks ``(first, last)`` (0-based, inclusive) of tables laid side by side in ``rows``, left to
    right, else ``[]``: runs of at least two columns with text, between columns empty in every row, where of each two
    neighbours the one filling fewer rows fills one unbroken run of the sheet's rows, and the other fills at least two
    rows outside that run. Before, a sheet's summary block beside its orders was read as one table, the summary's
    lines glued to the first orders' rows under the orders' header (a new user's walk, 2026-12-07). A form's labels
    with their values one empty column apart (values filled here and there down the labels' rows) and two tables of
    the same rows stay one table: their rows belong together; so do blocks whose header rows are one row (an order
    list's "order, customer, , carrier, tracking", tracking filled for the first orders only: a review, 2026-12-07)."""
    width = max(len(cells) for _, cells in rows)
    used = [any(i < len(cells) and cells[i] for _, cells in rows) for i in range(width)]
    runs: list[tuple[int, int]] = []
    for i, u in enumerate(used):
        if u and (not runs or runs[-1][1] != i - 1):
            runs.append((i, i))
        elif u:
            runs[-1] = (runs[-1][0], i)
    if not 1 < len(runs) <= MAX_BLOCKS or any(z == a for a, z in runs):
        return []
    order = {n: k for k, (n, _) in enumerate(rows)}  # position among the rows with text
    filled = [[order[n] for n, cells in rows if any(cells[a:z + 1])] for a, z in runs]
    heads = [[cells[a:z + 1] for n, cells in rows if any(cells[a:z + 1])][0] for a, z in runs]
    for k, (left, right) in enumerate(zip(filled, filled[1:])):
        if left[0] == right[0] and _header_like(heads[k]) and _header_like(heads[k + 1]):
            return []  # one header row across both: one table with an empty column ("order, customer, , carrier")
        small, big = sorted((left, right), key=len)
        if len(small) < 2 or small[-1] - small[0] + 1 != len(small):
            return []
        if sum(not small[0] <= k <= small[-1] for k in big) < 2:
            return []
    return runs


def _header_like(cells: list[str]) -> bool:
    """Whether a row's cells are all labels (text, no number), as a header row's are."""
    filled = [c for c in cells if c]
    return len(filled) >= 2 and not any(_numeric(c) for c in filled)


def _titles_row(row: tuple[int, list[str]], first: int, merges: list[tuple[int, int, int, int]]) -> bool:
    """Whether every filled cell of ``row`` (cells from 0-based column ``first``) is a title merged across three
    columns or more: the titles of two tables side by side (a USDA sheet, a new user's walk, 2026-12-07: each was
    joined into every column name below it, "Total production, exports and export value (2005) for countries ... /
    Country"), a caption, not a header."""
    n, cells = row
    spans = {(a, r0): c - a for a, r0, c, r1 in merges if r0 == n}
    filled = [i for i, c in enumerate(cells) if c]
    return len(filled) >= 2 and all(spans.get((first + i + 1, n), 0) >= 2 for i in filled)


def _numeric(text: str) -> bool:
    return bool(text) and text.replace(",", "").replace(".", "").replace("%", "").replace("-", "").strip().isdigit()


def _is_year(x: str) -> bool:
    x = x.strip()
    return x.isdigit() and 1900 <= int(x) <= 2100


def _years(cells: list[str], below: list[str]) -> bool:
    """Whether the numbers of a row are column labels: three or more years (1900-2100), rising left to right ("Project
    Cost | Project Year | 2019 | 2020 | ..." under "INVENTORY | VALUATION": PhpSpreadsheet's ComboChart1.xlsx, a new
    user's walk, 2026-12-07), over a row (``below``) that holds no year in their columns. A data row's years ("Alice |
    2015 | 2019" over "Bob | 2017 | 2021") are data (a review, 2026-12-07)."""
    at = [i for i, x in enumerate(cells) if _numeric(x)]
    years = [cells[i].strip() for i in at]
    if len(years) < 3 or not all(_is_year(x) for x in years):
        return False
    if any(i < len(below) and _is_year(below[i]) for i in at):
        return False
    return all(int(a) < int(b) for a, b in zip(years, years[1:]))


def header_rows(rows: list[tuple[int, list[str]]], merges: list[tuple[int, int, int, int]],
                most: int = 3) -> list[tuple[int, list[str]]]:
    """The rows of a table's header (at least the first, at most ``most``): a row joins the header when the
    header's last row has a cell merged across columns (``merges`` with 0-based columns of ``rows``, 1-based
    sheet rows) and the row holds labels, no numbers but years (:func:`_years`), under that cell ("Bachelor's degree
    or higher" over "Percent" and "Margin of error"). Each header row's merged cells are spread over their columns."""
    out = [rows[0]]
    while len(out) < most and len(rows) > len(out) + 1:
        n, _ = out[-1]
        spans = [(a, c) for a, r0, c, r1 in merges if r0 == n and c > a]
        nxt_n, nxt = rows[len(out)]
        under = [nxt[i] for a, c in spans for i in range(max(a, 0), min(c, len(nxt) - 1) + 1)]
        below = rows[len(out) + 1][1] if len(rows) > len(out) + 1 else []
        if not spans or not any(under) or (any(_numeric(x) for x in nxt if x) and not _years(nxt, below)):
            break
        out.append((nxt_n, nxt))
    if len(out) == 1:
        return out
    spread = []
    for n, cells in out:
        cells = list(cells)
        for a, r0, c, r1 in merges:
            if r0 <= n <= r1 and 0 <= a < len(cells):
                value = next((x for rn, xs in out if rn == r0 for x in xs[a:a + 1]), "")
                for i in range(a, min(c, len(cells) - 1) + 1):
                    cells[i] = value if r0 == n else ""
        spread.append((n, cells))
    return spread


def join_header(rows: list[list[str]]) -> list[str]:
    """One header row from several: each column's labels top to bottom joined by `` / ``, repeats dropped."""
    if len(rows) == 1:
        return rows[0]
    out = []
    for i in range(max(len(r) for r in rows)):
        parts: list[str] = []
        for r in rows:
            if i < len(r) and r[i] and r[i] not in parts:
                parts.append(r[i])
        out.append(" / ".join(parts))
    return out


def _hidden_columns(parser) -> set[int]:
    """1-based columns a sheet hides (``<col min max hidden="1">``), read by the parser before the rows."""
    out: set[int] = set()
    for attrs in parser.column_dimensions.values():
        if str(attrs.get("hidden", "")).lower() in ("1", "true"):
            try:
                lo, hi = int(attrs.get("min", 0)), int(attrs.get("max", 0))
            except ValueError:
                continue
            out.update(range(max(lo, 1), min(hi, 16384) + 1))
    return out


def _sheet_rows(wb, ws, budget: RowBudget, hidden: Hidden, uncomputed: list[int] | None = None,
                ) -> tuple[list[tuple[int, list[str]]], list]:
    """The rows of one read-only worksheet as ``(row number, cell texts)``: only rows the file holds (the declared
    dimension, e.g. ``A1:XFD1048576``, is never used to pad rows or columns), hidden rows and columns and hidden
    cells (:func:`rag.ingest.office.office_hidden.cell_hidden`) left out, every row counted by ``budget`` first; and the
    sheet's merged ranges ``(min_col, min_row, max_col, max_row)``, 1-based (they follow the rows in the file).
    ``uncomputed[0]`` counts the formula cells the file stores no value for (saved by a program that writes
    formulas without computing them: openpyxl, many report generators), which read as empty."""
    from openpyxl.cell.read_only import ReadOnlyCell
    from openpyxl.worksheet._reader import FORMULA_TAG, VALUE_TAG, WorkSheetParser  # read-only iter_rows' parser

    class Parser(WorkSheetParser):
        def parse_cell(self, element):
            cell = super().parse_cell(element)
            if (uncomputed is not None and cell.get("value") is None and element.find(FORMULA_TAG) is not None
                    and (element.get("t") != "str" or element.find(VALUE_TAG) is None)):  # Excel writes an empty
                # string result as t="str" with <v></v>: computed; openpyxl writes <v></v> with no type: not
                uncomputed[0] += 1
            return cell

    rows = []
    with ws._get_source() as src:
        parser = Parser(src, ws._shared_strings, data_only=True, epoch=wb.epoch,
                        date_formats=wb._date_formats, timedelta_formats=wb._timedelta_formats)
        hidden_cols: set[int] | None = None
        for number, raw in parser.parse():
            if hidden_cols is None:
                hidden_cols = _hidden_columns(parser)
            cells = [c for c in raw if c.get("value") is not None]
            if not cells:
                continue
            budget.row(max(c["column"] for c in cells))
            dims = parser.row_dimensions.get(str(number), {})
            if str(dims.get("hidden", "")).lower() in ("1", "true"):
                hidden.add("in hidden rows", len(cells))
                continue
            texts = [""] * max(c["column"] for c in cells)
            for c in cells:
                if c["column"] in hidden_cols:
                    hidden.add("in hidden columns")
                    continue
                if not isinstance(c.get("style_id", 0), int):  # s="" (calamine's empty_s_attribute.xlsx, a walk,
                    c["style_id"] = int(c["style_id"]) if str(c["style_id"]).isdigit() else 0  # 2026-12-07): style 0
                cell = ReadOnlyCell(ws, **c)
                why = cell_hidden(cell)
                if why:
                    hidden.add(why)
                    continue
                texts[c["column"] - 1] = format_cell(cell.value, getattr(cell, "number_format", None))
            rows.append((number, texts))
        merges = [m.bounds for m in (parser.merged_cells.mergeCell if parser.merged_cells else ())][:10000]
    return rows, merges


def _drawings(package: zipfile.ZipFile, ws) -> list[list[str]]:
    """The text of a worksheet's drawings (text boxes, charts' titles and labels), block by block."""
    path = (getattr(ws, "_worksheet_path", "") or "").lstrip("/")
    return [lines for target in part_rels(package, path, "drawing").values()
            for lines in drawing_blocks(package, target)] if path else []


_SML = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_RID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"


def _chart_sheets(package: zipfile.ZipFile, wb) -> list[tuple[str, str, list[list[str]]]]:
    """``(name, state, drawing blocks)`` of each chart sheet (a sheet that is one chart, which openpyxl keeps apart
    from the worksheets), in the workbook's order: XlsxWriter's chart_bar16.xlsx lost its chart's title and axis titles
    (a walk, 2026-12-07: "text coverage 0 %"). ``state``: ``visible``, ``hidden`` or ``veryHidden``."""
    charts = {cs.title for cs in getattr(wb, "chartsheets", ())}
    if not charts:
        return []
    targets = part_rels(package, "xl/workbook.xml", "chartsheet")
    try:
        book = safe_xml(package.read("xl/workbook.xml"))
    except Exception:  # noqa: BLE001 - no workbook part where it is usually kept: no chart sheets read
        return []
    out = []
    for sheet in book.iter(f"{_SML}sheet"):
        name, rid = sheet.get("name") or "", sheet.get(_RID) or ""
        if rid in targets and name in charts:  # the state as the workbook writes it (openpyxl's is "visible")
            blocks = [lines for drawing in part_rels(package, targets[rid], "drawing").values()
                      for lines in drawing_blocks(package, drawing)]
            out.append((name, sheet.get("state") or "visible", blocks))
    return out


def extract_xlsx(data: bytes, name: str, *, limits: Limits | None = None) -> Document:
    """XLSX bytes -> :class:`rag.types.Document`, one section per non-empty visible worksheet (see the module docstring).

    Hidden and very hidden sheets, hidden rows and columns and hidden cells are left out and reported
    (:mod:`rag.ingest.office.office_hidden`). Raises ``ExtractionError(name, reason)`` when openpyxl cannot read the
    file (``damaged XLSX (...)``) or every sheet is empty; :class:`rag.errors.LimitExceeded` past the ZIP, row
    or cell limits (issue 26).
    """
    import openpyxl  # imported here so `python -m rag --help` stays fast

    limits = resolve(limits)
    check_zip(data, name, limits)
    budget, hidden = RowBudget(name, limits), Hidden("cells")
    b = CanonicalBuilder()
    repairs: list[str] = []
    try:
        body = transitional(data)[0]  # Strict too
        for attempt in range(MAX_REPAIRS + 1):
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # openpyxl prints "0 is out of range" first
                    wb = openpyxl.load_workbook(io.BytesIO(body), read_only=True, data_only=True)
                break
            except (KeyError, IndexError) as e:  # a part named in another case, or declared and absent, or no
                mended = repaired(body, e) if attempt < MAX_REPAIRS else None  # cell style formats: mend, read again
                if mended is None:
                    raise
                body, what = mended
                repairs.append(what)
        package = zipfile.ZipFile(io.BytesIO(body))  # drawings: openpyxl's read-only mode does not read them
        notes = cell_comments(package)
    except Exception as e:  # noqa: BLE001 - zip, XML and openpyxl errors all mean the same to the user
        raise ExtractionError(name, f"damaged XLSX ({type(e).__name__}: {str(e)[:120]})") from e
    hidden_sheets, uncomputed = [], [0]
    try:
        title = (wb.properties.title or "").strip() if wb.properties else ""
        written, captions = 0, []
        for ws in wb.worksheets:
            if getattr(ws, "sheet_state", "visible") in ("hidden", "veryHidden"):
                hidden_sheets.append(ws.title)
                continue
            rows, merges = _sheet_rows(wb, ws, budget, hidden, uncomputed)
            drawn = _drawings(package, ws)
            wrote = write_sheet(b, ws.title, rows, heading=True, budget=budget, merges=merges, captions=captions)
            if not wrote and drawn:
                b.heading(1, ws.title)
            for lines in drawn:  # issue 37: charts' titles and labels, text boxes
                b.lines([(line, None) for line in lines])
            written += wrote or bool(drawn)
        for sheet_name, state, drawn in _chart_sheets(package, wb):
            if state in ("hidden", "veryHidden"):
                hidden_sheets.append(sheet_name)
            elif drawn:
                b.heading(1, sheet_name)
                for lines in drawn:
                    b.lines([(line, None) for line in lines])
                written += 1
    except ExtractionError:
        raise
    except Exception as e:  # noqa: BLE001
        raise ExtractionError(name, f"damaged XLSX ({type(e).__name__}: {str(e)[:120]})") from e
    finally:
        wb.close()
        package.close()
    warnings = workbook_warnings(name, "XLSX", written, hidden_sheets, hidden)
    text = b.text()
    title = title if title and agrees(title, text) else (captions[0] if captions and len(captions[0]) <= 200 else "")
    warnings += [f"read after a repair: {', '.join(repairs)}"] if repairs else []
    warnings += comments_warning(notes) + uncomputed_warning(uncomputed[0])
    return b.document(data, name, MediaType.XLSX.value, title=title or file_stem(name), extractor="xlsx",
                      warnings=tuple(warnings))


def uncomputed_warning(n: int) -> list[str]:
    """The warning for ``n`` formula cells a workbook (XLSX or ODS) stores no result for (``[]`` when none): a
    program that writes formulas without computing them (openpyxl, odfdo, report generators) leaves them for the
    spreadsheet application to compute on opening; we do not evaluate formulas, so they read as empty."""
    return [f"not read: {n} formula cell(s) have no stored result (the program that saved the file did not compute "
            "them; open and save it in a spreadsheet program to read them)"] if n else []


def comments_warning(notes: int) -> list[str]:
    """The warning for ``notes`` cell comments a workbook holds (none when 0), shared by the XLSX and XLS readers."""
    return [f"not read: {notes} cell comment(s) shown over their cells; comments are notes about the cells, "
            "not their contents"] if notes else []


def workbook_warnings(name: str, label: str, written: int, hidden_sheets: list[str], hidden: Hidden) -> list[str]:
    """A workbook's warnings (its hidden sheets, then its hidden cells by reason), after the refusal of one whose
    visible sheets held nothing: ``ExtractionError(name, "every (visible) sheet of this XLSX is empty")``. Shared
    by the XLSX and the XLS readers (``label``)."""
    if not written:
        raise ExtractionError(name, f"every visible sheet of this {label} is empty" if hidden_sheets
                              else f"every sheet of this {label} is empty")
    return hidden_sheets_warning(hidden_sheets) + ([hidden.warning()] if hidden.total else [])


def hidden_sheets_warning(names: list[str]) -> list[str]:
    """The warning naming the hidden sheets left out (none when ``names`` is empty): XLSX, XLS and ODS."""
    return [f"hidden sheets left out: {', '.join(names)}; never indexed or read by the model"] if names else []


def sniff_dialect(text: str) -> type[csv.Dialect] | csv.Dialect:
    """The CSV dialect of ``text`` (delimiter among :data:`CSV_DELIMITERS`), ``csv.excel`` when unsure."""
    try:
        return csv.Sniffer().sniff(text[:20000], delimiters=CSV_DELIMITERS)
    except csv.Error:
        return csv.excel


def looks_like_csv(text: str, *, named_csv: bool = False) -> bool:
    """Whether decoded ``text`` is a delimited table: its first records (up to 50) mostly share one field
    count of at least 2. A file named ``.csv``/``.tsv`` needs 1 such record, others 3 (plain prose with
    commas has varying counts)."""
    dialect = sniff_dialect(text)
    try:
        records = []
        for rec in csv.reader(io.StringIO(text[:200000]), dialect):
            if any(cell.strip() for cell in rec):
                records.append(len(rec))
            if len(records) >= 50:
                break
    except csv.Error:
        return False
    if not records:
        return False
    width = max(set(records), key=records.count)
    agree = sum(1 for n in records if n == width)
    return width >= 2 and agree >= (1 if named_csv else 3) and agree >= 0.9 * len(records)


def extract_csv(data: bytes, name: str, text: str, *, warnings: tuple[str, ...] = (),
                limits: Limits | None = None) -> Document:
    """CSV text (already decoded from ``data``) -> :class:`rag.types.Document`, one sheet without a heading.

    Row numbers count the file's records from 1 (RFC 7111), the header
    included, blank records too. Raises ``ExtractionError(name, reason)`` for a
    malformed file or one without any cell; :class:`rag.errors.LimitExceeded`
    past ``max_sheet_rows`` / ``max_sheet_cells`` (counted as rows are read).
    """
    b = CanonicalBuilder()
    budget = RowBudget(name, resolve(limits))
    rows = []
    try:
        for number, record in enumerate(csv.reader(io.StringIO(text, newline=""), sniff_dialect(text)), start=1):
            if any(cell.strip() for cell in record):  # blank records keep their number, not a row
                budget.row(len(record))
                rows.append((number, record))
    except csv.Error as e:
        raise ExtractionError(name, f"malformed CSV ({e})") from e
    if not write_sheet(b, "", rows, heading=False, budget=budget, split=False):  # a CSV file is one table
        raise ExtractionError(name, "empty CSV (no cell holds text)")
    return b.document(data, name, MediaType.CSV.value, title=file_stem(name), extractor="csv", warnings=warnings)
