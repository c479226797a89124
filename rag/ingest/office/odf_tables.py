"""OpenDocument tables as rows of cell texts (moved out of :mod:`rag.ingest.office.odf` when it reached 500 lines).

* :func:`sheet_rows` - an ODS sheet or ODT table (``table:table``, OpenDocument 1.3 part 3, section 9.1) as
  ``(row number, cell texts)``: repeated rows and cells (``table:number-rows-repeated``,
  ``table:number-columns-repeated``) advance the position and are written out only when they hold text, at most
  :data:`MAX_REPEAT` times;
* :func:`table_lines` - an ODT table as Markdown lines, a label merged down over rows
  (``table:number-rows-spanned``, the rows below holding ``table:covered-table-cell``) repeated in the rows it covers
  when short, as DOCX's ``w:vMerge`` is (:data:`rag.ingest.office.wordml.MAX_REPEATED_CELL`);
* :func:`cell_text` - a cell's paragraphs, list items and inner tables, one per line.
"""

from __future__ import annotations

from rag.ingest.canonical import markdown_table, table_cell
from rag.ingest.limits import RowBudget
from rag.ingest.office.odf_inline import inline_text
from rag.ingest.office.odf_numbers import attr as _attr
from rag.ingest.office.office_hidden import Hidden
from rag.ingest.office.wordml import MAX_REPEATED_CELL

#: A repeated row or cell is written out at most this many times (a styled band repeated to the sheet's end).
MAX_REPEAT = 200
#: Tables inside a cell are read this many deep.
MAX_DEPTH = 2
#: A row is read at most this many columns wide (a cell repeated across a sheet's 16,384 columns holds no more).
MAX_COLUMNS = 1024


def _repeat(el, name: str) -> int:
    value = _attr(el, name)
    return int(value) if value.isdigit() else 1


def cell_text(cell, depth: int = 0) -> str:
    """A table cell's text, one line per paragraph: its paragraphs and headings, the items of the lists in it (issue
    37: a standard's requirement tables hold their text in lists, and lost it), and the cells of a table inside it
    in reading order, as DOCX reads one, cell by cell :data:`MAX_DEPTH` tables deep and paragraph by paragraph below
    (before, their rows were read as rows of the outer table, under its header)."""
    lines = []
    for child in cell.children:
        if child.tag in ("text:p", "text:h"):
            lines.append(inline_text(child))
        elif child.tag == "text:list":
            lines += [inline_text(p) for p in child.get_elements("descendant::text:p")]
        elif child.tag == "table:table" and depth < MAX_DEPTH:
            lines += [t for row in table_rows(child) for c in row.children if c.tag == "table:table-cell"
                      for t in [cell_text(c, depth + 1)] if t.strip()]
        elif child.tag == "table:table":  # deeper still: its paragraphs in order, none lost
            lines += [t for p in child.get_elements("descendant::text:p") for t in [inline_text(p)] if t.strip()]
    return "\n".join(lines)


def table_rows(table):
    """The rows of ``table`` in order, inside its header, body and row groups (OpenDocument 1.3 part 3, 9.1.2-9.1.4),
    never those of a table inside one of its cells."""
    for child in table.children:
        if child.tag == "table:table-row":
            yield child
        elif child.tag in ("table:table-header-rows", "table:table-rows", "table:table-row-group"):
            yield from table_rows(child)


def hidden_columns(table) -> set[int]:
    """0-based indexes of the columns of ``table`` a reader does not see (``table:table-column`` with
    ``table:visibility`` "collapse" or "filter", repeats counted; at most :data:`MAX_COLUMNS`)."""
    out: set[int] = set()
    col = 0
    for el in table.get_elements("descendant::table:table-column"):
        n = _repeat(el, "table:number-columns-repeated")
        if _attr(el, "table:visibility") in ("collapse", "filter"):
            out.update(range(col, min(col + n, MAX_COLUMNS)))
        col += n
        if col >= MAX_COLUMNS:
            break
    return out


