"""Ruled tables of a PDF page as Markdown rows (stage 1, PDF branch; issue 13, item 5).

Lines sorted by height read a table's multi-line cell before the single-line cells of its row, and a
bold column could be pulled to the front; a chunk boundary could fall inside a row. Here a page whose
vector drawings hold a grid (:func:`grid_boxes`: crossing horizontal and vertical rules, cheap to test) is
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

from rag.ingest.pdf.layout import Line
from rag.text import line_joiner

#: A rule is a drawn line (or a rectangle this thin, points) at least this long (points).
_THIN = 2.0
_MIN_RULE = 15.0
#: Share (0..1) of a slide's height at the top and at the bottom where its headline and footline bars sit.
SLIDE_BAND = 0.12


def grid_boxes(page) -> list[tuple[float, float, float, float]]:
    """Bounding boxes (points) of the groups of touching rules that could make a ruled table: 3+
    horizontal and 2+ vertical rules (drawn lines or thin rectangles, 15 pt or longer) where each
    vertical crosses 2+ horizontals, or 4+ cell boxes in 2+ rows and 2+ columns. Figure frames,
    fraction bars, page rules and underlines alone are no grid. Cheap (``get_cdrawings``), so every
    page is tested and only grids pay for ``find_tables`` (clipped to each box).

    On a slide-shaped page (landscape, 1.2:1 or wider) the coloured bars of a deck's headline and footline
    (boxes that start in the top :data:`SLIDE_BAND` or end in the bottom one: Beamer's Warsaw and Madrid
    themes draw them as touching boxes in rows and columns) are page furniture, never a table's cells
    (issue 28: every slide of a Beamer deck became a pipe table holding its navigation and footer)."""
    try:
        drawings = page.get_cdrawings()
        r = page.rect
        band = SLIDE_BAND * r.height if r.width >= 1.2 * r.height else 0.0
    except Exception:  # noqa: BLE001
        return []
    horiz, vert, boxes = _rules_and_boxes(drawings, r, band)
    boxes_out = []
    for group in _groups(horiz + vert + boxes):
        if _is_grid(group, horiz, vert, boxes):
            boxes_out.append((min(r[0] for r in group), min(r[1] for r in group),
                              max(r[2] for r in group), max(r[3] for r in group)))
    return boxes_out


def _rules_and_boxes(drawings: list[dict], r, band: float) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """The horizontal rules, the vertical rules and the boxes among a page's drawn lines and rectangles
    (``r`` the page's rectangle; a box that starts or ends within ``band`` of its top or bottom is a slide's
    bar, left out)."""
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
                if band and (y0 < r.y0 + band or y1 > r.y1 - band) and h < 2 * band:
                    continue  # a slide's headline or footline bar
                boxes.append((x0, y0, x1, y1))
    return horiz, vert, boxes


def _is_grid(group: list[tuple], horiz: list[tuple], vert: list[tuple], boxes: list[tuple]) -> bool:
    """3+ horizontal rules with 2+ verticals each crossing 2+ of them, or 4+ boxes in 2+ rows and columns."""
    gh = [r for r in group if r in horiz]
    gv = [r for r in group if r in vert]
    gb = [r for r in group if r in boxes]
    crossing = [v for v in gv if sum(h[0] - 2 <= v[0] <= h[2] + 2 and v[1] - 2 <= h[1] <= v[3] + 2
                                     for h in gh) >= 2]
    ok = len(gh) >= 3 and len(crossing) >= 2
    return ok or (len(gb) >= 4 and len({round(x[0]) for x in gb}) >= 2 and len({round(x[1]) for x in gb}) >= 2)


def _groups(rules: list[tuple], limit: int = 600) -> list[list[tuple]]:
    """Rules that touch one another (boxes 2 pt apart or less), transitively: one group per figure or
    table. Over ``limit`` rules (a chart's grid lines) the page is one group."""
    if len(rules) > limit:
        return [rules]
    parent = list(range(len(rules)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(rules):
        for j in range(i + 1, len(rules)):
            b = rules[j]
            if a[0] - 2 <= b[2] and b[0] - 2 <= a[2] and a[1] - 2 <= b[3] and b[1] - 2 <= a[3]:
                parent[find(i)] = find(j)
    out: dict[int, list[tuple]] = {}
    for i, r in enumerate(rules):
        out.setdefault(find(i), []).append(r)
    return list(out.values())


def _text_grid(box, lines: list[Line]) -> bool:
    """Whether 4+ text lines lie inside ``box`` on 2+ rows and in 2+ columns (a plot's frame holds
    almost no text; a table's grid is full of it)."""
    x0, y0, x1, y1 = box
    inside = [ln for ln in lines if x0 <= (ln.x0 + ln.x1) / 2 <= x1 and y0 <= (ln.y0 + ln.y1) / 2 <= y1]
    return (len(inside) >= 4 and len({round(ln.y0 / 4) for ln in inside}) >= 2
            and len({round(ln.x0 / 8) for ln in inside}) >= 2)


#: A "table" is prose over a drawn grid when this share (0..1) of its text lines or more each run across
#: :data:`OVERRUN_CELLS` cells of their row or more (a form's line that starts in one column and runs into the next is
#: still a table's: the DOI grant award's item description).
OVERRUN_SHARE = 0.3
OVERRUN_CELLS = 3


def _prose_over_grid(table, lines: list[Line]) -> bool:
    """Whether ``table`` (a PyMuPDF table) is a decorative grid drawn behind running text: a real table's lines stay
    in their cells, prose runs across the grid's cells (a Scholastic/NIDA newsletter's squared band behind two
    columns of text read as tables of 67 columns, the columns interleaved row by row; a new user's walk,
    2026-12-07)."""
    x0, y0, x1, y1 = table.bbox
    cells = [c for row in table.rows for c in row.cells if c is not None]
    inside = [ln for ln in lines if x0 <= (ln.x0 + ln.x1) / 2 <= x1 and y0 <= (ln.y0 + ln.y1) / 2 <= y1]
    if not cells or len(inside) < 4:
        return False
    over = 0
    for ln in inside:
        cy = (ln.y0 + ln.y1) / 2
        crossed = sum(1 for c in cells if c[1] <= cy <= c[3] and min(c[2], ln.x1) - max(c[0], ln.x0) >= 2.0)
        over += crossed >= OVERRUN_CELLS
    return over >= OVERRUN_SHARE * len(inside)


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
    out = ""
    for ln in lines:  # wrapped Chinese or Japanese joins without a space (rag.text.line_joiner)
        text = " ".join(ln.text.split())
        out = out + line_joiner(out, text) + text if out and text else out or text
    return out.replace("|", "\\|")


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
    found = []
    for box in grid_boxes(page) if lines else ():
        if not _text_grid(box, lines):
            continue  # a figure's frame and grid lines: no table text inside
        try:
            clip = (box[0] - 2, box[1] - 2, box[2] + 2, box[3] + 2)
            found += page.find_tables(clip=clip, use_layout=False).tables
        except Exception:  # noqa: BLE001 - table detection is an improvement, never a reason to fail
            continue
    used: set[int] = set()
    out: list[Line] = []
    for i, t in enumerate(found):
        if _prose_over_grid(t, lines):
            continue
        taken = set(used)
        rows = [r for row in t.rows for r in split_rows([_cell_lines(c, lines, taken) for c in row.cells])]
        md = table_markdown(rows)
        if md.count("\n") < 2 or sum(bool(c) for r in rows for c in r) < 3:
            continue  # a header alone, or one cell of text in a box (a flyer's frame), is no table: its lines stay
        used = taken
        x0, y0, x1, y1 = t.bbox
        size = min((ln.size for ln in lines), default=10.0)
        out.append(Line(md, x0, y0, x1, y1, size, False, block_base + i, page_h, kind="table"))
    if not out:
        return lines, []
    kept_ids = {id(ln) for ln in lines} - used
    return [ln for ln in lines if id(ln) in kept_ids], out
