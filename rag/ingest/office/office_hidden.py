"""Text an Office file holds but no reader sees (issue 26): the rules, per format, and what was left out.

Document text is data, and text a reader never sees is never evidence (issue 14 for PDF, issue 26 for the
rest): it is removed where the reader reads runs, cells or shapes, before anything reaches the canonical text,
so neither the index, the model, the key passage nor the claim check ever sees it. What was left out is
counted by reason (:class:`Hidden`) and reported on the document as a warning ("hidden text left out: 12
runs (4 hidden, 6 white on white, 2 under 2 pt)").

Colours: a colour is *white* when every channel is at least :data:`WHITE` (0..255); white text counts as hidden
only when what lies under it is white too (no shading, highlight or fill of another colour; a white page or
slide background). Sizes: text under :data:`MIN_VISIBLE_PT` points is hidden (the PDF rule,
:mod:`rag.ingest.pdf.hidden`).

* DOCX (:func:`strip_hidden_runs`): runs with ``w:vanish`` (directly, through their character style or the
  paragraph's style chain, or the document defaults), white runs on an unshaded white page, runs under 2 pt.
* PPTX (:func:`slide_hidden`, :func:`shape_off_slide`, :func:`run_hidden`): hidden slides (``show="0"``),
  shapes wholly outside the slide, runs in a white (or the background's) colour on an unfilled shape over a
  white background, runs under 2 pt. Speaker notes stay (see ``docs/security.md``).
* XLSX (:func:`cell_hidden`): hidden and very hidden sheets and hidden rows and columns are skipped by the
  sheet reader; cells in a white font on no (or a white) fill, under 2 pt, or with the number format ``;;;``
  (which displays nothing) are left out.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

#: A colour channel at or above this (0..255) counts as white (as in :mod:`rag.ingest.pdf.hidden`).
WHITE = 242
#: Text under this size (points) is hidden.
MIN_VISIBLE_PT = 2.0
#: Characters of hidden text one document keeps for its coverage audit (:attr:`Hidden.texts`).
MAX_KEPT_CHARS = 2_000_000

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_WHITE_NAMES = {"white", "bg1", "lt1", "background1", "light1"}


@dataclass
class Hidden:
    """What one document's reader left out as hidden: ``counts`` per reason, in ``unit`` (runs, cells, ...);
    ``texts`` what the pieces said, when the reader keeps it (:meth:`keep`; HTML, EPUB, Markdown), for the
    coverage audit: text a reader reported hidden, with its reason, is not counted as missed (issue 37)."""

    unit: str = "runs"
    counts: Counter = field(default_factory=Counter)
    texts: list[str] = field(default_factory=list)

    def keep(self, text: str) -> None:
        """Keep the text of one piece left out (at most :data:`MAX_KEPT_CHARS` in all)."""
        text = " ".join(text.split())
        if text and sum(map(len, self.texts)) + len(text) <= MAX_KEPT_CHARS:
            self.texts.append(text)

    def merge(self, other: Hidden) -> None:
        """Add ``other``'s counts and texts to these."""
        for why, n in other.counts.items():
            self.add(why, n)
        for text in other.texts:
            self.keep(text)

    def add(self, why: str, n: int = 1) -> None:
        """Count ``n`` pieces left out for reason ``why``."""
        if n:
            self.counts[why] += n

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def warning(self) -> str | None:
        """The document's warning (``None`` when nothing was hidden)."""
        if not self.total:
            return None
        why = ", ".join(f"{n} {reason}" for reason, n in self.counts.most_common())
        return f"hidden text left out: {self.total} {self.unit} ({why}); never indexed or read by the model"


def is_white(value: str | None) -> bool:
    """Whether a colour (hex ``RRGGBB`` / ``AARRGGBB``, or a name: ``white``, ``bg1``, ``background1``) is white."""
    if not value:
        return False
    v = value.strip().lstrip("#").lower()
    if v in _WHITE_NAMES:
        return True
    if len(v) == 8:
        v = v[2:]
    if len(v) != 6:
        return False
    try:
        channels = [int(v[i:i + 2], 16) for i in (0, 2, 4)]
    except ValueError:
        return False
    return all(c >= WHITE for c in channels)


def is_fill(value: str | None) -> bool:
    """Whether a background colour value paints something other than white (``auto``/``none``/white do not)."""
    if not value:
        return False
    v = value.strip().lower()
    return v not in ("auto", "none", "clear", "transparent") and not is_white(v)


