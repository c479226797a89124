"""Text a PDF draws but no reader sees, and the OCR layer of a searchable scan, told apart (issue 14 item 5;
issue 26 item 3; issue 28 item 2).

A span of a page's ``get_text("dict")`` is **hidden** (removed, never indexed or read by the model) when

* it is **invisible** (text render mode 3, or drawn fully transparent: PyMuPDF's ``alpha`` 0) and it does
  not lie on a page image with ink under it (below): text put where a reader can never see it;
* it is **painted over**: a filled shape drawn after it (later in the content stream, so on top) covers at
  least :data:`COVERED_SHARE` of its box with an opaque fill (fill opacity >= :data:`OPAQUE`); the order
  and the boxes come from MuPDF's own list of what it paints (``page.get_bboxlog()``, whose positions are
  the ``seqno`` of ``get_drawings``), so a shape drawn *before* the text (a table cell's shading, a
  slide's coloured box) never hides it; a small picture pasted over text hides it the same way; a fill's box
  is cut to the clipping paths around it, a highlight annotation's fill hides nothing, and the span's place in
  that order is its own run's (:meth:`_Paint._last_drawn`);
* its font is under :data:`MIN_VISIBLE_PT` points and its box under :data:`TINY_BOX_PT` (1-pt text a reader cannot
  make out);
* it is white (every channel >= :data:`WHITE`) and the page under it is white too: the page is rendered
  and the span's box must be at least :data:`BLANK_SHARE` near-white pixels; white text on a dark slide
  background stays.

**The OCR layer of a searchable scan is kept.** A scanner or an OCR program (a copier's "scan to
searchable PDF", OCRmyPDF, Acrobat) puts the page image down and lays the recognised text over it in
render mode 3, invisible, so that it can be searched and selected; some put the text under the image
instead. Such text is what the page shows: an invisible span is kept when an image covers at least
:data:`ON_IMAGE_SHARE` of its box **and** the rendered page has ink under it (at least
:data:`INK_SHARE` of the box's pixels differ from the box's median by :data:`INK_CONTRAST` or more: the
scanned letters), and a visible span under an image covering half the page or more is kept too. Invisible
text laid over a blank part of an image (a background picture) still has nothing under it a reader could
see, and is hidden. The limit of the rule: invisible text laid over a photograph has "ink" under it and is
kept; telling it from a scan's layer would take OCR of every such page.

Hidden spans are removed from the page dictionary before any line is built, and their text is handed to
the coverage audit as removed on purpose (:mod:`rag.ingest.pdf.audit`), so the audit does not count them as
lost. Spans kept as an OCR layer are counted (:attr:`HiddenReport.ocr_layer`) so the document can say so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rag.ingest.pdf.boxindex import BoxIndex

#: Spans under this font size (points) are hidden.
MIN_VISIBLE_PT = 2.0
#: ... unless its glyphs' box is this tall or taller (points): a Type3 font set at 0.12 pt with a font matrix
#: that draws its glyphs at 10 pt (old TeX bitmap fonts) is text a reader reads (olmOCR's large_prompt_hint3.pdf:
#: a whole paper but its header left out as "under 2 pt", a walk, 2026-12-07).
TINY_BOX_PT = 3.0
#: A colour channel at or above this (0..255) counts as white.
WHITE = 242
#: Resolution of the render that tells white-on-white from white-on-dark and finds ink, dots per inch.
RENDER_DPI = 72
#: Share of the span box's pixels that must be near-white for white text to count as hidden.
BLANK_SHARE = 0.9
#: Share (0..1) of a span's box a later opaque fill (or picture) must cover to hide it.
COVERED_SHARE = 0.85
#: Share (0..1) of a span's box that its text drawn again, piece by piece, must cover for that later drawing to be
#: the one a reader sees (IBM's Redbook redp5110: every callout's text drawn whole, then its box, then glyph by
#: glyph again; "ENFORCED FOR ALL ACCESS" was left out as painted over, a new user's walk, 2026-12-07).
REDRAWN_SHARE = 0.7
#: An image's box is cut to a clipping path holding at least this share (0..1) of it (:meth:`_Paint.clipped`); at most
#: :data:`MAX_CLIPS` clipping paths set between two painted items are kept for that.
IMAGE_CLIP_SHARE = 0.8
MAX_CLIPS = 2000
#: Fill opacity (0..1) from which a shape drawn over text hides it.
OPAQUE = 0.9
#: A paint-log entry of text at most this many times a span's box is the span's own run (:meth:`_Paint._last_drawn`).
TIGHT = 4.0
#: Share (0..1) of an invisible span's box that images must cover for it to count as lying on a page image.
ON_IMAGE_SHARE = 0.5
#: Share (0..1) of the page an image drawn over text must cover for the text under it to be a scan's layer.
PAGE_IMAGE_SHARE = 0.5
#: Ink under a span: this share (0..1) of its pixels differ from the box's median grey by INK_CONTRAST or more.
INK_SHARE = 0.03
INK_CONTRAST = 48


@dataclass(frozen=True)
class HiddenSpan:
    """One removed span: its ``text``, ``bbox`` (points, page space) and ``why`` (``invisible``,
    ``painted over``, ``tiny`` or ``white on white``)."""

    text: str
    bbox: tuple[float, float, float, float]
    why: str


@dataclass
class HiddenReport:
    """What :func:`remove_hidden` did on one page: ``removed`` spans, and ``ocr_layer`` the characters of
    invisible text kept as a scan's OCR layer (0 on born-digital pages)."""

    removed: list[HiddenSpan] = field(default_factory=list)
    ocr_layer: int = 0

    def __iter__(self):  # a report reads as its removed spans (the former return value)
        return iter(self.removed)

    def __len__(self) -> int:
        return len(self.removed)

    def __bool__(self) -> bool:
        return bool(self.removed)


