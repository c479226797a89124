"""Ruled tables of a PDF page as Markdown rows (stage 1, PDF branch; issue 13, item 5).

Lines sorted by height read a table's multi-line cell before the single-line cells of its row, and a
bold column could be pulled to the front; a chunk boundary could fall inside a row. Here a page whose
vector drawings hold a grid (:func:`has_grid`: 3+ horizontal and 2+ vertical rules, cheap to test) is
given to PyMuPDF's ``find_tables`` (line strategy, without its layout model: ``use_layout=False``, which
costs about 1.7 s a page against 90 ms); each table found becomes ONE Markdown block

    | header | cells |
    |---|---|
    | row | cells |

at the table's place in the reading order. Cell text comes from the page's own lines (the reader's
spacing and ligature rules), assigned to cells by their centres, read top to bottom inside a cell;
cells follow the columns left to right. A first row with one non-empty cell (a caption spanning the
table) is written as a line of its own above the header. Lines that fall in no cell stay ordinary text,
so nothing is lost. The chunker (:mod:`rag.ingest.chunk`) cuts tables only between rows and repeats
the header row in every chunk's embedded text.
"""

from __future__ import annotations

from rag.ingest.layout import Line

#: A rule is a drawn line (or a rectangle this thin, points) at least this long (points).
_THIN = 2.0
_MIN_RULE = 15.0


def has_grid(page) -> bool:
    """Whether the page's drawings hold enough horizontal and vertical rules to make a ruled table."""
    try:
        drawings = page.get_cdrawings()
    except Exception:  # noqa: BLE001
        return False
    horiz = vert = 0
    for d in drawings:
        for item in d.get("items", ()):
            kind = item[0]
            if kind == "l":
                (x0, y0), (x1, y1) = item[1], item[2]
                w, h = abs(x1 - x0), abs(y1 - y0)
            elif kind == "re":
                r = item[1]
                w, h = abs(r[2] - r[0]), abs(r[3] - r[1])
                if w >= _MIN_RULE and h >= _MIN_RULE:  # a cell drawn as a box: both kinds of rule
                    horiz += 2
                    vert += 2
                    continue
            else:
                continue
            if h <= _THIN and w >= _MIN_RULE:
                horiz += 1
            elif w <= _THIN and h >= _MIN_RULE:
                vert += 1
        if horiz >= 3 and vert >= 2:
            return True
    return False


def _cell_lines(cell, lines: list[Line], used: set[int]) -> list[Line]:
    if cell is None:
        return []
    x0, y0, x1, y1 = cell
    inside = [ln for ln in lines if id(ln) not in used
              and x0 - 1 <= (ln.x0 + ln.x1) / 2 <= x1 + 1 and y0 - 1 <= (ln.y0 + ln.y1) / 2 <= y1 + 1]
    for ln in inside:
        used.add(id(ln))
    return sorted(inside, key=lambda ln: (round(ln.y0, 1), ln.x0))


def _text(lines: list[Line]) -> str:
    return " ".join(" ".join(ln.text for ln in lines).replace("|", "\\|").split())


def _bands(cells: list[list[Line]]) -> list[float]:
    """Vertical centres of the text rows inside one table row (lines within half a line height share one)."""
    centres = sorted((ln.y0 + ln.y1) / 2 for c in cells for ln in c)
    bands: list[float] = []
    for y in centres:
        if not bands or y - bands[-1] > 0.5 * min(ln.height for c in cells for ln in c):
            bands.append(y)
    return bands


def split_rows(cells: list[list[Line]]) -> list[list[str]]:
    """One table row's cells (their lines) as one or more rows of cell text: when most non-empty cells
    hold lines on two or more of the row's text rows, the grid's rule skipped rows (a ruled band of five
    states, each on its own text row) and every text row becomes a table row; otherwise the row is one
    row with multi-line cells joined."""
    filled = [c for c in cells if c]
    bands = _bands(cells) if filled else []
    multi = [c for c in filled if len({min(range(len(bands)), key=lambda i: abs(bands[i] - (ln.y0 + ln.y1) / 2))
                                        for ln in c}) > 1]
    if len(bands) < 2 or len(multi) * 2 < len(filled) or len(multi) < 2:
        return [[_text(c) for c in cells]]
    rows = [[[] for _ in cells] for _ in bands]
    for j, c in enumerate(cells):
        for ln in c:
            i = min(range(len(bands)), key=lambda k: abs(bands[k] - (ln.y0 + ln.y1) / 2))
            rows[i][j].append(ln)
    return [[_text(c) for c in r] for r in rows]


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def table_markdown(rows: list[list[str]]) -> str:
    """Markdown of a table given as rows of cell strings (the first row the header); a first row with a
    single non-empty cell is a caption line above the table. Empty rows are dropped."""
    rows = [r for r in rows if any(c for c in r)]
    if not rows:
        return ""
    caption = ""
    if len(rows) > 1 and sum(bool(c) for c in rows[0]) == 1 and len(rows[0]) > 1:
        caption = next(c for c in rows[0] if c) + "\n"
        rows = rows[1:]
    n = max(len(r) for r in rows)
    rows = [r + [""] * (n - len(r)) for r in rows]
    return caption + "\n".join([_row(rows[0]), "|" + "---|" * n, *(_row(r) for r in rows[1:])])


def table_lines(page, lines: list[Line], page_h: float, block_base: int) -> tuple[list[Line], list[Line]]:
    """``(kept, tables)``: the page's lines without those now inside a table, and one ``kind="table"``
    line per table holding its Markdown (module doc). Coordinates are the page's (upright pages only)."""
    if not lines or not has_grid(page):
        return lines, []
    try:
        found = page.find_tables(use_layout=False).tables
    except Exception:  # noqa: BLE001 - table detection is an improvement, never a reason to fail
        return lines, []
    used: set[int] = set()
    out: list[Line] = []
    for i, t in enumerate(found):
        rows = [r for row in t.rows for r in split_rows([_cell_lines(c, lines, used) for c in row.cells])]
        md = table_markdown(rows)
        if md.count("\n") < 2:  # a header alone is no table: give its lines back
            continue
        x0, y0, x1, y1 = t.bbox
        size = min((ln.size for ln in lines), default=10.0)
        out.append(Line(md, x0, y0, x1, y1, size, False, block_base + i, page_h, kind="table"))
    if not out:
        return lines, []
    kept_ids = {id(ln) for ln in lines} - used
    return [ln for ln in lines if id(ln) in kept_ids], out
