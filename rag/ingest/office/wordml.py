"""WordprocessingML that python-docx does not read, read from the XML itself (issue 37).

python-docx walks only the body's direct paragraphs and tables and a paragraph's direct runs, so a cover page
and body inside one block-level content control (``w:sdt``, Word's "Cover Pages" gallery) were lost whole, as
were inline content controls, tracked insertions (``w:ins``) and field results. This module gives the reader:

* :func:`block_items` - the paragraphs and tables of a body, cell, header, footer or note, in order,
  through block-level content controls and ``w:customXml`` wrappers; each with whether it sits in a
  table-of-contents control (``docPartGallery`` "Table of Contents");
* :class:`Fields` / :func:`paragraph_text` - a paragraph's text as Word shows it: text of runs at any depth
  (inline content controls, hyperlinks, smart tags, insertions, field results), ``w:tab`` as a tab,
  ``w:br`` / ``w:cr`` as a new line, non-breaking hyphens as ``-``; deleted and moved-away text, field
  codes (``w:instrText``), text boxes (read by the caller) and VML fallbacks (``mc:Fallback``) left out;
  footnote and endnote references as ``[^n]`` (the Markdown footnote mark); whether the paragraph is inside
  a ``TOC`` field;
* :func:`table_grid` - a table's cells on its grid (spans, vertical merges); :func:`lays_out` - whether a table
  lays out the page (it holds a real table); :func:`comments_warning` - the reviewers' comments left unread;
* :class:`Numbering` - list labels and outline numbers as Word renders them from the numbering part
  (ECMA-376 Part 1, 17.9): ``lvlText`` such as ``%1.%2.%3`` with each level's ``numFmt`` (decimal, letters,
  roman, bullets), ``start``, ``startOverride`` and restarts of deeper levels; counters per ``w:num``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from rag.ingest.office.omml import linear as omml_linear
from rag.ingest.office.symbol_fonts import symbol_char, symbol_font, symbol_text

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
#: Subtrees whose text Word does not show in place (or that the caller reads elsewhere).
_SKIP = {f"{W}del", f"{W}moveFrom", f"{W}instrText", f"{W}delText", f"{W}delInstrText", f"{W}txbxContent",
         f"{W}rPr", f"{W}pPr", f"{W}sdtPr", f"{W}sdtEndPr", f"{W}fldData", f"{_MC}Fallback", f"{W}footnoteRef",
         f"{W}endnoteRef", f"{W}annotationRef", f"{W}commentReference", f"{W}tblPr", f"{W}trPr", f"{W}tcPr"}
#: Wrappers that hold blocks (paragraphs and tables) of their own.
_BLOCK_WRAPPERS = {f"{W}sdt", f"{W}sdtContent", f"{W}customXml", f"{W}ins", f"{W}moveTo", f"{_MC}AlternateContent",
                   f"{_MC}Choice"}
_MAX_DEPTH = 64
#: Word 2016's symbol extension (``w16se:symEx w16se:char="1F431"``): an emoji, whose plain ``w:t`` is written only in
#: the ``mc:Fallback`` this reader skips (docx-rs's fixtures, a walk, 2026-12-07: "Hello inline 🐱" read "Hello inline").
_W16SE = "{http://schemas.microsoft.com/office/word/2015/wordml/symex}"
_SYMEX = f"{_W16SE}symEx"


def _symex(el) -> str:
    """The character of a ``w16se:symEx`` element (its ``char`` attribute, a hexadecimal code point), or ``""``."""
    try:
        code = int(el.get(f"{_W16SE}char") or "", 16)
        return chr(code) if 0 < code <= 0x10FFFF else ""
    except ValueError:
        return ""


def _gallery(sdt) -> str:
    el = sdt.find(f"{W}sdtPr/{W}docPartObj/{W}docPartGallery")
    return (el.get(f"{W}val") or "") if el is not None else ""


def block_items(parent, toc: bool = False, depth: int = 0) -> Iterator[tuple[object, bool]]:
    """``(element, in_toc_control)`` for each ``w:p`` and ``w:tbl`` of ``parent`` (a body, cell, header, footer or
    note element), in document order, descending into block-level content controls and wrappers."""
    if depth > _MAX_DEPTH:
        return
    for child in parent:
        tag = child.tag
        if tag in (f"{W}p", f"{W}tbl"):
            yield child, toc
        elif tag in _BLOCK_WRAPPERS:
            inner = toc or tag == f"{W}sdt" and "contents" in _gallery(child).lower()
            yield from block_items(child, inner, depth + 1)


def table_rows(tbl) -> list[list[object]]:
    """The cells (``w:tc``) of each row (``w:tr``) of a table, rows and cells inside content controls too."""
    rows = []
    for tr in _children(tbl, f"{W}tr"):
        rows.append(list(_children(tr, f"{W}tc")))
    return rows


#: A cell's ``w:gridSpan`` read at most this far (a hostile file's span of 100000 builds no huge row).
MAX_GRID_SPAN = 100
#: A table row is read at most this many grid columns wide (a 45 KB file of 100 cells spanning 100 columns each
#: made 30 million characters of empty cells; a reviewer's probe, 2026-12-07).
MAX_GRID_COLUMNS = 200
#: A vertically merged cell's text is repeated in the rows it covers when it is at most this long (characters): a
#: row label ("Week 4") a row needs to be read alone; a long merged text is written once.
MAX_REPEATED_CELL = 80


def _val(tc, tag: str) -> str | None:
    el = tc.find(f"{W}tcPr/{W}{tag}")
    return None if el is None else (el.get(f"{W}val") or "")


def table_grid(tbl, text: Callable[[object], str]) -> list[list[str]]:
    """The rows of a table (``w:tbl``) as cell texts laid on the table's grid (ECMA-376 Part 1, 17.4): a cell
    spanning columns (``w:gridSpan``) leaves the others it covers empty, ``w:gridBefore`` empties lead a row, and a
    cell continuing a vertical merge (``w:vMerge`` without ``restart``) takes the text of the merge's first cell
    when that is short (:data:`MAX_REPEATED_CELL`), else stays empty. ``text(tc)`` gives a cell's text.

    Before, continuation cells were read empty and a spanning cell as one column: a weekly schedule's Thursday
    rows had no week (a new user's "what is taught on Thursday of week 4?" was answered from week 7's row), and
    the cells after a span slid under the wrong header (a new user's walk, 2026-12-07)."""
    rows: list[list[str]] = []
    merged: dict[int, str] = {}  # grid column -> the text of the vertical merge open there
    for tr in _children(tbl, f"{W}tr"):
        before = tr.find(f"{W}trPr/{W}gridBefore")
        col = min(int(v), MAX_GRID_SPAN) if before is not None and (v := before.get(f"{W}val") or "").isdigit() else 0
        col = min(col, MAX_GRID_COLUMNS)
        row = [""] * col
        for tc in _children(tr, f"{W}tc"):
            span = _val(tc, "gridSpan")
            span = min(int(span), MAX_GRID_SPAN) if span and span.isdigit() and int(span) >= 1 else 1
            vmerge = _val(tc, "vMerge")
            own = text(tc)
            if vmerge is not None and vmerge != "restart" and not own.strip():
                own = merged.get(col, "")
            elif vmerge == "restart":
                merged[col] = own if len(own) <= MAX_REPEATED_CELL else ""
            else:
                merged.pop(col, None)
            if col >= MAX_GRID_COLUMNS:
                break
            span = min(span, MAX_GRID_COLUMNS - col)
            row += [own] + [""] * (span - 1)
            col += span
        rows.append(row)
    return rows


def _children(el, tag: str, depth: int = 0) -> Iterator[object]:
    for child in el:
        if child.tag == tag:
            yield child
        elif child.tag in _BLOCK_WRAPPERS and depth < _MAX_DEPTH:
            yield from _children(child, tag, depth + 1)


@dataclass
class Fields:
    """Complex-field state (``w:fldChar`` begin / separate / end) carried from paragraph to paragraph: a TOC
    field spans many paragraphs. ``stack`` holds the open fields' instructions, innermost last."""

    stack: list[str] = field(default_factory=list)

    @property
    def in_toc(self) -> bool:
        """Whether an open field is a table of contents (``TOC \\o ...``)."""
        return any(instr.lstrip().upper().startswith("TOC") for instr in self.stack)


@dataclass
class ParaText:
    """A paragraph's text as Word shows it and what else the walk saw: ``toc`` it is (partly) inside a TOC field."""

    text: str
    toc: bool


def paragraph_text(p, fields: Fields | None = None, note_mark: Callable[[str, str], str] | None = None) -> ParaText:
    """The text of paragraph ``p`` as Word shows it (rules in the module doc).

    ``fields`` carries complex fields across paragraphs (a new one when ``None``); ``note_mark(kind, id)``
    gives the mark written for a ``footnote``/``endnote`` reference (nothing when ``None``)."""
    fields = fields if fields is not None else Fields()
    out: list[str] = []
    toc = fields.in_toc

    def walk(el, depth: int) -> None:
        nonlocal toc
        for child in el:
            tag = child.tag
            if not isinstance(tag, str) or tag in _SKIP:
                if tag == f"{W}instrText" and fields.stack:
                    fields.stack[-1] += child.text or ""
                    toc = toc or fields.in_toc
                continue
            if tag == f"{W}t":
                out.append(symbol_text(_run_font(child), child.text or ""))
            elif tag in (f"{_M}oMath", f"{_M}oMathPara"):
                out.append(omml_linear(child))  # an equation as one line: 10^(−6), not "10-6"
            elif tag == f"{_M}t":
                out.append(child.text or "")
            elif tag in (f"{W}tab", f"{W}ptab"):
                out.append("\t")
            elif tag in (f"{W}br", f"{W}cr"):
                out.append("\n")
            elif tag == f"{W}noBreakHyphen":
                out.append("-")
            elif tag == f"{W}sym":
                out.append(_sym(child))
            elif tag == _SYMEX:  # an emoji Word 2016 writes in mc:Choice; its w:t copy sits in the skipped mc:Fallback
                out.append(_symex(child))
            elif tag == f"{W}fldChar":
                kind = child.get(f"{W}fldCharType")
                if kind == "begin":
                    fields.stack.append("")
                elif kind == "end" and fields.stack:
                    fields.stack.pop()
            elif tag == f"{W}fldSimple":
                is_toc = (child.get(f"{W}instr") or "").lstrip().upper().startswith("TOC")
                toc = toc or is_toc
                walk(child, depth + 1)
            elif tag in (f"{W}footnoteReference", f"{W}endnoteReference"):
                if note_mark is not None:
                    out.append(note_mark("footnote" if tag == f"{W}footnoteReference" else "endnote",
                                         child.get(f"{W}id") or ""))
            elif tag == f"{W}r" and _struck(child) and depth < _MAX_DEPTH:
                at = len(out)
                walk(child, depth + 1)
                if "".join(out[at:]).strip():
                    out.insert(at, _MARK)
                    out.append(_MARK)
                    struck.append(True)
            elif depth < _MAX_DEPTH:
                walk(child, depth + 1)

    struck: list[bool] = []
    walk(p, 0)
    text = "".join(out)
    return ParaText(_join_struck(text) if struck else text, toc or fields.in_toc)


#: Struck-through text is written between these marks (Markdown's strikethrough): a reader sees it crossed out, a
#: menu's "Salmon" sold out, a struck price; read plainly it was evidence of the opposite ("Today's special:
#: Salmon", shown as supported: mammoth's strikethrough.docx, a new user's walk, 2026-12-07).
STRUCK = "~~"
#: Where a struck run starts and ends while a paragraph is read: a character no XML text holds, so a "~~" the
#: document writes itself is never taken for one (a review, 2026-12-07).
_MARK = "\x00"


def _struck(run) -> bool:
    """Whether run ``w:r`` is struck through by its own properties (``w:strike`` or ``w:dstrike``, not turned off)."""
    rpr = run.find(f"{W}rPr")
    if rpr is None:
        return False
    for tag in ("strike", "dstrike"):
        el = rpr.find(f"{W}{tag}")
        if el is not None and (el.get(f"{W}val") or "true").lower() not in ("0", "false", "off", "none"):
            return True
    return False


def _join_struck(text: str) -> str:
    """Neighbouring struck runs as one struck phrase (``_MARK`` pairs around each), spaces moved outside the marks,
    then the marks written as :data:`STRUCK` ("~~Salmon~~")."""
    text = text.replace(_MARK + _MARK, "")
    parts = text.split(_MARK)
    for i in range(1, len(parts), 2):  # the struck pieces
        inner = parts[i]
        parts[i] = inner.strip()
        parts[i - 1] += inner[:len(inner) - len(inner.lstrip())]
        if i + 1 < len(parts):
            parts[i + 1] = inner[len(inner.rstrip()):] + parts[i + 1]
    return "".join(p if i % 2 == 0 else (f"{STRUCK}{p}{STRUCK}" if p else "") for i, p in enumerate(parts))


def _sym(el) -> str:
    """A ``w:sym`` character as a reader sees it in its font (:func:`rag.ingest.office.symbol_fonts.symbol_char`: a
    Wingdings ``F0FC`` is ✓), ``""`` for a private-use code of another font."""
    try:
        code = int(el.get(f"{W}char") or "", 16)
    except ValueError:
        return ""
    return symbol_char(el.get(f"{W}font"), code)


def _run_font(t) -> str | None:
    """The font set directly on the run holding text ``t`` (``w:rPr/w:rFonts``, its ``w:ascii`` else ``w:hAnsi``)
    when it is a symbol font, else ``None``."""
    run = t.getparent()
    fonts = run.find(f"{W}rPr/{W}rFonts") if run is not None else None
    if fonts is None:
        return None
    name = fonts.get(f"{W}ascii") or fonts.get(f"{W}hAnsi")
    return name if symbol_font(name) else None


# --------------------------------------------------------------------------- numbering


def roman_numeral(n: int) -> str:
    """``n`` in lower-case Roman numerals (4 -> ``iv``)."""
    out = ""
    for value, digits in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"),
                          (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while n >= value:
            out, n = out + digits, n - value
    return out


def letter_numeral(n: int) -> str:
    """Word's letter numbering: a..z, then aa..zz, aaa..."""
    n = max(1, n)
    return chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1)


def format_number(n: int, fmt: str) -> str:
    """Counter ``n`` in Word's number format ``fmt`` (``decimal``, ``lowerLetter``, ``upperRoman`` ...; formats
    of other scripts fall back to decimal)."""
    if fmt in ("lowerLetter", "upperLetter"):
        s = letter_numeral(n)
        return s.upper() if fmt == "upperLetter" else s
    if fmt in ("lowerRoman", "upperRoman"):
        s = roman_numeral(n) if n > 0 else str(n)
        return s.upper() if fmt == "upperRoman" else s
    if fmt == "decimalZero":
        return f"{n:02d}"
    if fmt == "none":
        return ""
    if fmt == "ordinal":
        return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
    return str(n)


@dataclass(frozen=True)
class Level:
    """One list level: ``fmt`` its ``numFmt``, ``text`` its ``lvlText`` (``%1.%2``), ``start`` its first value,
    ``restart`` the level (0-based) whose new item restarts it (``lvlRestart``; ``None``: any higher level),
    ``legal`` all levels as decimal (``isLgl``)."""

    fmt: str = "decimal"
    text: str = "%1."
    start: int = 1
    restart: int | None = None
    legal: bool = False


def _level(lvl) -> Level:
    def val(tag: str) -> str | None:
        el = lvl.find(f"{W}{tag}")
        return el.get(f"{W}val") if el is not None else None

    def num(tag: str, default: int | None) -> int | None:
        try:
            return int(val(tag))
        except (TypeError, ValueError):
            return default

    restart = num("lvlRestart", None)
    return Level(fmt=val("numFmt") or "decimal", text=val("lvlText") if val("lvlText") is not None else "",
                 start=num("start", 1) or 0, restart=None if restart is None else restart - 1,
                 legal=lvl.find(f"{W}isLgl") is not None)


class Numbering:
    """The labels of numbered paragraphs in document order (see the module doc); ``root`` the numbering part's
    ``w:numbering`` element (``None``: no numbering part, every label ``None``).

    Counters belong to the abstract list, as in Word: two ``w:num`` of one ``w:abstractNum`` continue each
    other ("1.1 IPR Policy" under one, "1.2 Terminology" under the other), and a ``w:num`` with a
    ``startOverride`` restarts that level where it is first used ("Restart numbering")."""

    def __init__(self, root=None) -> None:
        abstract: dict[str, dict[int, Level]] = {}
        self.levels: dict[str, dict[int, Level]] = {}
        self.abstract_of: dict[str, str] = {}
        self.restarts: dict[str, dict[int, int]] = {}
        self.started: set[tuple[str, int]] = set()
        self.counters: dict[str, dict[int, int]] = {}
        if root is None:
            return
        for a in root.findall(f"{W}abstractNum"):
            abstract[a.get(f"{W}abstractNumId") or ""] = {_int(lvl.get(f"{W}ilvl")): _level(lvl)
                                                         for lvl in a.findall(f"{W}lvl")}
        for n in root.findall(f"{W}num"):
            num_id = n.get(f"{W}numId") or ""
            ref = n.find(f"{W}abstractNumId")
            aid = ref.get(f"{W}val") if ref is not None else ""
            levels = dict(abstract.get(aid, {}))
            restarts = {}
            for o in n.findall(f"{W}lvlOverride"):
                ilvl = _int(o.get(f"{W}ilvl"))
                lvl = o.find(f"{W}lvl")
                if lvl is not None:
                    levels[ilvl] = _level(lvl)
                    restarts[ilvl] = levels[ilvl].start
                so = o.find(f"{W}startOverride")
                if so is not None:
                    restarts[ilvl] = _int(so.get(f"{W}val"))
            self.levels[num_id] = levels
            self.abstract_of[num_id] = aid or num_id
            self.restarts[num_id] = restarts

    def is_bullet(self, num_id: str, ilvl: int) -> bool:
        """Whether that level is a bullet (or has no definition: Word shows nothing countable)."""
        lv = self.levels.get(num_id, {}).get(ilvl)
        return lv is None or lv.fmt == "bullet"

    def defined(self, num_id: str) -> bool:
        """Whether ``num_id`` names a list (``numId`` 0 switches numbering off)."""
        return bool(self.levels.get(num_id))

    def label(self, num_id: str, ilvl: int) -> str | None:
        """Advance the list ``num_id`` at level ``ilvl`` (0-based) and return its label as Word shows it
        (``"2.2.1"``, ``"B)"``, ``"•"`` for a bullet), ``None`` for a paragraph that is not numbered."""
        levels = self.levels.get(num_id)
        if not levels or ilvl not in levels:
            return None
        counts = self.counters.setdefault(self.abstract_of[num_id], {})
        lv = levels[ilvl]
        if ilvl in self.restarts[num_id] and (num_id, ilvl) not in self.started:
            self.started.add((num_id, ilvl))
            counts[ilvl] = self.restarts[num_id][ilvl] - 1
        counts[ilvl] = counts.get(ilvl, lv.start - 1) + 1
        for deeper, dl in levels.items():
            if deeper > ilvl and (dl.restart is None or 0 <= ilvl <= dl.restart):
                counts.pop(deeper, None)
                self.started.discard((num_id, deeper))
        if lv.fmt == "bullet":
            return "•"
        text = lv.text
        for k in range(8, -1, -1):
            mark = f"%{k + 1}"
            if mark in text:
                kl = levels.get(k, Level())
                value = counts.get(k, kl.start)
                text = text.replace(mark, format_number(value, "decimal" if lv.legal and k != ilvl else kl.fmt))
        return text.strip() or None


def _int(value: str | None, default: int = 0) -> int:
    try:
        return int(value or "")
    except ValueError:
        return default


def num_pr(ppr) -> tuple[str | None, int | None] | None:
    """``(numId, ilvl)`` of a ``w:pPr``'s ``w:numPr``, either ``None`` where the element does not say (a style
    based on another often gives only the level); ``None`` without a ``w:numPr``."""
    if ppr is None:
        return None
    el = ppr.find(f"{W}numPr")
    if el is None:
        return None
    nid, ilvl = el.find(f"{W}numId"), el.find(f"{W}ilvl")
    return (nid.get(f"{W}val") or "" if nid is not None else None,
            _int(ilvl.get(f"{W}val")) if ilvl is not None else None)


def lays_out(tbl) -> bool:
    """Whether table ``tbl`` lays out its page rather than holding data: a cell of it holds a table of two rows
    and two columns or more, and the outer table is a frame (no row of more than two cells) or holds fewer cells
    than the tables inside it. Its cells are then read as blocks in order, each inner table a table of its own;
    before, a nine-step procedure nested in a frame was one 6,000-character cell, step 2's controls run into
    step 3 in a quote (a new user's walk, 2026-12-07). A data table with a small table in one cell (a product's
    2 x 2 specifications) stays a table (a reviewer's probe), and so does a 1 x 1 box in a cell."""
    rows = table_rows(tbl)
    inner_cells = 0
    for row in rows:
        for tc in row:
            for el, _ in block_items(tc):
                if el.tag == f"{W}tbl":
                    inner = table_rows(el)
                    if len(inner) >= 2 and max((len(r) for r in inner), default=0) >= 2:
                        inner_cells += sum(len(r) for r in inner)
    if not inner_cells:
        return False
    return max((len(r) for r in rows), default=0) <= 2 or sum(len(r) for r in rows) < inner_cells


def comments_warning(doc) -> tuple[str, ...]:
    """A warning naming how many reviewers' comments (``word/comments.xml``) were not read, else ``()``: Word shows
    them in the margin, and a reader who sees six comments should not think they were searched (a new user's
    walk, 2026-12-07). They stay out: a comment is a note about the text, not the document's text."""
    from lxml import etree

    n = 0
    for rel in doc.part.rels.values():
        if rel.reltype.endswith("/comments") and not rel.is_external:
            try:
                root = etree.fromstring(rel.target_part.blob, etree.XMLParser(resolve_entities=False, no_network=True))
            except etree.XMLSyntaxError:
                continue
            n += sum(1 for _ in root.iter(f"{W}comment"))
    if not n:
        return ()
    return (f"not read: {n} reviewer comment(s) shown in the margin; comments are notes about the text, not its text",)
