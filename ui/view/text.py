"""Showing a cited passage of text-based formats (issue 17's viewer, design stage 9): pure HTML builders, no Streamlit.

* Text and Markdown: :func:`highlight_html` builds an HTML-escaped view of the canonical text with
  ``canonical[start:end]`` (0-based code points, end exclusive) wrapped in ``<mark id="cited">``;
  :func:`scrolling_document` wraps it in a small page that scrolls the mark into view.
* Issue 17's formats: :func:`render_blocks` renders the canonical text's blocks (headings, paragraphs, Markdown
  tables) with the cited range marked (DOCX, EPUB, HTML, OCR text); :func:`slide_html` one slide as a card with
  its speaker notes; :func:`sheet_html` the cited rows of a sheet with their header and A1 row numbers;
  :func:`image_region_png` the picture with the cited region boxed. In every view the first marked element has
  ``id="cited"`` and every marked element the class ``cited``.

PDF pages (locating a quote on a page, rendering, the PDF.js window, static links) are in :mod:`ui.view.pdf`.
"""

from __future__ import annotations

import html
import io
import re

from rag.types import Box, LocatorKind, Part


def highlight_html(canonical: str, start: int, end: int, *, context_chars: int | None = None) -> str:
    """HTML-escaped view of ``canonical`` with ``canonical[start:end]`` in ``<mark id="cited">``.

    Offsets are 0-based code points (end exclusive). With ``context_chars`` only
    that many characters either side are shown, elided with an ellipsis. Every
    character of the document goes through :func:`html.escape`: the result is
    safe to render as HTML whatever the file holds. Raises ``ValueError`` when
    the range is not inside the text.
    """
    if not 0 <= start <= end <= len(canonical):
        raise ValueError(f"cited range {start}:{end} is outside the text (0:{len(canonical)})")
    lo, hi = 0, len(canonical)
    if context_chars is not None:
        lo, hi = max(0, start - context_chars), min(len(canonical), end + context_chars)
    before = ("…" if lo > 0 else "") + canonical[lo:start]
    after = canonical[end:hi] + ("…" if hi < len(canonical) else "")
    style = ' style="background: #ffe066; padding: 0 1px;"' if end > start else ""
    return (
        '<div class="rag-source" style="white-space: pre-wrap; font-family: ui-monospace, monospace; '
        'font-size: 0.85rem; line-height: 1.45;">'
        f"{html.escape(before)}"
        f'<mark id="cited"{style}>'
        f"{html.escape(canonical[start:end])}</mark>"
        f"{html.escape(after)}</div>"
    )


def scrolling_document(body_html: str, *, title: str = "") -> str:
    """A complete HTML page around :func:`highlight_html` output that scrolls ``#cited`` into view on load.

    ``title`` is escaped. Meant for ``streamlit.components.v1.html`` (an iframe).
    """
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title>"
        "<style>body{margin:0.5rem;font-family:sans-serif;color:#222;}</style></head><body>"
        f"{body_html}"
        "<script>window.addEventListener('load',function(){var m=document.getElementById('cited');"
        "if(m){m.scrollIntoView({block:'center'});}});</script></body></html>"
    )


_HEADING_LINE = re.compile(r"^(#{1,6}) (.+)$")
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_VIEW_STYLE = (
    "<style>.rag-view{font-family:system-ui,sans-serif;font-size:0.95rem;line-height:1.5;color:#222}"
    ".rag-view p{white-space:pre-wrap;margin:0 0 0.7em}.rag-view h1,.rag-view h2,.rag-view h3,.rag-view h4,"
    ".rag-view h5,.rag-view h6{margin:0.9em 0 0.4em;line-height:1.25}"
    ".rag-view table{border-collapse:collapse;margin:0 0 0.8em;font-size:0.9rem}"
    ".rag-view td,.rag-view th{border:1px solid #ccc;padding:2px 6px;text-align:left;white-space:pre-wrap}"
    ".rag-view th{background:#f1f3f5}.rag-view td.rownum,.rag-view th.rownum{color:#868e96;background:#f8f9fa;"
    "text-align:right}.rag-view mark.cited{background:#ffe066;padding:0 1px}"
    ".rag-view tr.cited td{background:#ffe066}.rag-view .elided{color:#868e96}"
    ".rag-slide{border:1px solid #ced4da;border-radius:6px;box-shadow:0 2px 6px #0002;padding:1.2em 1.6em;"
    "aspect-ratio:16/9;overflow:auto;background:#fff}.rag-notes{margin-top:1em;padding:0.6em 1em;"
    "background:#f8f9fa;border-left:3px solid #adb5bd;color:#495057}</style>"
)