def _is_white(color: int) -> bool:
    return all(((color >> s) & 0xFF) >= WHITE for s in (16, 8, 0))


def _box_pixels(pix, bbox, scale: float):
    """The rendered pixels (RGB, uint8) over ``bbox`` (points); ``None`` when the box is off the page."""
    x0, y0, x1, y1 = (int(v * scale) for v in bbox)
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(max(x1, x0 + 1), pix.width), min(max(y1, y0 + 1), pix.height)
    if x0 >= pix.width or y0 >= pix.height:
        return None
    return np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)[y0:y1, x0:x1, :3]


def _blank_under(pix, bbox, scale: float) -> bool:
    """True when the rendered page is near-white over ``bbox`` (points) in at least :data:`BLANK_SHARE`."""
    img = _box_pixels(pix, bbox, scale)
    if img is None:
        return True  # off the page: nobody sees it
    return bool((img.min(axis=2) >= WHITE).mean() >= BLANK_SHARE)


def ink_under(pix, bbox, scale: float) -> bool:
    """Whether the rendered page shows marks over ``bbox`` (points): at least :data:`INK_SHARE` of the
    pixels differ from the box's median grey by :data:`INK_CONTRAST` levels (of 255) or more."""
    img = _box_pixels(pix, bbox, scale)
    if img is None or img.size == 0:
        return False
    grey = img.mean(axis=2)
    return bool((np.abs(grey - np.median(grey)) >= INK_CONTRAST).mean() >= INK_SHARE)


def _area(b) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _inter(a, b) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _covered_share(box, rects) -> float:
    """Share (0..1) of ``box`` covered by ``rects`` (overlaps between the rects counted once at most)."""
    area = _area(box)
    if not area:
        return 0.0
    return min(1.0, sum(_inter(box, r) for r in rects) / area)


#: Outlines of one clip read at most (points of all its paths); a clip drawn with more is read as its box.
MAX_OUTLINE_POINTS = 4096


def _outlines(items) -> list[list[tuple[float, float]]] | None:
    """The closed paths of a clip's drawing ``items`` as point lists (a rectangle or quad its corners, a run of line
    and curve segments its end points, a new path where a segment starts away from the last one's end); ``None``
    when the clip is one rectangle (its box is its shape) or cannot be read."""
    paths: list[list[tuple[float, float]]] = []
    end = None
    try:
        if len(items) == 1 and items[0][0] == "re":
            return None
        for it in items:
            kind = it[0]
            if kind == "re":
                x0, y0, x1, y1 = (float(v) for v in tuple(it[1])[:4])
                paths.append([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])
                end = None
            elif kind == "qu":
                q = it[1]
                paths.append([(float(p[0]), float(p[1])) for p in (q.ul, q.ur, q.lr, q.ll)])
                end = None
            elif kind in ("l", "c"):
                start, stop = (float(it[1][0]), float(it[1][1])), (float(it[-1][0]), float(it[-1][1]))
                if end is None or abs(start[0] - end[0]) > 0.01 or abs(start[1] - end[1]) > 0.01:
                    paths.append([start])
                paths[-1].append(stop)
                end = stop
            else:
                return None
    except (TypeError, ValueError, IndexError, AttributeError):
        return None
    return paths if paths and sum(map(len, paths)) <= MAX_OUTLINE_POINTS else None