# --------------------------------------------------------------------------- DOCX


class _DocxStyles:
    """Run properties through python-docx's styles part: ``vanish``, colour and size of a style chain."""

    def __init__(self, doc) -> None:
        self.by_id: dict[str, object] = {}
        self.defaults = None
        try:
            root = doc.styles.element
        except Exception:  # noqa: BLE001 - a document without a styles part
            return
        for st in root.findall(f"{_W}style"):
            self.by_id[st.get(f"{_W}styleId")] = st
        self.defaults = root.find(f"{_W}docDefaults/{_W}rPrDefault/{_W}rPr")

    def chain(self, style_id: str | None):
        """The ``w:rPr`` elements of style ``style_id`` and the styles it is based on, nearest first."""
        seen = 0
        while style_id and style_id in self.by_id and seen < 20:
            st = self.by_id[style_id]
            rpr = st.find(f"{_W}rPr")
            if rpr is not None:
                yield rpr
            based = st.find(f"{_W}basedOn")
            style_id = based.get(f"{_W}val") if based is not None else None
            seen += 1


def _on(el) -> bool:
    """A ``w:vanish``-like toggle: present and not ``w:val="0|false|off"``."""
    return el is not None and (el.get(f"{_W}val") or "true").lower() not in ("0", "false", "off")


def _first(rprs, tag: str):
    for rpr in rprs:
        el = rpr.find(f"{_W}{tag}")
        if el is not None:
            return el
    return None


def _docx_run_reason(run, para_style: str | None, styles: _DocxStyles, page_dark: bool) -> str | None:
    rpr = run.find(f"{_W}rPr")
    rstyle = rpr.find(f"{_W}rStyle") if rpr is not None else None
    chain = ([rpr] if rpr is not None else []) + list(styles.chain(rstyle.get(f"{_W}val") if rstyle is not None else None))
    chain += list(styles.chain(para_style)) + ([styles.defaults] if styles.defaults is not None else [])
    if _on(_first(chain, "vanish")) or _on(_first(chain, "specVanish")):
        return "hidden (w:vanish)"
    sz = _first(chain, "sz")
    try:
        if sz is not None and int(sz.get(f"{_W}val")) / 2 < MIN_VISIBLE_PT:
            return "under 2 pt"
    except (TypeError, ValueError):
        pass
    color = _first(chain, "color")
    if color is not None and (is_white(color.get(f"{_W}val")) or is_white(color.get(f"{_W}themeColor"))) \
            and not page_dark and not _shaded(run, chain):
        return "white on white"
    return None


def _shaded(run, chain) -> bool:
    """Whether something under the run is painted: run shading or highlight, paragraph or table-cell shading."""
    hl = _first(chain, "highlight")
    if hl is not None and (hl.get(f"{_W}val") or "none").lower() not in ("none", "white"):
        return True
    shd = _first(chain, "shd")
    if shd is not None and is_fill(shd.get(f"{_W}fill")):
        return True
    node = run.getparent()
    while node is not None:
        tag = node.tag
        if tag == f"{_W}p":
            ppr = node.find(f"{_W}pPr/{_W}shd")
            if ppr is not None and is_fill(ppr.get(f"{_W}fill")):
                return True
        elif tag == f"{_W}tc":
            tc = node.find(f"{_W}tcPr/{_W}shd")
            if tc is not None and is_fill(tc.get(f"{_W}fill")):
                return True
        node = node.getparent()
    return False


def strip_hidden_runs(doc, stories=()) -> Hidden:
    """Remove the hidden runs (rules in the module doc) from python-docx ``doc``'s body and from the XML roots
    ``stories`` (footnotes, endnotes, headers, footers: issue 37), in place; returns what was removed. Runs
    inside hyperlinks, fields, content controls and tables are covered; the paragraphs stay (emptied ones are
    skipped by the reader)."""
    hidden = Hidden("runs")
    styles = _DocxStyles(doc)
    bg = doc.element.find(f"{_W}background")
    page_dark = bg is not None and is_fill(bg.get(f"{_W}color"))
    for p in [p for root in (doc.element.body, *stories) for p in root.iter(f"{_W}p")]:
        pstyle_el = p.find(f"{_W}pPr/{_W}pStyle")
        pstyle = pstyle_el.get(f"{_W}val") if pstyle_el is not None else None
        for run in list(p.iter(f"{_W}r")):
            if not "".join(t.text or "" for t in run.iter(f"{_W}t")).strip():
                continue
            why = _docx_run_reason(run, pstyle, styles, page_dark)
            if why:
                hidden.add(why)
                run.getparent().remove(run)
    return hidden