class _Marker:
    """Wraps the part of each piece that lies in ``[start, end)`` in ``<mark class="cited">``; the first mark
    gets ``id="cited"`` (what the view scrolls to)."""

    def __init__(self, canonical: str, start: int, end: int) -> None:
        self.text, self.start, self.end, self.first = canonical, start, end, True

    def _id(self) -> str:
        if self.first:
            self.first = False
            return ' id="cited"'
        return ""

    def span(self, a: int, b: int) -> str:
        """HTML of ``canonical[a:b]``, escaped, its overlap with the cited range marked."""
        lo, hi = max(a, self.start), min(b, self.end)
        if lo >= hi:
            return html.escape(self.text[a:b])
        return (html.escape(self.text[a:lo]) + f'<mark class="cited"{self._id()}>' + html.escape(self.text[lo:hi])
                + "</mark>" + html.escape(self.text[hi:b]))

    def row_attrs(self, a: int, b: int) -> str:
        """Attributes of a table row at ``[a, b)``: ``class="cited"`` (and the id) when it overlaps the range."""
        if max(a, self.start) < min(b, self.end) or (self.start == self.end and a <= self.start < b):
            return f' class="cited"{self._id()}'
        return ""


def _block_spans(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Blocks of ``text[lo:hi]`` separated by blank lines, as ``(start, end)`` offsets."""
    out, pos = [], lo
    for m in re.finditer(r"\n[ \t]*\n", text[lo:hi]):
        out.append((pos, lo + m.start()))
        pos = lo + m.end()
    out.append((pos, hi))
    return [(a, b) for a, b in out if text[a:b].strip()]


def _lines(text: str, a: int, b: int) -> list[tuple[int, int]]:
    out, pos = [], a
    for line in text[a:b].split("\n"):
        out.append((pos, pos + len(line)))
        pos += len(line) + 1
    return out


def _cells(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """Cell spans of one Markdown table row ``text[a:b]`` (outer pipes and padding excluded)."""
    line = text[a:b]
    cuts = [m.start() for m in _CELL_SPLIT.finditer(line)]
    inner = line.strip()
    bounds = ([-1] if not inner.startswith("|") else []) + cuts + ([len(line)] if not inner.endswith("|") else [])
    out = []
    for x, y in zip(bounds, bounds[1:]):
        s, e = x + 1, y
        while s < e and line[s] == " ":
            s += 1
        while e > s and line[e - 1] == " ":
            e -= 1
        out.append((a + s, a + e))
    return out


def _table_html(text: str, lines: list[tuple[int, int]], mark: _Marker, row_numbers: dict[int, int] | None) -> str:
    head, body = lines[0], lines[2:]
    num = row_numbers is not None

    def cells(a: int, b: int, tag: str) -> str:
        return "".join(f"<{tag}>{mark.span(s, e).replace(chr(92) + '|', '|')}</{tag}>" for s, e in _cells(text, a, b))

    first = f'<th class="rownum">{row_numbers.get(head[0], "")}</th>' if num else ""
    out = [f"<table><thead><tr{mark.row_attrs(*head)}>{first}{cells(*head, 'th')}</tr></thead><tbody>"]
    for a, b in body:
        n = f'<td class="rownum">{row_numbers.get(a, "")}</td>' if num else ""
        out.append(f"<tr{mark.row_attrs(a, b)}>{n}{cells(a, b, 'td')}</tr>")
    return "".join(out) + "</tbody></table>"


def _is_table(text: str, lines: list[tuple[int, int]]) -> bool:
    return (len(lines) >= 2 and text[lines[0][0]:lines[0][1]].lstrip().startswith("|")
            and bool(_SEPARATOR.match(text[lines[1][0]:lines[1][1]])))


def render_blocks(canonical: str, start: int, end: int, *, lo: int = 0, hi: int | None = None,
                  row_numbers: dict[int, int] | None = None, mark: _Marker | None = None) -> str:
    """HTML of the blocks of ``canonical[lo:hi]`` with ``[start, end)`` marked (see the module docstring).

    Heading lines (``## Title``) become ``<h2>``; Markdown tables become
    ``<table>`` (a row touching the range gets ``class="cited"``); other
    blocks are paragraphs with their line breaks. Every character is
    escaped. ``row_numbers`` maps a table line's start offset to the sheet
    row number shown in a first column. Raises ``ValueError`` when the range
    is not inside the text.
    """
    hi = len(canonical) if hi is None else hi
    if not 0 <= start <= end <= len(canonical):
        raise ValueError(f"cited range {start}:{end} is outside the text (0:{len(canonical)})")
    mark = mark or _Marker(canonical, start, end)
    out = []
    for a, b in _block_spans(canonical, lo, hi):
        lines = _lines(canonical, a, b)
        head = _HEADING_LINE.match(canonical[a:b]) if len(lines) == 1 else None
        if head:
            level = len(head.group(1))
            out.append(f"<h{level}>{mark.span(a + level + 1, b)}</h{level}>")
        elif _is_table(canonical, lines):
            out.append(_table_html(canonical, lines, mark, row_numbers))
        else:
            out.append(f"<p>{mark.span(a, b)}</p>")
    return "".join(out)


def _around(canonical: str, start: int, end: int, context_chars: int) -> tuple[int, int]:
    """A window of whole blocks around ``[start, end)``, about ``context_chars`` either side."""
    lo = max(0, start - context_chars)
    hi = min(len(canonical), end + context_chars)
    if lo > 0:
        cut = canonical.find("\n\n", lo)
        lo = cut + 2 if 0 <= cut < start else lo
    if hi < len(canonical):
        cut = canonical.rfind("\n\n", end, hi)
        hi = cut if cut > end else hi
    return lo, hi


def document_html(canonical: str, start: int, end: int, *, context_chars: int = 30000) -> str:
    """The rendered view of a document around its cited range (:func:`render_blocks` in a window of whole
    blocks about ``context_chars`` either side, elisions shown)."""
    lo, hi = _around(canonical, start, end, context_chars)
    before = '<p class="elided">\u2026</p>' if lo > 0 else ""
    after = '<p class="elided">\u2026</p>' if hi < len(canonical) else ""
    return f'<div class="rag-view">{before}{render_blocks(canonical, start, end, lo=lo, hi=hi)}{after}</div>'


def slide_html(canonical: str, slide: Part, start: int, end: int, total: int) -> str:
    """One slide (a ``slide`` :class:`rag.types.Part`) as a 16:9 card, its speaker notes below, the cited
    range marked; ``total`` the deck's slide count (shown as ``Slide N of M``)."""
    mark = _Marker(canonical, start, end)
    notes_at = canonical.find("\n## Speaker notes", slide.start, slide.end)
    body_end = notes_at if notes_at >= 0 else slide.end
    body = render_blocks(canonical, start, end, lo=slide.start, hi=body_end, mark=mark)
    notes = ""
    if notes_at >= 0:
        notes = f'<div class="rag-notes">{render_blocks(canonical, start, end, lo=notes_at + 1, hi=slide.end, mark=mark)}</div>'
    return (f'<div class="rag-view"><p class="elided">Slide {slide.number} of {total}</p>'
            f'<div class="rag-slide">{body}</div>{notes}</div>')


def sheet_html(canonical: str, rows: list[Part], start: int, end: int, *, context_rows: int = 15) -> str:
    """The cited rows of one sheet with its header row, ``context_rows`` rows either side, A1 row numbers.

    ``rows`` are the ``rows`` :class:`rag.types.Part` s of the sheet holding
    ``start`` (header first). The column letters of the sheet's used range
    head the table, as in a spreadsheet.
    """
    if not rows:
        return document_html(canonical, start, end)
    hit = [i for i, r in enumerate(rows) if r.end > start and r.start < max(end, start + 1)] or [0]
    keep = [0] + list(range(max(1, hit[0] - context_rows), min(len(rows), hit[-1] + context_rows + 1)))
    mark = _Marker(canonical, start, end)
    first_col, _, last_col = (rows[0].anchor or "A:A").partition(":")
    letters = _column_letters(first_col, last_col or first_col)
    out = ['<div class="rag-view"><table><thead><tr><th class="rownum"></th>'
           + "".join(f'<th class="rownum" style="text-align:center">{c}</th>' for c in letters) + "</tr></thead><tbody>"]
    shown = 0
    for i in keep:
        r = rows[i]
        if i > 0 and i - 1 not in keep and shown:
            out.append(f'<tr><td class="rownum">\u22ee</td><td colspan="{len(letters)}"></td></tr>')
        tag = "th" if i == 0 else "td"
        cells = "".join(f"<{tag}>{mark.span(s, e).replace(chr(92) + '|', '|')}</{tag}>"
                        for s, e in _cells(canonical, r.start, r.end))
        attrs = mark.row_attrs(r.start, r.end) if i > 0 or start < rows[0].end else ""
        out.append(f'<tr{attrs}><td class="rownum">{r.number}</td>{cells}</tr>')
        shown += 1
    return "".join(out) + "</tbody></table></div>"


def _column_letters(first: str, last: str) -> list[str]:
    def num(col: str) -> int:
        n = 0
        for ch in col:
            n = n * 26 + ord(ch) - 64
        return n

    out = []
    for n in range(num(first), num(last) + 1):
        s, k = "", n
        while k:
            k, r = divmod(k - 1, 26)
            s = chr(65 + r) + s
        out.append(s)
    return out


def view_page(body_html: str, *, title: str = "") -> str:
    """A complete HTML page around a view (the styles of :func:`render_blocks`) that scrolls ``#cited`` into
    view on load; ``title`` is escaped. Meant for ``streamlit.components.v1.html`` (an iframe)."""
    return scrolling_document(_VIEW_STYLE + body_html, title=title)


def image_region_png(frame, box: Box | None, *, max_width: int = 1400) -> bytes:
    """PNG bytes of a Pillow image with ``box`` (pixels, ``(x0, y0, x1, y1)``) outlined and lightly filled,
    scaled down to ``max_width`` pixels wide at most."""
    from PIL import Image, ImageDraw

    img = frame.convert("RGBA")
    if box is not None:
        overlay = Image.new("RGBA", img.size, (0, 0, 0, 0))
        draw = ImageDraw.Draw(overlay)
        pad = max(2, img.width // 300)
        rect = (box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad)
        draw.rectangle(rect, fill=(255, 224, 102, 90), outline=(240, 140, 0, 255), width=max(3, img.width // 250))
        img = Image.alpha_composite(img, overlay)
    if img.width > max_width:
        img = img.resize((max_width, round(img.height * max_width / img.width)))
    buf = io.BytesIO()
    img.convert("RGB").save(buf, "PNG")
    return buf.getvalue()


def parts_of_kind(parts: tuple[Part, ...], kind: LocatorKind, start: int) -> list[Part]:
    """The parts of ``kind`` in the same scope (sheet) as the part holding (or following) offset ``start``."""
    same = [p for p in parts if p.kind == kind]
    here = next((p for p in same if p.end > start), same[-1] if same else None)
    if here is None:
        return []
    return [p for p in same if p.scope == here.scope and p.scope_number == here.scope_number]
