"""An HTML table as a grid of rows (the HTML reader's tables, :mod:`rag.ingest.web.html`).

:func:`table_grid` reads a ``<table>``'s own rows (not a nested table's) into rows of cell texts in which every
cell keeps the columns it covers: a cell spanning columns (``colspan``) leaves its others empty, one spanning rows
(``rowspan``) keeps its column in the rows below, repeating its text there when short (a row label such as
"Week 4", so each row can be read alone; empty when long), so the cells after it stay under their own header
(pandoc's ``html-reader.html``, a new user's walk, 2026-12-07: the "5" of a row under a rowspan cell read in the
first column). Spans are read at most :data:`MAX_COLSPAN` / :data:`MAX_ROWSPAN` far.

:func:`nested_cell_text` reads a cell holding a table of its own as its words, then that table's rows as
"Name: Launchable, Value: 0x0200" (each row under the inner table's header row, when it has one:
:func:`_header_row`; else "Launchable, 0x0200"), rows apart by "; " (before, the
inner table's words ran together, "Name Value Meaning CopyPrevention 0x0040 ...", and the 0.5B's "The Launchable
flag is set to one" was shown as supported: calibre's plucker.html, a new user's walk, 2026-12-07).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

#: A cell's ``colspan`` / ``rowspan`` read at most this far (a hostile page's colspan="100000" builds no huge row).
MAX_COLSPAN = 100
MAX_ROWSPAN = 1000
#: A row is read at most this many columns wide, spans included (many cells of colspan 100 made no huge row).
MAX_COLUMNS = 200
#: A cell spanning rows has its text repeated in the rows below when it is at most this long (characters): a row
#: label ("Week 4") each row needs to be read alone; a longer text is written once (as DOCX:
#: :data:`rag.ingest.office.wordml.MAX_REPEATED_CELL`).
MAX_REPEATED_CELL = 80
#: Tables inside tables are read this many deep as rows; deeper ones as their words.
MAX_NESTED = 3


def _span(cell, name: str, most: int) -> int:
    """A cell's ``colspan`` or ``rowspan``: 1 when absent or not a number, at most ``most``."""
    value = (cell.get(name) or "1").strip()
    return min(int(value), most) if value.isdigit() and int(value) >= 1 else 1


def _closest_table(el):
    p = el.getparent()
    while p is not None and p.tag != "table":
        p = p.getparent()
    return p


def table_grid(table, text: Callable[[object], str]) -> list[list[str]]:
    """The rows with any text of lxml element ``table``, each a list of cell texts (``text(cell)`` for a ``td`` or
    ``th``; ``""`` where a span above or to the left covers the column)."""
    rows: list[list[str]] = []
    below: dict[int, int] = {}  # column -> rows still covered by a rowspan above
    label: dict[int, str] = {}  # column -> the short text of the rowspan cell covering it, repeated below

    def covered() -> None:
        while below.get(len(cells), 0) > 0:  # a cell of a row above reaches down here: keep its column
            below[len(cells)] -= 1
            cells.append(label.get(len(cells), ""))

    group = None
    for tr in table.iter("tr"):
        if _closest_table(tr) is not table:
            continue
        if tr.getparent() is not group:  # a rowspan ends with its row group (thead, tbody, tfoot), as browsers draw it
            group = tr.getparent()
            below.clear()
            label.clear()
        cells: list[str] = []
        for cell in tr:
            if not (isinstance(cell.tag, str) and cell.tag.lower() in ("td", "th")):
                continue
            covered()
            if len(cells) >= MAX_COLUMNS:
                break
            across, down = _span(cell, "colspan", MAX_COLSPAN), _span(cell, "rowspan", MAX_ROWSPAN)
            across = min(across, MAX_COLUMNS - len(cells))
            own = text(cell)
            for k in range(across):
                if down > 1:
                    below[len(cells)] = down - 1
                    label[len(cells)] = own if k == 0 and len(own) <= MAX_REPEATED_CELL else ""
                cells.append(own if k == 0 else "")
        covered()
        if any(cells):
            rows.append(cells)
    return rows


#: Elements that make a cell a page region: many blocks of long text.
_BLOCK_TAGS = frozenset({"p", "div", "ul", "ol", "table", "pre", "blockquote", "dl", "article", "section", "h1", "h2",
                         "h3", "h4", "h5", "h6"})