def sheet_rows(table, budget: RowBudget | None = None, *, repeat_spanned: bool = False,
               uncomputed: list[int] | None = None, hidden: Hidden | None = None) -> list[tuple[int, list[str]]]:
    """``(1-based row number, cell texts)`` of a ``table:table``: repeated rows and cells advance the position, and
    are written out (at most :data:`MAX_REPEAT` times) only when they hold text. With ``repeat_spanned`` (ODT
    tables), a cell spanning rows down (``table:number-rows-spanned``) gives its text to the covered cells under it
    when it has at most :data:`rag.ingest.office.wordml.MAX_REPEATED_CELL` characters: a weekly schedule's week or a
    requirement's chapter, merged down its rows, stays with each row. Rows of a table inside a cell are read by
    :func:`cell_text`, not here. ``uncomputed[0]`` counts the formula cells (``table:formula``) with no value type and
    no paragraph, not even an empty one: no stored result (:func:`rag.ingest.office.sheets.uncomputed_warning`).
    With ``hidden``, rows a reader does not see (``table:visibility`` "collapse", or "filter": filtered out) and
    columns (:func:`hidden_columns`) are left out, their cells with text counted and kept in ``hidden`` (for the
    warning and the coverage audit), as the XLSX reader leaves them out."""
    rows: list[tuple[int, list[str]]] = []
    number = 0
    carried: dict[int, tuple[str, int]] = {}  # column -> (text, rows it still covers)
    gone = hidden_columns(table) if hidden is not None else set()
    for row in table_rows(table):
        times = _repeat(row, "table:number-rows-repeated")
        if hidden is not None and _attr(row, "table:visibility") in ("collapse", "filter"):
            texts = [t for c in row.children if c.tag == "table:table-cell" for t in [cell_text(c)] if t.strip()]
            hidden.add("in hidden rows", min(times, MAX_REPEAT) * len(texts))
            for t in texts:
                hidden.keep(t)
            number += times
            continue
        cells: list[str] = []
        col = 0
        for cell in row.children:
            if cell.tag not in ("table:table-cell", "table:covered-table-cell") or col >= MAX_COLUMNS:
                continue
            span = _repeat(cell, "table:number-columns-repeated")
            if cell.tag == "table:covered-table-cell" and col in carried:
                text = carried[col][0]
            else:
                text = cell_text(cell)
                if (uncomputed is not None and not text.strip() and _attr(cell, "table:formula")
                        and not _attr(cell, "office:value-type") and not cell.children):  # LibreOffice writes an
                    # empty result ('=IFNA(...; "")') as an empty paragraph with no value type: computed
                    uncomputed[0] += 1
            if repeat_spanned and cell.tag == "table:table-cell":
                down = _repeat(cell, "table:number-rows-spanned")
                own = text.strip()
                if down > 1 and own and len(own) <= MAX_REPEATED_CELL:
                    carried[col] = (text, down)
                else:
                    carried.pop(col, None)
            if text.strip():
                times_across = min(span, MAX_REPEAT, MAX_COLUMNS - col)
                # a label carried down fills its own column, not the covered columns repeated beside it
                more = [""] * (times_across - 1) if cell.tag == "table:covered-table-cell" else [text] * (times_across - 1)
                cells += [""] * (col - len(cells)) + [text] + more
            col += span
        carried = {c: (t, left - times) for c, (t, left) in carried.items() if left - times > 0}
        if gone and hidden is not None:
            for k in sorted(gone):
                if k < len(cells) and cells[k].strip():
                    hidden.add("in hidden columns")
                    hidden.keep(cells[k])
            cells = [c for k, c in enumerate(cells) if k not in gone]
        if any(c.strip() for c in cells):
            for k in range(min(times, MAX_REPEAT)):
                if budget is not None:
                    budget.row(len(cells))
                rows.append((number + k + 1, list(cells)))
        number += times
    return rows


def table_lines(table) -> list[str]:
    """An ODT table as Markdown lines: the first row with text is the header; labels merged down repeated
    (:func:`sheet_rows` with ``repeat_spanned``)."""
    return markdown_table([[table_cell(c) for c in cells] for _, cells in sheet_rows(table, repeat_spanned=True)])
