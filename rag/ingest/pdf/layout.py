"""Lines of a PDF page and their reading order (stage 1, PDF branch; issue 13, item 2).

:func:`page_lines` reads ``page.get_text("dict")`` into :class:`Line` records (points, y down, in the
reading frame of the page's dominant writing direction: a page whose text runs sideways is read in line
order; lines in a minority direction, e.g. a rotated axis label or an arXiv side stamp, come after the
main text, each read in its own frame, never dropped).

Reading order (:func:`order_blocks`): three candidate orders of MuPDF's text blocks are built,

* ``sort``: PyMuPDF's own ``sort=True`` order (blocks by bottom edge, then left edge);
* ``native``: the order of the content stream (right for boxes a generator wrote column by column);
* ``columns``: a recursive column cut (split at a vertical gap that narrow blocks leave free; blocks that
  span the gap cut the region into bands read top to bottom), which reads two and three columns;

and each is scored by :func:`flow_breaks`: the number of line-to-line steps that are not "the next line
below, overlapping horizontally" nor "further right on the same baseline". The order with the fewest
breaks wins; ties go to ``sort`` (PyMuPDF's order), then ``native``. So the column logic is used only
where it measurably reads more continuous text than PyMuPDF's order. ``bench extract`` prints how often
each order won.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

_LIGATURES = str.maketrans({
    "\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
    "\ufb05": "st", "\ufb06": "st", "\x00": None,
})

#: Computer Modern's "ff" ligature (OT1 code 11) comes out of MuPDF as U+21B5 when a TeX font has no ToUnicode map:
#: "e↵orts", "o↵-the-shelf" in an arXiv paper (a new user's walk, 2026-12-07). Read only in fonts named
#: after Computer Modern (``CMR10``, ``CMBX12``, ``CMTI9``, ...; any subset prefix).
_TEX_FF = str.maketrans({"↵": "ff"})


def _span_text(span: dict) -> str:
    font = span.get("font", "")
    text = span["text"]
    if "↵" in text and font.split("+")[-1].startswith("CM"):
        return text.translate(_TEX_FF)
    return text


#: Order names, in tie-break preference.
ORDERS = ("sort", "native", "columns")


@dataclass
class Line:
    """One visual line in the page's reading frame (points; y grows downwards).

    ``block`` the MuPDF block number (lines of one block form paragraphs); ``kind`` where the text came
    from: ``text`` (text layer), ``form`` (a widget's ``label: value``), ``annot`` (FreeText annotation),
    ``table`` (a Markdown table row block), ``ocr`` (read by OCR).
    """

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    size: float
    bold: bool
    block: int
    page_h: float
    sideways: bool = False
    kind: str = "text"
    mono: bool = False  # every span in a monospaced font (code, a command line): :func:`rag.ingest.pdf.pdf_text.code_text`

    @property
    def height(self) -> float:
        return max(self.y1 - self.y0, 1.0)


@dataclass
class Block:
    """Lines MuPDF grouped together, with their bounding box (reading frame)."""

    lines: list[Line] = field(default_factory=list)

    @cached_property
    def x0(self) -> float:
        return min(ln.x0 for ln in self.lines)

    @cached_property
    def x1(self) -> float:
        return max(ln.x1 for ln in self.lines)

    @cached_property
    def y0(self) -> float:
        return min(ln.y0 for ln in self.lines)

    @cached_property
    def y1(self) -> float:
        return max(ln.y1 for ln in self.lines)


def _frame(direction: tuple[float, float]):
    dx, dy = direction

    def tf(x0, y0, x1, y1):
        xs = [x * dx + y * dy for x in (x0, x1) for y in (y0, y1)]
        ys = [-x * dy + y * dx for x in (x0, x1) for y in (y0, y1)]
        return min(xs), min(ys), max(xs), max(ys)

    return tf


#: Font names of monospaced faces that do not set the font's fixed-pitch flag.
_MONO_NAMES = ("courier", "mono", "consola", "menlo", "cmtt", "sfmono", "lucidaconsole", "typewriter", "code")


def _mono(span: dict) -> bool:
    return bool(span.get("flags", 0) & 8) or any(m in span.get("font", "").lower() for m in _MONO_NAMES)


def raw_lines(page_dict: dict) -> list[tuple]:
    """``(direction, text, bbox, size, bold, block_no, mono)`` of every non-blank line of a ``get_text("dict")``;
    ``mono`` when every span with text is in a monospaced font; a vertical font's glyphs standing in rows joined into
    those rows (:func:`_vertical_font_rows`)."""
    raw, glyphs = [], []
    for b_no, block in enumerate(page_dict["blocks"]):
        for line in block.get("lines", ()):
            spans = line["spans"]
            text = "".join(_span_text(s) for s in spans).translate(_LIGATURES)
            if not text.strip() and not (line.get("wmode") == 1 and text and spans):  # a vertical font's space
                continue  # glyph is the space between the words of its row (:func:`_vertical_font_rows`)
            main_span = max(spans, key=lambda s: len(s["text"].strip()))
            size = round(main_span["size"] * 2) / 2
            bold = bool(main_span["flags"] & 16) or "Bold" in main_span["font"]
            d = (round(line["dir"][0]), round(line["dir"][1]))
            mono = all(_mono(sp) for sp in spans if sp["text"].strip())
            if line.get("wmode") == 1 and len(text) <= 2:
                glyphs.append((d, text, line["bbox"], size, bold, b_no, mono))
                continue
            if text.strip():
                raw.append((d, text, line["bbox"], size, bold, b_no, mono))
    return raw + _vertical_font_rows(glyphs)


#: Glyphs of a vertical-writing font laid out in rows (:func:`_vertical_font_rows`) from this many on a page.
MIN_ROW_GLYPHS = 8


def joined_vertical_rows(page_dict: dict) -> bool:
    """Whether :func:`raw_lines` joins a vertical font's glyphs into rows on this page (the audit then has no word
    of PyMuPDF's to compare with: its words there are single glyphs)."""
    glyphs = [((0, 1), "", tuple(line["bbox"]), 0.0, False, b, False)
              for b, block in enumerate(page_dict.get("blocks", ())) for line in block.get("lines", ())
              if line.get("wmode") == 1 and len("".join(_span_text(s) for s in line.get("spans", ()))) <= 2]
    return len(glyphs) >= MIN_ROW_GLYPHS and _vertical_font_rows(glyphs) is not glyphs


def _median_gap(glyphs: list[tuple], axis: int) -> float:
    """The median gap (points; negative when they overlap) between each glyph and the next one along ``axis`` (0:
    left to right among glyphs sharing their top, 1: top to bottom among glyphs sharing their left edge)."""
    lanes: dict[tuple[int, int], list[tuple[float, float]]] = {}
    other, size = 1 - axis, 1.0
    for g in glyphs:
        box = g[2]
        size = max(size, box[3] - box[1], box[2] - box[0])
        lanes.setdefault((g[5], round(box[other] / (0.25 * max(box[3] - box[1], 1.0)))), []).append(
            (box[axis], box[axis + 2]))
    # neighbours half a glyph apart or more: two narrow glyphs of one row share a left edge's lane
    gaps = sorted(b[0] - a[1] for lane in lanes.values() for a, b in zip(sorted(lane), sorted(lane)[1:])
                  if b[0] - a[0] >= 0.5 * (a[1] - a[0]))
    return gaps[len(gaps) // 2] if gaps else float("inf")


def _vertical_font_rows(glyphs: list[tuple]) -> list[tuple]:
    """Lines MuPDF gives one glyph each in a vertical-writing font (``wmode`` 1, direction down the page), joined
    into the rows they stand in when they stand side by side: a notice set horizontally in a vertical font was read
    column-wise and backwards, "G N I R A E H C I L B U P F O E C I T O N" (pdfbox's PDFBOX-3127 VFont file, a walk,
    2026-12-07). A row is the glyphs of one block whose boxes share their top (to a quarter of their height),
    left to right, their own spaces kept; real vertical text (glyphs one above another) is left as it is. Under
    :data:`MIN_ROW_GLYPHS` glyphs, or when few share a row, the glyphs stay lines of their own."""
    if len(glyphs) < MIN_ROW_GLYPHS:
        return glyphs
    rows: dict[tuple[int, int], list[tuple]] = {}
    for g in glyphs:
        box = g[2]
        rows.setdefault((g[5], round(box[1] / max(0.25 * (box[3] - box[1]), 0.5))), []).append(g)
    if sum(len(r) for r in rows.values() if len(r) >= 3) < 0.8 * len(glyphs):
        return glyphs  # glyphs one above another: vertical text
    across = _median_gap(glyphs, 0)
    if across > 0 or _median_gap(glyphs, 1) <= across:  # a row's glyphs touch or overlap (advance under the box)
        return glyphs  # closer above one another than side by side: columns of vertical text (a review, 2026-12-07:
        # a Japanese page drawn glyph by glyph in one block was read across its columns)
    out = []
    for row in rows.values():
        row.sort(key=lambda g: g[2][0])
        text = "".join(g[1] for g in row)
        if not text.strip():
            continue
        box = (row[0][2][0], min(g[2][1] for g in row), max(g[2][2] for g in row), max(g[2][3] for g in row))
        out.append(((1, 0), text, box, max(g[3] for g in row), all(g[4] for g in row), row[0][5],
                    all(g[6] for g in row)))
    return out


def page_lines(page, page_dict: dict | None = None) -> tuple[list[Line], list[Line], float]:
    """Lines of ``page`` as ``(main, other, frame_width)``: those in the dominant direction mapped into its
    reading frame (unordered), those in any other direction (each in its own frame, sorted), and the
    frame's width in points."""
    import pymupdf

    if page_dict is None:
        flags = pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_PRESERVE_WHITESPACE
        page_dict = page.get_text("dict", flags=flags)
    raw = raw_lines(page_dict)
    r = page.rect
    if not raw:
        return [], [], r.width
    main_dir = Counter(x[0] for x in raw).most_common(1)[0][0]
    tf_main = _frame(main_dir)
    fx0, fy0, fx1, fy1 = tf_main(r.x0, r.y0, r.x1, r.y1)
    main, other = [], []
    for d, text, bbox, size, bold, b_no, mono in raw:
        if d == main_dir:
            x0, y0, x1, y1 = tf_main(*bbox)
            main.append(Line(text.strip(), x0 - fx0, y0 - fy0, x1 - fx0, y1 - fy0, size, bold, b_no, fy1 - fy0,
                             mono=mono))
        else:
            x0, y0, x1, y1 = _frame(d)(*bbox)
            other.append(Line(text.strip(), x0, y0, x1, y1, size, bold, b_no, fy1 - fy0, True))
    return main, sorted(other, key=lambda ln: (ln.block, ln.y0, ln.x0)), fx1 - fx0


def _rtl(text: str) -> bool:
    """Whether ``text`` is mostly in a right-to-left script (Hebrew, Arabic): more such letters than Latin ones."""
    rtl = sum(1 for ch in text if "\u0590" <= ch <= "\u08ff" or "\ufb1d" <= ch <= "\ufdff" or "\ufe70" <= ch <= "\ufeff")
    return rtl > sum(1 for ch in text if ch.isascii() and ch.isalpha())


def merge_fragments(lines: list[Line]) -> list[Line]:
    """Join pieces MuPDF split off one visual line (same block, same baseline, small horizontal gap); in a right-to-
    left line the piece further right comes first, a space apart (an Arabic line's Latin words "R وPython" moved to
    its end and glued to the next word, "فعالةتعتبر": a new user's walk, 2026-12-07)."""
    lines = sorted(lines, key=lambda ln: (ln.block, round(ln.y1), ln.x0))
    groups: list[list[Line]] = []
    for ln in lines:
        prev = groups[-1][-1] if groups else None
        if (prev is not None and prev.block == ln.block and abs(prev.y1 - ln.y1) < 0.4 * min(prev.height, ln.height)
                and 0 <= ln.x0 - prev.x1 < 1.5 * max(prev.size, ln.size) and prev.kind == ln.kind):
            groups[-1].append(ln)
        else:
            groups.append([ln])
    out: list[Line] = []
    for group in groups:
        first = group[0]
        if len(group) == 1:
            out.append(first)
            continue
        if _rtl("".join(ln.text for ln in group)):  # the whole line decides (a review, 2026-12-07)
            text = " ".join(ln.text for ln in reversed(group))
        else:
            text = first.text
            for prev, ln in zip(group, group[1:]):
                text += ("" if ln.x0 - prev.x1 < 0.15 * ln.size else " ") + ln.text
        out.append(Line(text, first.x0, min(ln.y0 for ln in group), group[-1].x1, max(ln.y1 for ln in group),
                        first.size, all(ln.bold for ln in group), first.block, first.page_h, first.sideways,
                        first.kind, all(ln.mono for ln in group)))
    return out


def _prose(lines: list[Line]) -> bool:
    """Lines that read as prose: 3 or more, of 20+ characters at the median, most filling their width."""
    if len(lines) < 3:
        return False
    width = max(ln.x1 for ln in lines) - min(ln.x0 for ln in lines)
    return (statistics.median(len(ln.text) for ln in lines) >= 20
            and statistics.median(ln.x1 - ln.x0 for ln in lines) >= 0.55 * width)


def split_columns(block: Block) -> list[Block]:
    """A block whose lines fall on both sides of a vertical gap that no line crosses, both sides prose
    (:func:`_prose`), is two blocks: MuPDF sometimes puts two columns' lines in one block, interleaved.
    Table cells (short lines) are never split this way."""
    ivs = sorted(block.lines, key=lambda ln: ln.x0)
    reach = ivs[0].x1
    for i, ln in enumerate(ivs[1:], 1):
        if ln.x0 - reach >= 6:
            left, right = ivs[:i], ivs[i:]
            if _prose(left) and _prose(right):
                blocks = [Block(sorted(side, key=lambda q: (round(q.y0, 1), q.x0))) for side in (left, right)]
                return [x for b in blocks for x in split_columns(b)]
            return [block]
        reach = max(reach, ln.x1)
    return [block]


def blocks_of(lines: list[Line]) -> list[Block]:
    """Group lines by MuPDF block, in the order blocks first appear (the content stream's order);
    lines inside a block top to bottom, left to right; a block holding two prose columns is split
    (:func:`split_columns`)."""
    by: dict[int, Block] = {}
    for ln in lines:
        by.setdefault(ln.block, Block()).lines.append(ln)
    for b in by.values():
        b.lines.sort(key=lambda ln: (round(ln.y0, 1), ln.x0))
    return [x for k in sorted(by) for x in split_columns(by[k])]


# --------------------------------------------------------------------------- candidate orders


def sort_order(blocks: list[Block]) -> list[Block]:
    """PyMuPDF's ``sort=True``: blocks by bottom edge, then left edge."""
    return sorted(blocks, key=lambda b: (round(b.y1, 1), b.x0))


def _vertical_gap(blocks: list[Block], width: float) -> float | None:
    """An x where no narrow block lies, with narrow blocks on both sides: the widest such gap's middle."""
    narrow = [b for b in blocks if b.x1 - b.x0 < 0.6 * width]
    if len(narrow) < 2:
        return None
    ivs = sorted((b.x0, b.x1) for b in narrow)
    best, reach = None, ivs[0][1]
    for x0, x1 in ivs[1:]:
        if x0 - reach >= 6 and (best is None or x0 - reach > best[1] - best[0]):
            best = (reach, x0)
        reach = max(reach, x1)
    return None if best is None else (best[0] + best[1]) / 2


def column_order(blocks: list[Block], depth: int = 0) -> list[Block]:
    """Recursive column cut (see the module doc)."""
    if len(blocks) <= 1 or depth > 8:
        return sort_order(blocks)
    x_lo, x_hi = min(b.x0 for b in blocks), max(b.x1 for b in blocks)
    cut = _vertical_gap(blocks, x_hi - x_lo)
    if cut is None:
        return sort_order(blocks)
    spanners = sorted((b for b in blocks if b.x0 < cut < b.x1), key=lambda b: b.y0)
    if not spanners:
        left = [b for b in blocks if b.x1 <= cut]
        right = [b for b in blocks if b.x0 >= cut]
        return column_order(left, depth + 1) + column_order(right, depth + 1)
    out: list[Block] = []
    rest = [b for b in blocks if not (b.x0 < cut < b.x1)]
    for sp in spanners:
        above = [b for b in rest if (b.y0 + b.y1) / 2 < (sp.y0 + sp.y1) / 2]
        rest = [b for b in rest if b not in above]
        out += column_order(above, depth + 1) + [sp]
    return out + column_order(rest, depth + 1)


def flow_breaks(lines: list[Line]) -> int:
    """Steps between consecutive lines that do not continue the text: neither the next line below
    (horizontal overlap, gap under 1.5 line heights) nor further right on the same baseline."""
    breaks = 0
    for a, b in zip(lines, lines[1:]):
        overlap = min(a.x1, b.x1) - max(a.x0, b.x0)
        below = b.y0 >= a.y0 + 0.3 * a.height and b.y0 - a.y1 < 1.5 * a.height and overlap > 0
        same_row = abs(b.y1 - a.y1) < 0.5 * a.height and b.x0 >= a.x1 - 1
        breaks += not (below or same_row)
    return breaks


def order_blocks(lines: list[Line]) -> tuple[list[Line], str]:
    """The page's main lines in reading order, and the name of the order that won (module doc)."""
    blocks = blocks_of(lines)
    cands = {"sort": sort_order(blocks), "native": blocks, "columns": column_order(blocks)}
    flat = {k: [ln for b in v for ln in b.lines] for k, v in cands.items()}
    score = {k: flow_breaks(v) for k, v in flat.items()}
    best = min(ORDERS, key=lambda k: (score[k], ORDERS.index(k)))
    return flat[best], best


def paragraphs_of(lines: list[Line]) -> list[list[Line]]:
    """Group ordered lines into paragraphs: a new one at a block change (not between two monospaced lines), a kind
    change, a vertical gap,
    a jump back up (next column), a font-size change, or after a bold title line (:func:`ends_bold_title`)."""
    paras: list[list[Line]] = []
    full = full_width(lines)
    for ln in lines:
        prev = paras[-1][-1] if paras else None
        listing = prev is not None and prev.mono and ln.mono  # MuPDF cuts a listing's blocks at its indents
        if (prev is None or (ln.block != prev.block and not listing) or ln.kind != prev.kind or ln.kind == "table"
                or ln.y0 - prev.y1 > 0.6 * prev.height or ln.y0 < prev.y0 - 1 or abs(ln.size - prev.size) > 0.6
                or ends_bold_title(paras[-1], ln, full)):
            paras.append([ln])
        else:
            paras[-1].append(ln)
    return paras


def full_width(lines: list[Line]) -> float:
    """The width of a full line of the page's prose (points): the median width of its text lines of 40 or more
    characters; 0.0 when it has none."""
    widths = sorted(ln.x1 - ln.x0 for ln in lines if ln.kind == "text" and len(ln.text) >= 40)
    return widths[len(widths) // 2] if widths else 0.0


def ends_bold_title(para: list[Line], ln: Line, full: float) -> bool:
    """Whether ``para`` (the lines so far) is a bold title set in the body's own size that ``ln`` does not
    continue: one or two bold lines of at most 80 characters together, each under 60 % of a full prose line
    (``full``, :func:`full_width`: a title line stops short; a bold run-in phrase at a paragraph's start fills
    its line), then a line of regular weight. An anthology sets each story's title this way, the byline in the
    same block right under it ("The Half-Chick" / "by Anonymous ..."); read as one paragraph, the title was
    lost as a heading."""
    if ln.bold or ln.kind != "text" or full <= 0 or len(para) > 2:
        return False
    if not all(p.bold and p.kind == "text" for p in para) or sum(len(p.text) for p in para) > 80:
        return False
    return all(p.x1 - p.x0 < 0.6 * full for p in para)