# --------------------------------------------------------------------------- PPTX


def slide_hidden(slide) -> bool:
    """A slide hidden from the show (``<p:sld show="0">``): PowerPoint skips it when presenting."""
    return (slide._element.get("show") or "1").lower() in ("0", "false")


def shape_off_slide(shape, width: int, height: int) -> bool:
    """Whether ``shape`` lies wholly outside the ``width`` x ``height`` slide (EMU): nobody sees it in the show."""
    left, top = shape.left, shape.top
    if left is None or top is None:
        return False
    w, h = shape.width or 0, shape.height or 0
    return left >= width or top >= height or left + w <= 0 or top + h <= 0


def _solid(el, colors: "ThemeColors | None" = None) -> str | None:
    """The colour of an ``a:solidFill`` (or ``a:fillRef``) element: ``srgbClr`` hex, a ``schemeClr`` resolved
    through the theme when ``colors`` is given (else its name), a ``prstClr`` name; else ``None``."""
    if el is None:
        return None
    for tag in ("srgbClr", "schemeClr", "prstClr", "sysClr"):
        c = el.find(f"{_A}{tag}")
        if c is not None:
            if tag == "schemeClr" and colors is not None:
                return colors.resolve(c.get("val"))
            return c.get("lastClr") if tag == "sysClr" else c.get("val")
    return None


class ThemeColors:
    """A slide master's scheme colours (issue 37): its colour map (``p:clrMap``: ``bg1`` -> ``lt1`` ...) and its
    theme's colour scheme (``a:clrScheme``: ``lt1`` -> ``FFFFFF``), so ``schemeClr`` fills and text colours
    are judged as drawn. ``master`` a python-pptx slide master (``None``: names stay names)."""

    def __init__(self, master=None) -> None:
        self.map: dict[str, str] = {}
        self.scheme: dict[str, str] = {}
        if master is None:
            return
        cmap = master._element.find(f"{_P}clrMap")
        if cmap is not None:
            self.map = dict(cmap.attrib)
        try:
            from pptx.opc.constants import RELATIONSHIP_TYPE as RT

            from rag.ingest.office.ooxml import safe_xml

            theme = safe_xml(master.part.part_related_by(RT.THEME).blob)
        except Exception:  # noqa: BLE001 - no theme, or an unreadable one: names stay names
            return
        scheme = next(theme.iter(f"{_A}clrScheme"), None)
        for el in (scheme if scheme is not None else ()):
            name = el.tag.rsplit("}", 1)[-1]
            value = _solid(el)
            if value:
                self.scheme[name] = value

    def resolve(self, name: str | None) -> str | None:
        """``RRGGBB`` of scheme colour ``name`` (``bg1``, ``accent2`` ...), else the name itself (``phClr``: None)."""
        if not name or name == "phClr":
            return None
        mapped = self.map.get(name, name)
        return self.scheme.get(mapped, name)


def slide_background_white(slide, colors: ThemeColors | None = None) -> bool:
    """Whether the slide's background (its own, else its layout's, else its master's) is white or unset.

    A picture, gradient or pattern background counts as not white (white text may show on it); scheme
    colours are resolved through ``colors``.
    """
    for part in (slide, getattr(slide, "slide_layout", None), getattr(getattr(slide, "slide_layout", None),
                                                                       "slide_master", None)):
        if part is None:
            continue
        bg = part._element.find(f"{_P}cSld/{_P}bg")
        if bg is None:
            continue
        pr = bg.find(f"{_P}bgPr")
        if pr is not None:
            fill = pr.find(f"{_A}solidFill")
            return fill is not None and (is_white(_solid(fill, colors)) or _solid(fill, colors) is None)
        ref = bg.find(f"{_P}bgRef")
        if ref is not None:
            color = _solid(ref, colors)
            return color is None or is_white(color)
        return False
    return True