#: A cell holding at least this many characters in at least :data:`LAYOUT_BLOCKS` blocks, and at least
#: :data:`LAYOUT_SHARE` of its table's text, is a page region.
LAYOUT_CHARS = 2000
LAYOUT_BLOCKS = 3
LAYOUT_SHARE = 0.5


def cells_of(table) -> list:
    """The ``td`` / ``th`` cells of ``table``'s own rows (not a nested table's), in document order."""
    return [cell for tr in table.iter("tr") if _closest_table(tr) is table
            for cell in tr if isinstance(cell.tag, str) and cell.tag.lower() in ("td", "th")]


def lays_out(table) -> bool:
    """Whether ``table`` lays out the page rather than holding data (WCAG's layout tables): it says so
    (``role="presentation"`` or ``"none"``), or one of its own cells is a page region: at least :data:`LAYOUT_CHARS`
    characters in :data:`LAYOUT_BLOCKS` blocks or more, and at least :data:`LAYOUT_SHARE` of the table's text. Such a
    table is read as blocks, cell by cell. Before, LWN's article page (a table of navigation beside the article) was
    one 25,424-character cell: no headings, no paragraphs, every citation "¶ 1, row 1" (a new user's walk,
    2026-12-07). A pricing table with headings in its header cells, and release notes of long cells row after row,
    stay tables (a review of the first version, 2026-12-07)."""
    if (table.get("role") or "").strip().lower() in ("presentation", "none"):
        return True
    total = len(table.text_content())
    for cell in cells_of(table):
        size = len(cell.text_content())
        if size < LAYOUT_CHARS or size < LAYOUT_SHARE * total:
            continue
        if sum(isinstance(el.tag, str) and el.tag.lower() in _BLOCK_TAGS for el in cell.iter()) >= LAYOUT_BLOCKS:
            return True
    return False


def nested_cell_text(cell, words: Callable[[object], str], depth: int = 0) -> str:
    """The text of table cell ``cell`` (lxml ``td``/``th``; ``words(el)`` an element's inline text): its own words,
    then each table inside it (not inside a deeper one) as rows "label: value, ...", rows joined by "; " (module
    doc); :data:`MAX_NESTED` tables deep, below that their words."""
    inner = [t for t in cell.iter("table") if t is not cell and _closest_table(t) is _closest_table(cell) and
             _cell_of(t) is cell]
    if not inner or depth >= MAX_NESTED:
        return words(cell)
    bare = copy.deepcopy(cell)
    for t in list(bare.iter("table")):
        if t.getparent() is not None and _cell_of(t) is bare:
            t.getparent().remove(t)  # its tail (text after the table) is dropped with it: kept below
    parts = [words(bare)]
    for t in inner:
        rows = table_grid(t, lambda c: " ".join(nested_cell_text(c, words, depth + 1).split()))
        head, body = (rows[0], rows[1:]) if len(rows) > 1 and _header_row(t) else ([], rows)
        parts.append("; ".join(", ".join(f"{h}: {v}" if h and v else v or "" for h, v in
                                         zip(head + [""] * (len(r) - len(head)), r) if v) for r in body))
        if t.tail and t.tail.strip():
            parts.append(t.tail)
    return " ".join(p for p in parts if p and p.strip())


def _header_row(table) -> bool:
    """Whether ``table``'s first row is a header: in a ``thead``, all ``th``, or every cell with text all bold
    (``<b>``/``<strong>``, as calibre's plucker.html writes its header). A first row of data ("Name | Bob Smith")
    is no header: its cells would label the rows under them wrongly (a review, 2026-12-07)."""
    first = next((tr for tr in table.iter("tr") if _closest_table(tr) is table), None)
    if first is None:
        return False
    if (first.getparent().tag or "").lower() == "thead":
        return True
    cells = [c for c in first if isinstance(c.tag, str) and c.tag.lower() in ("td", "th")]
    if cells and all(c.tag.lower() == "th" for c in cells):
        return True
    texts = [c for c in cells if c.text_content().strip()]
    return bool(texts) and all(
        " ".join(b.text_content() for b in c.iter("b", "strong")).split() == c.text_content().split() for c in texts)


def _cell_of(el):
    """The nearest ``td``/``th`` above ``el``."""
    p = el.getparent()
    while p is not None and not (isinstance(p.tag, str) and p.tag.lower() in ("td", "th")):
        p = p.getparent()
    return p
