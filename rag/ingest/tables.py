"""Ruled tables of a PDF page as Markdown rows (stage 1, PDF branch; issue 13, item 5).

Lines sorted by height read a table's multi-line cell before the single-line cells of its row, and a
bold column could be pulled to the front; a chunk boundary could fall inside a row. Here a page whose
vector drawings hold a grid (:func:`grid_box`: crossing horizontal and vertical rules, cheap to test) is
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


def grid_box(page) -> tuple[float, float, float, float] | None:
    """The bounding box (points) of the rules that could make a ruled table, or ``None`` when the page's
    drawings hold no grid: 3+ horizontal and 2+ vertical rules (drawn lines or thin rectangles, 15 pt
    or longer) where each vertical crosses 2+ horizontals, or 4+ cell boxes in 2+ rows and 2+ columns.
    Figure frames, fraction bars and underlines alone are no grid. Cheap (``get_cdrawings``), so every
    page is tested and only grid pages pay for ``find_tables`` (clipped to this box)."""
    try:
        drawings = page.get_cdrawings()
    except Exception:  # noqa: BLE001
        return None
    horiz, vert, boxes = [], [], []
    for d in drawings:
        for item in d.get("items", ()):
            if item[0] == "l":
                (x0, y0), (x1, y1) = item[1], item[2]
            elif item[0] == "re":
                x0, y0, x1, y1 = item[1]
            else:
                continue
            x0, x1 = sorted((x0, x1))
            y0, y1 = sorted((y0, y1))
            w, h = x1 - x0, y1 - y0
            if h <= _THIN and w >= _MIN_RULE:
                horiz.append((x0, y0, x1, y1))
            elif w <= _THIN and h >= _MIN_RULE:
                vert.append((x0, y0, x1, y1))
            elif item[0] == "re" and w >= _MIN_RULE and h >= 6:
                boxes.append((x0, y0, x1, y1))
    crossing = [v for v in vert if sum(h[0] - 2 <= v[0] <= h[2] + 2 and v[1] - 2 <= h[1] <= v[3] + 2
                                       for h in horiz) >= 2]
    rules = horiz + crossing if len(horiz) >= 3 and len(crossing) >= 2 else []
    if not rules and len(boxes) >= 4 and len({round(b[0]) for b in boxes}) >= 2 and len({round(b[1]) for b in boxes}) >= 2:
        rules = boxes
    if not rules:
        return None
    return (min(r[0] for r in rules), min(r[1] for r in rules), max(r[2] for r in rules), max(r[3] for r in rules))


def has_grid(page) -> bool:
    """Whether :func:`grid_box` finds a grid on ``page``."""
    return grid_box(page) is not None


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
    box = grid_box(page) if lines else None
    if box is None:
        return lines, []
    try:
        clip = (box[0] - 2, box[1] - 2, box[2] + 2, box[3] + 2)
        found = page.find_tables(clip=clip, use_layout=False).tables
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