def shape_filled(shape, colors: ThemeColors | None = None) -> bool:
    """Whether the shape paints a fill other than white: its own (solid, gradient, picture, pattern, its
    group's) or, without one, its style's (``p:style/a:fillRef`` with an index > 0, the theme's fill in a
    scheme colour: issue 37, 267 visible labels on theme-filled shapes were called white on white)."""
    el = shape._element
    sppr = el.find(f"{_P}spPr")
    if sppr is not None:
        if sppr.find(f"{_A}noFill") is not None:
            return False
        solid = sppr.find(f"{_A}solidFill")
        if solid is not None:
            return not is_white(_solid(solid, colors))
        if any(sppr.find(f"{_A}{tag}") is not None for tag in ("gradFill", "blipFill", "pattFill", "grpFill")):
            return True
    ref = el.find(f"{_P}style/{_A}fillRef")
    if ref is not None and (ref.get("idx") or "0") not in ("0", "1000"):
        color = _solid(ref, colors)
        return color is None or not is_white(color)
    return False


def _box(shape) -> tuple[int, int, int, int] | None:
    if shape.left is None or shape.top is None:
        return None
    return shape.left, shape.top, shape.left + (shape.width or 0), shape.top + (shape.height or 0)


def painted_boxes(shapes, colors: ThemeColors | None = None) -> list[tuple[int, tuple[int, int, int, int]]]:
    """``(z, box)`` of the top-level shapes of a slide that paint something under what lies above them: a
    picture, a filled shape (:func:`shape_filled`), a group holding one; ``z`` their index in drawing order,
    ``box`` ``(left, top, right, bottom)`` in EMU (issue 37: white text on a dark rectangle is seen)."""
    out = []
    for z, shape in enumerate(shapes):
        box = _box(shape)
        if box is None:
            continue
        members = list(shape.shapes) if getattr(shape, "shape_type", None) is not None and int(shape.shape_type) == 6 \
            else [shape]
        if any(int(m.shape_type or 0) == 13 or m._element.tag.endswith("}sp") and shape_filled(m, colors)
               for m in members):
            out.append((z, box))
    return out


def painted_under(shape, z: int, painted: list[tuple[int, tuple[int, int, int, int]]]) -> bool:
    """Whether a shape drawn before index ``z`` in ``painted`` covers the centre of ``shape``'s box."""
    box = _box(shape)
    if box is None:
        return False
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return any(pz < z and b[0] <= cx <= b[2] and b[1] <= cy <= b[3] for pz, b in painted)


def run_hidden(run, white_ground: bool, colors: ThemeColors | None = None) -> str | None:
    """Why a python-pptx run (or an ``a:r`` / ``a:fld`` element) is hidden (``"white on white"``, ``"under 2
    pt"``), or ``None``. ``white_ground``: nothing but white lies under the run (an unfilled shape on a white
    background); scheme colours are resolved through ``colors``.
    """
    r = getattr(run, "_r", run)
    rpr = r.find(f"{_A}rPr")
    if rpr is None:
        return None
    try:
        if rpr.get("sz") is not None and int(rpr.get("sz")) / 100 < MIN_VISIBLE_PT:
            return "under 2 pt"
    except ValueError:
        pass
    fill = rpr.find(f"{_A}solidFill")
    if fill is not None and white_ground and is_white(_solid(fill, colors)):
        return "white on white"
    if rpr.find(f"{_A}noFill") is not None:
        return "no fill (invisible)"
    return None


# --------------------------------------------------------------------------- XLSX


def _xlsx_color_white(color) -> bool:
    if color is None:
        return False
    kind = getattr(color, "type", None)
    if kind == "rgb":
        return is_white(str(color.rgb or ""))
    if kind == "theme":
        return color.theme == 0 and (color.tint or 0) >= -0.05  # theme 0 is lt1, the sheet's background
    if kind == "indexed":
        return color.indexed in (1, 9)  # the two white entries of the legacy palette
    return False


def cell_hidden(cell) -> str | None:
    """Why an openpyxl (read-only) cell with a value is hidden, or ``None``: white font on no or a white fill,
    font under 2 pt, or a number format of empty sections (``;;;``, shows nothing)."""
    try:
        fmt = cell.number_format or ""
        if fmt and not fmt.replace(";", "").strip():
            return "number format ;;;"
        font = cell.font
        if font is not None and font.sz is not None and float(font.sz) < MIN_VISIBLE_PT:
            return "under 2 pt"
        if font is not None and _xlsx_color_white(font.color):
            fill = cell.fill
            painted = (fill is not None and getattr(fill, "fill_type", None) not in (None, "none")
                       and not _xlsx_color_white(getattr(fill, "fgColor", None)))
            if not painted:
                return "white font"
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        return None
    return None