def _inside(point: tuple[float, float], paths: list[list[tuple[float, float]]]) -> bool:
    """Whether ``point`` lies inside ``paths`` by the even-odd rule (a ray crosses their edges an odd number of
    times): a cell's padding drawn round the notch its text sits in, or two bars, do not hold the text's centre."""
    x, y = point
    odd = False
    for path in paths:
        for (x0, y0), (x1, y1) in zip(path, path[1:] + path[:1]):
            if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
                odd = not odd
    return odd


class _Paint:
    """What MuPDF paints on a page, in order (``get_bboxlog``): text boxes, fills and images with their
    positions, read once per page and only as far as a question needs."""

    def __init__(self, page) -> None:
        self.page = page
        try:
            log = page.get_bboxlog()
        except Exception:  # noqa: BLE001 - a page MuPDF cannot run: nothing is judged painted over
            log = []
        self.text = [(i, r) for i, (kind, r) in enumerate(log) if kind.endswith("-text")]
        self.fills = [(i, r) for i, (kind, r) in enumerate(log) if kind == "fill-path" and _area(r) > 4]
        self.images = [(i, r) for i, (kind, r) in enumerate(log) if kind == "fill-image"]
        rect = tuple(page.rect)
        self._top, self._bottom = rect[1], rect[3]
        self._near_text = BoxIndex(self.text, self._top, self._bottom)
        self._near_fills = BoxIndex(self.fills, self._top, self._bottom)
        self._near_images = BoxIndex(self.images, self._top, self._bottom)
        self._near_chars: BoxIndex | None = None
        self._opaque: dict[int, tuple] | None = None
        self._clips: list[tuple[int, float, list[tuple]]] | None = None
        #: position -> the outlines of the clips of another shape than their box that a fill is painted through
        #: (Word pads each table cell with white through a clip drawn round the notch its text sits in, or two bars:
        #: its headers were "painted over", olmOCR's instructions_and_schematics.pdf, a walk, 2026-12-07)
        self._shapes: dict[int, list] = {}

    def opaque_fills(self) -> dict[int, tuple]:
        """``{position: painted box}`` of the fills with an opaque fill colour (``get_drawings(extended=True)``,
        asked once, only when needed), each box cut to the clipping paths around it: a figure's white
        background drawn as a page-high rectangle but clipped to the figure covers only the figure
        (tracemonkey.pdf's caption under it, 314 characters, was "painted over"; a new user's walk, 2026-12-07)."""
        if self._opaque is None:
            out: dict[int, tuple] = {}
            clips: list[tuple] = []  # (level, scissor, outlines or None) of the clipping paths open around an item
            gaps: list[tuple[int, float, list[tuple]]] = []  # clipping paths set between two painted items
            last, pending = -1, []
            try:
                marks = _highlights(self.page)
                for d in self.page.get_drawings(extended=True):
                    level = d.get("level") or 0
                    while clips and clips[-1][0] >= level:
                        clips.pop()
                    if d.get("type") == "clip":
                        if d.get("scissor") is not None:
                            # an even-odd clip of two paths or more is a frame (a ring, two thin bars), not its box:
                            # Word paints each table cell's white padding through one, and the headers were "painted
                            # over" (olmOCR's instructions_and_schematics.pdf, a walk, 2026-12-07)
                            clips.append((level, tuple(d["scissor"]), _outlines(d.get("items") or ())))
                            pending.append(tuple(d["scissor"]))
                        continue
                    if "seqno" in d:
                        gaps.append((last, d["seqno"], pending[:MAX_CLIPS]))
                        last, pending = d["seqno"], []
                    if d.get("fill") is None or (d.get("fill_opacity") or 0) < OPAQUE or "seqno" not in d:
                        continue
                    box = tuple(d["rect"])
                    if any(_within(box, m) for m in marks):
                        continue  # a highlighter's mark: drawn over the words, multiplied, never hiding them
                    for _, c, _shape in clips:
                        box = (max(box[0], c[0]), max(box[1], c[1]), min(box[2], c[2]), min(box[3], c[3]))
                    out[d["seqno"]] = box
                    shapes = [shape for _, _, shape in clips if shape is not None]
                    if shapes:  # painted through a clip of another shape than its box: only inside it
                        self._shapes[d["seqno"]] = shapes
                gaps.append((last, float("inf"), pending[:MAX_CLIPS]))
            except Exception:  # noqa: BLE001
                out, gaps = {}, []
            self._opaque, self._clips = out, gaps
        return self._opaque

    def _last_drawn(self, bbox, text: str = "") -> int | None:
        """The position in the paint log of the last of the span's own text at ``bbox``: the last entry covering
        half of its box that is no larger than :data:`TIGHT` times it (the span's own run, as before); when only
        larger entries cover it (a text object of a whole column, logged once before the figures drawn over the
        page), the last of the pieces lying mostly inside its box (MuPDF logs such a span's glyph runs apart);
        else the last large entry. Before, a span logged in three pieces under one column-wide entry at position
        0 took every fill drawn after 0 for one painted over it (tracemonkey.pdf's figure labels; a new user's
        walk, 2026-12-07). A first version that stopped a span's runs at the first fill covering it hid a table's
        rows, whose cells are shaded between the runs (TAMReview.pdf): each span keeps its own entries."""
        area = max(_area(bbox), 1e-6)
        near = self._near_text.near(bbox)
        covering = [(i, r) for i, r in near if _inter(bbox, r) >= 0.5 * area]
        tight = [i for i, r in covering if _area(r) <= TIGHT * area]
        inside = [(i, r) for i, r in near if _inter(bbox, r) >= 0.5 * max(_area(r), 1e-6)]
        if len(tight) > 1 and text.strip():  # other words stamped over it are no run of its own ("REDACTED")
            own = [i for i in tight if self.spells(i, bbox, text)]
            tight = own or tight
        if tight:
            last = max(tight)
            # drawn again after it, glyph by glyph (an outline or shadow effect): the last full drawing counts
            again = [(i, r) for i, r in inside if i > last]
            if again and _covered_share(bbox, [r for _, r in again]) >= REDRAWN_SHARE and \
                    self.drawn_again(bbox, text, last):
                return max(i for i, _ in again)
            return last
        if inside:
            return max(i for i, _ in inside)
        return max(i for i, _ in covering) if covering else None

    def _chars(self) -> BoxIndex:
        """The page's drawn characters, ``((seqno, character), box)`` in drawing order, filed by strips."""
        if self._near_chars is None:
            try:
                trace = [((t["seqno"], chr(c[0])), c[3]) for t in self.page.get_texttrace() for c in t["chars"]]
            except Exception:  # noqa: BLE001 - no trace: nothing counts as drawn again
                trace = []
            self._near_chars = BoxIndex(trace, self._top, self._bottom)
        return self._near_chars

    def spells(self, i: int, bbox, text: str) -> bool:
        """Whether the text drawn at position ``i`` spells ``text`` (spaces aside) inside ``bbox``."""
        return self._spelled(bbox, text, lambda seq: seq == i)

    def drawn_again(self, bbox, text: str, after: int) -> bool:
        """Whether the characters drawn inside ``bbox`` after position ``after`` spell ``text`` again (spaces aside:
        ``get_texttrace``, asked once per page, only when needed): a redraw of the same words, not other text
        stamped on a box over them ("REDACTED" over a password: a review, 2026-12-07)."""
        return self._spelled(bbox, text, lambda seq: seq > after)

    def _spelled(self, bbox, text: str, drawn) -> bool:
        """Whether the characters inside ``bbox`` drawn at the positions ``drawn(seq)`` accepts hold ``text``."""
        want = "".join(text.split())
        got = "".join(ch for (seq, ch), box in self._chars().near(bbox)
                      if drawn(seq) and not ch.isspace() and _inter(bbox, box) >= 0.5 * max(_area(box), 1e-6))
        return bool(want) and want in got

    def painted_over(self, bbox, text: str = "") -> bool:
        """Whether the text drawn at ``bbox`` (``text``, when known) is covered by an opaque fill or a small picture
        painted later."""
        last = self._last_drawn(bbox, text)
        if last is None:
            return False
        page_area = max(_area(tuple(self.page.rect)), 1.0)
        fills = [(i, r) for i, r in self._near_fills.near(bbox) if i > last and _inter(bbox, r) > 0]
        if fills and _covered_share(bbox, [r for _, r in fills]) >= COVERED_SHARE:
            opaque = self.opaque_fills()
            centre = ((bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2)
            solid = [opaque[i] for i, _ in fills if i in opaque and _inter(bbox, opaque[i]) > 0
                     and all(_inside(centre, shape) for shape in self._shapes.get(i, ()))]
            if _covered_share(bbox, solid) >= COVERED_SHARE:
                return True
        pictures = [(i, r) for i, r in self._near_images.near(bbox)
                    if i > last and _area(r) < PAGE_IMAGE_SHARE * page_area]
        if not pictures or _covered_share(bbox, [r for _, r in pictures]) < COVERED_SHARE:
            return False
        return _covered_share(bbox, [self.clipped(i, r) for i, r in pictures]) >= COVERED_SHARE

    def clipped(self, i: int, box) -> tuple:
        """The box of the image painted at position ``i`` cut to the tightest clipping path set just before it (after
        the last thing painted before it) that holds most (:data:`IMAGE_CLIP_SHARE`) of it: a screenshot placed a
        little larger than its frame and clipped to it (IBM's Redbook redp5110: the picture's box reached over the
        caption under it, "Figure 3-11 ...", which was left out as painted over; a new user's walk, 2026-12-07). The
        paint log gives an image's box unclipped, and no clip; a clip set for something else is never taken (a
        review, 2026-12-07: another drawing's clip let text under a picture show)."""
        if self._clips is None:
            self.opaque_fills()
        area = max(_area(box), 1e-6)
        best = box
        for c in (c for before, after, cs in self._clips or () if before < i < after for c in cs):
            cut = (max(box[0], c[0]), max(box[1], c[1]), min(box[2], c[2]), min(box[3], c[3]))
            if cut[2] > cut[0] and cut[3] > cut[1] and IMAGE_CLIP_SHARE * area <= _area(cut) < _area(best):
                best = cut
        return best

    def on_image(self, bbox) -> bool:
        """Whether images (drawn before or after) cover :data:`ON_IMAGE_SHARE` of ``bbox``."""
        return _covered_share(bbox, [r for _, r in self._near_images.near(bbox)]) >= ON_IMAGE_SHARE


def _highlights(page) -> list[tuple]:
    """The boxes of the page's highlight annotations: their appearance fills the words' box in yellow after the
    text, blended so that the words show (a grant announcement's highlighted eligibility and deadline, 355
    characters, were "painted over"; a new user's walk, 2026-12-07)."""
    import pymupdf

    try:
        return [tuple(a.rect) for a in page.annots(types=(pymupdf.PDF_ANNOT_HIGHLIGHT,))]
    except Exception:  # noqa: BLE001 - unreadable annotations: none
        return []


def _within(box, outer, slack: float = 2.0) -> bool:
    return (box[0] >= outer[0] - slack and box[1] >= outer[1] - slack and box[2] <= outer[2] + slack
            and box[3] <= outer[3] + slack)


def _spans(page_dict: dict):
    for block in page_dict.get("blocks", ()):
        for line in block.get("lines", ()):
            for span in line.get("spans", ()):
                if span.get("text", "").strip():
                    yield span


class _Render:
    """The page rendered at :data:`RENDER_DPI` (rotation applied), looked up with unrotated text boxes."""

    def __init__(self, page) -> None:
        import pymupdf

        self.scale = RENDER_DPI / 72.0
        self.pix = page.get_pixmap(matrix=pymupdf.Matrix(self.scale, self.scale), alpha=False)
        self.rot = page.rotation_matrix if page.rotation else None
        self._rect = pymupdf.Rect

    def box(self, bbox) -> tuple[float, float, float, float]:
        """``bbox`` (points, unrotated page space, as ``get_text`` gives it) in the rendering's space."""
        if self.rot is None:
            return tuple(bbox)
        return tuple(self._rect(bbox) * self.rot)

    def blank(self, bbox) -> bool:
        return _blank_under(self.pix, self.box(bbox), self.scale)

    def ink(self, bbox) -> bool:
        return ink_under(self.pix, self.box(bbox), self.scale)


def remove_hidden(page, page_dict: dict) -> HiddenReport:
    """Remove hidden spans (rules in the module doc) from ``page_dict`` (PyMuPDF's ``get_text("dict")`` of
    ``page``) in place; return what was removed, in page order, and how much invisible text was kept as a
    scan's OCR layer. Lines left without a span are removed too. Never raises for a page MuPDF can parse
    (a page that cannot be rendered keeps its white text, and its invisible text over images)."""
    paint = _Paint(page)
    report = HiddenReport()
    found, white, invisible = _by_span(page_dict, paint)
    on_image = [s for s in invisible if paint.on_image(s["bbox"])]
    kept = {id(s) for s in on_image}
    found += [(s, "invisible") for s in invisible if id(s) not in kept]
    if white or on_image:
        on_image = _by_rendering(page, white, on_image, found)
    report.ocr_layer = sum(len(s["text"].strip()) for s in on_image)
    if not found:
        return report
    cut_spans(page_dict, {id(span) for span, _ in found})
    order = {id(s): i for i, s in enumerate(_spans_all(page_dict, found))}
    found.sort(key=lambda f: order.get(id(f[0]), 0))
    report.removed = [HiddenSpan(span["text"], tuple(span["bbox"]), why) for span, why in found]
    return report


def _char_width(span: dict) -> float:
    """The span's box width per character, points (a font squeezed to 0.02 pt wide is as unreadable as 1-pt text)."""
    box = span.get("bbox") or (0.0, 0.0, 0.0, 0.0)
    return abs(box[2] - box[0]) / max(len(span.get("text", "").strip()), 1)


def _box_height(span: dict) -> float:
    box = span.get("bbox") or (0.0, 0.0, 0.0, 0.0)
    return abs(box[3] - box[1])


def _by_span(page_dict: dict, paint: _Paint) -> tuple[list[tuple[dict, str]], list[dict], list[dict]]:
    """What each span's own properties tell: the hidden ones with their reason (tiny, painted over), and the
    white and the invisible ones, which need the page's rendering and images to judge."""
    found: list[tuple[dict, str]] = []
    white, invisible = [], []
    for span in _spans(page_dict):
        if span.get("alpha", 255) == 0:
            invisible.append(span)
        elif span.get("size", 10.0) < MIN_VISIBLE_PT and (_box_height(span) < TINY_BOX_PT or _char_width(span) < 0.5):
            found.append((span, "tiny"))
        elif paint.text and paint.painted_over(span["bbox"], span.get("text", "")):
            found.append((span, "painted over"))
        elif _is_white(int(span.get("color", 0))):
            white.append(span)
    return found, white, invisible


def _by_rendering(page, white: list[dict], on_image: list[dict], found: list[tuple[dict, str]]) -> list[dict]:
    """Judge by the rendered page: white text on a blank area and invisible text over no ink are added to
    ``found``; returns the invisible spans left over images (a scan's OCR layer). A page that cannot be
    rendered keeps both."""
    try:
        render = _Render(page)
    except Exception:  # noqa: BLE001 - a page MuPDF cannot render keeps its white text and its scan layer
        return on_image
    found += [(s, "white on white") for s in white if render.blank(s["bbox"])]
    blank = [s for s in on_image if not render.ink(s["bbox"])]
    found += [(s, "invisible") for s in blank]
    gone = {id(s) for s in blank}
    return [s for s in on_image if id(s) not in gone]


def cut_spans(page_dict: dict, gone: set[int]) -> None:
    """Remove the spans whose ids are in ``gone`` from ``page_dict``, and the lines left without a span."""
    for block in page_dict.get("blocks", ()):
        if "lines" not in block:
            continue
        for line in block["lines"]:
            line["spans"] = [s for s in line["spans"] if id(s) not in gone]
        block["lines"] = [ln for ln in block["lines"] if ln["spans"]]


def _spans_all(page_dict: dict, found) -> list[dict]:
    """The removed spans in page order (top to bottom, left to right), for a stable report."""
    return sorted((s for s, _ in found), key=lambda s: (round(s["bbox"][1], 1), s["bbox"][0]))
