"""The coverage auditors of DOCX, PPTX and XLSX (issue 37): what a person sees, read from the raw XML with the
standard library only (``zipfile``, ``xml.etree``), sharing no code with the readers (:mod:`rag.ingest.coverage`).

Elements are matched by local name, so Transitional and Strict OOXML read alike. What counts as seen:

* DOCX: every paragraph's text (``w:t``; an equation, ``m:oMath``, is not counted) of the body, footnotes, endnotes, headers and
  footers, the body's charts and SmartArt, placed as ``content control`` inside a ``w:sdt``, ``table`` inside a table, ``text box`` inside a
  ``w:txbxContent``; deleted text, VML fallbacks and runs hidden by the simplest rules (``w:vanish`` directly
  or by style, a white colour, under 2 pt) left out; comments left out (not part of the text).
* PPTX: every visible slide's shapes (``a:t``; footer, date and slide-number placeholders left out, as the
  reader does on purpose), tables, SmartArt data (``dgm:pt`` nodes), charts (title, series and category
  labels) and the speaker notes' body.
* XLSX: the text cells (shared, inline and formula strings; numbers are formatted by the reader and not
  compared) of visible sheets, rows and columns, and the text boxes and charts of their drawings. Sheets and
  shared strings are streamed (:meth:`_Package.stream`): the audit holds one row at a time, not the sheet.
"""

from __future__ import annotations

import io
import posixpath
import re
import xml.etree.ElementTree as ET  # noqa: N817 - the standard name
import zipfile
from collections.abc import Iterator

from rag.ingest.limits import Limits, MiB
from rag.ingest.seen import MAX_PARTS, MAX_SEEN_CHARS, Seen
from rag.types import MediaType

_NUM = re.compile(r"(\d+)")
_MAX_DEPTH = 200


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


class _Package:
    """A ZIP package read member by member, within the limits and the audit's bounds."""

    def __init__(self, data: bytes, limits: Limits) -> None:
        self.zf = zipfile.ZipFile(io.BytesIO(data))
        self.names = set(self.zf.namelist())
        self.max_bytes = limits.max_zip_member_mb * MiB
        self.parts = 0
        self.chars = 0
        self.out: list[Seen] = []

    def xml(self, name: str):
        """The parsed member ``name``, or ``None`` (missing, too large, past :data:`MAX_PARTS`, not XML)."""
        if name not in self.names or self.parts >= MAX_PARTS or self.zf.getinfo(name).file_size > self.max_bytes:
            return None
        self.parts += 1
        try:
            return ET.fromstring(self.zf.read(name))
        except ET.ParseError:
            return None

    def stream(self, name: str, tags: tuple[str, ...]) -> Iterator:
        """The elements of member ``name`` whose local name is in ``tags``, each complete when yielded and dropped
        from the tree once the caller is done with it: memory holds one such element, not the part (a sheet of
        100 MiB parsed whole took some 20 times its size). Nothing for a member :meth:`xml` would refuse; a
        parse error ends the stream."""
        if name not in self.names or self.parts >= MAX_PARTS or self.zf.getinfo(name).file_size > self.max_bytes:
            return
        self.parts += 1
        stack: list = []
        inside = 0  # open elements of ``tags`` around the current one: their subtrees are kept until they end
        with self.zf.open(name) as fh:
            try:
                for event, el in ET.iterparse(fh, events=("start", "end")):
                    wanted = _local(el.tag) in tags
                    if event == "start":
                        stack.append(el)
                        inside += wanted
                        continue
                    stack.pop()
                    inside -= wanted
                    if wanted:
                        yield el
                    if stack and not inside:  # finished and needed by no open element: the parent lets it go
                        stack[-1].remove(el)  # O(1): earlier siblings were removed the same way
            except ET.ParseError:
                return

    def add(self, place: str, text: str) -> None:
        text = " ".join(text.split())
        if text and self.chars < MAX_SEEN_CHARS:
            self.chars += len(text)
            self.out.append(Seen(place, text))

    def rels(self, part: str, kind: str) -> list[str]:
        """Targets (part names) of ``part``'s relationships whose type ends ``/kind``."""
        folder, _, base = part.rpartition("/")
        root = self.xml(f"{folder}/_rels/{base}.rels")
        out = []
        for rel in (root if root is not None else ()):
            if (rel.get("Type") or "").endswith("/" + kind) and rel.get("TargetMode") != "External":
                target = rel.get("Target") or ""
                out.append(target.lstrip("/") if target.startswith("/")
                           else posixpath.normpath(posixpath.join(folder, target)))
        return out

    def main(self) -> str | None:
        """The part ``_rels/.rels`` names as the package's main document (``officeDocument``), or ``None``."""
        root = self.xml("_rels/.rels")
        for rel in (root if root is not None else ()):
            if (rel.get("Type") or "").endswith("/officeDocument"):
                return (rel.get("Target") or "").lstrip("/") or None
        return None

    def numbered(self, pattern: str) -> list[str]:
        """Member names matching ``pattern`` (a full-match regular expression), in natural order."""
        rx = re.compile(pattern)
        return sorted((n for n in self.names if rx.fullmatch(n)),
                      key=lambda n: [int(x) if x.isdigit() else x for x in _NUM.split(n)])


def _texts(el, skip=("Fallback", "del", "moveFrom", "instrText", "delText"), depth: int = 0) -> str:
    """Text of the ``t`` elements under ``el``, tabs and breaks as spaces, ``skip`` subtrees left out."""
    out = []
    for child in el:
        name = _local(child.tag)
        if name in skip or depth > _MAX_DEPTH:
            continue
        if name == "t" and not len(child):
            out.append(child.text or "")
        elif name in ("tab", "br", "cr"):
            out.append(" ")
        else:
            out.append(_texts(child, skip, depth + 1))
    return "".join(out)


# --------------------------------------------------------------------------- DOCX


def _val(el, name: str = "val") -> str | None:
    return next((v for k, v in el.attrib.items() if _local(k) == name), None)


def _run_props(rpr) -> dict[str, str]:
    """``{"vanish": ..., "color": ..., "sz": ...}`` as a ``w:rPr`` (of a run or a style) gives them."""
    out = {}
    for prop in (rpr if rpr is not None else ()):
        name = _local(prop.tag)
        if name in ("vanish", "specVanish"):
            out["vanish"] = _val(prop) or "true"
        elif name == "color":
            out["color"] = (_val(prop, "themeColor") or _val(prop) or "").lower()
        elif name == "sz":
            out["sz"] = _val(prop) or ""
    return out


class _Styles:
    """The character and paragraph styles' run properties of ``word/styles.xml``, through their ``basedOn``."""

    def __init__(self, root) -> None:
        self.own: dict[str, tuple[dict[str, str], str | None]] = {}
        for st in (root if root is not None else ()):
            if _local(st.tag) != "style":
                continue
            rpr = next((c for c in st if _local(c.tag) == "rPr"), None)
            based = next((c for c in st if _local(c.tag) == "basedOn"), None)
            self.own[_val(st, "styleId") or ""] = (_run_props(rpr), _val(based) if based is not None else None)

    def props(self, style: str | None) -> dict[str, str]:
        out: dict[str, str] = {}
        for _ in range(20):
            if style not in self.own:
                break
            props, style = self.own[style]
            out = {**props, **out}
        return out


def _symbol_run(run) -> bool:
    """A run set directly in a symbol font (Symbol, Wingdings): its letters are drawn as other characters, which the
    reader maps (:mod:`rag.ingest.office.symbol_fonts`); the audit leaves them out rather than count "ü" for ✓."""
    for rpr in run:
        if _local(rpr.tag) == "rPr":
            for c in rpr:
                if _local(c.tag) == "rFonts":
                    name = next((v for k, v in c.attrib.items() if _local(k) in ("ascii", "hAnsi")), "")
                    return name.strip().casefold() in ("symbol", "wingdings", "wingdings 2")
    return False


def _hidden_run(run, pstyle: str | None, styles: _Styles) -> bool:
    """A run no reader sees by the simplest rules: ``w:vanish`` (directly or by its styles), a white colour, a
    size under 2 pt (white on a shaded paragraph is visible, and also the reader's; skipping it only makes the
    audit lenient)."""
    rpr = next((c for c in run if _local(c.tag) == "rPr"), None)
    own = _run_props(rpr)
    rstyle = next((c for c in (rpr if rpr is not None else ()) if _local(c.tag) == "rStyle"), None)
    props = {**styles.props(pstyle), **styles.props(_val(rstyle) if rstyle is not None else None), **own}
    size = props.get("sz", "")
    return (props.get("vanish", "false") not in ("0", "false", "off")
            or props.get("color", "") in ("ffffff", "white", "background1")
            or size.isdigit() and int(size) < 4)


def _word_paragraph(pkg: _Package, p, place: str, styles: _Styles) -> None:
    """One ``w:p``: its own runs' text (nested paragraphs of text boxes are their own pieces)."""
    out, boxes = [], []
    ppr = next((c for c in p if _local(c.tag) == "pPr"), None)
    pstyle_el = next((c for c in (ppr if ppr is not None else ()) if _local(c.tag) == "pStyle"), None)
    pstyle = _val(pstyle_el) if pstyle_el is not None else None

    def walk(el, depth: int) -> None:
        for child in el:
            name = _local(child.tag)
            if name in ("Fallback", "del", "moveFrom", "instrText", "delText", "rPr", "pPr") or depth > _MAX_DEPTH:
                continue
            if name in ("oMath", "oMathPara"):  # an equation is no run of words: the reader writes it in its own
                continue  # notation (rag.ingest.office.omml: "10^(−6)"), which no word count of the leaves matches
            if name == "txbxContent":
                boxes.append(child)
            elif name == "r" and (_hidden_run(child, pstyle, styles) or _symbol_run(child)):
                continue
            elif name == "t":
                out.append(child.text or "")
            elif name in ("tab", "br", "cr"):
                out.append(" ")
            else:
                walk(child, depth + 1)

    walk(p, 0)
    pkg.add(place, "".join(out))
    for box in boxes:
        _word_blocks(pkg, box, "text box" if place in ("body", "table", "content control") else place, styles)


def _word_blocks(pkg: _Package, el, place: str, styles: _Styles, depth: int = 0) -> None:
    for child in el:
        name = _local(child.tag)
        if name == "p":
            _word_paragraph(pkg, child, place, styles)
        elif depth < _MAX_DEPTH and name not in ("Fallback", "del", "moveFrom", "sdtPr"):
            inner = place
            if place in ("body", "content control", "table"):
                inner = "table" if name == "tbl" else "content control" if name == "sdt" and place == "body" else place
            _word_blocks(pkg, child, inner, styles, depth + 1)


def _graphics(pkg: _Package, part: str) -> None:
    """The charts and SmartArt data parts ``part`` relates to (DOCX and PPTX alike)."""
    for data_part in pkg.rels(part, "diagramData"):
        model = pkg.xml(data_part)
        for pt in (model.iter() if model is not None else ()):
            if _local(pt.tag) == "pt" and (pt.get("type") or "node") not in ("parTrans", "sibTrans", "pres"):
                pkg.add("SmartArt", _texts(pt))
    for chart in pkg.rels(part, "chart"):
        _chart(pkg, chart)


def docx_seen(data: bytes, limits: Limits) -> list[Seen]:
    """What a person sees in a DOCX (module doc)."""
    pkg = _Package(data, limits)
    main = pkg.main() or "word/document.xml"  # Word for the web's body is word/document2.xml
    parts = [(main, "body"), ("word/footnotes.xml", "footnote"), ("word/endnotes.xml", "endnote")]
    parts += [(n, "header or footer") for n in pkg.numbered(r"word/(header|footer)\d*\.xml")]
    if main not in pkg.names:
        raise ValueError(f"no {main}: not a DOCX this auditor can read")
    styles = _Styles(pkg.xml("word/styles.xml"))
    for name, place in parts:
        root = pkg.xml(name)
        if root is None:
            continue
        if name == main:
            _graphics(pkg, name)
        if place in ("footnote", "endnote"):
            for note in root:
                if (note.get(next((k for k in note.attrib if _local(k) == "type"), "")) or "normal") == "normal":
                    _word_blocks(pkg, note, place, styles)
        else:
            _word_blocks(pkg, root, place, styles)
    return pkg.out


# --------------------------------------------------------------------------- PPTX

_FURNITURE = {"ftr", "dt", "sldNum"}


def _placeholder(sp) -> str | None:
    for el in sp.iter():
        if _local(el.tag) == "ph":
            return el.get("type") or "body"
    return None


def _drawing_paragraphs(pkg: _Package, el, place: str) -> None:
    for p in el.iter():
        if _local(p.tag) == "p" and any(_local(c.tag) in ("r", "fld", "br") for c in p):
            pkg.add(place, _texts(p))


def _chart(pkg: _Package, name: str) -> None:
    root = pkg.xml(name)
    if root is None:
        return
    for el in root.iter():
        local = _local(el.tag)
        if local == "title":
            pkg.add("chart", _texts(el) or " ".join(v.text or "" for v in el.iter() if _local(v.tag) == "v"))
        elif local in ("tx", "cat"):
            for v in el.iter():
                if _local(v.tag) == "v":
                    pkg.add("chart", v.text or "")


def pptx_seen(data: bytes, limits: Limits) -> list[Seen]:
    """What a person sees in a PPTX (module doc)."""
    pkg = _Package(data, limits)
    if "ppt/presentation.xml" not in pkg.names:
        raise ValueError("no ppt/presentation.xml: not a PPTX this auditor can read")
    for slide in pkg.numbered(r"ppt/slides/slide\d+\.xml"):
        root = pkg.xml(slide)
        if root is None or (root.get("show") or "1") in ("0", "false"):
            continue
        for el in root.iter():
            local = _local(el.tag)
            if local == "sp" and _placeholder(el) not in _FURNITURE:
                _drawing_paragraphs(pkg, el, "slide")
            elif local == "tbl":
                _drawing_paragraphs(pkg, el, "table")
        _graphics(pkg, slide)
        for notes in pkg.rels(slide, "notesSlide"):
            nroot = pkg.xml(notes)
            for sp in (nroot.iter() if nroot is not None else ()):
                if _local(sp.tag) == "sp" and _placeholder(sp) == "body":
                    _drawing_paragraphs(pkg, sp, "speaker notes")
    return pkg.out


# --------------------------------------------------------------------------- XLSX


def _shared_strings(pkg: _Package) -> list[str]:
    """The shared strings in order, streamed; past :data:`MAX_SEEN_CHARS` characters the rest are ``""`` (the
    audit judges no more than that anyway)."""
    out: list[str] = []
    chars = 0
    for si in pkg.stream("xl/sharedStrings.xml", ("si",)):
        text = _texts(si, skip=("rPh", "phoneticPr")) if chars < MAX_SEEN_CHARS else ""
        chars += len(text)
        out.append(text)
    return out


def _hidden_col(col, out: set[int]) -> None:
    """Add the columns a hidden ``col`` element covers to ``out``."""
    if (col.get("hidden") or "0") in ("1", "true"):
        try:
            out.update(range(int(col.get("min") or 0), min(int(col.get("max") or 0), 16384) + 1))
        except ValueError:
            return


def _column(ref: str) -> int:
    n = 0
    for ch in ref:
        if not ch.isalpha():
            break
        n = n * 26 + ord(ch.upper()) - 64
    return n


def _sheet_targets(pkg: _Package) -> dict[str | None, str]:
    """``{relationship id: part name}`` of the workbook's relationships (``xl/...`` for a relative target)."""
    rels = pkg.xml("xl/_rels/workbook.xml.rels")
    return {r.get("Id"): posixpath.normpath(posixpath.join("xl", r.get("Target") or "")) if not
            (r.get("Target") or "").startswith("/") else (r.get("Target") or "").lstrip("/")
            for r in (rels if rels is not None else ())}


def _visible_sheets(book, targets: dict[str | None, str]) -> list[str]:
    """The part names of the workbook's visible sheets, in its order."""
    paths = []
    for sheet in book.iter():
        if _local(sheet.tag) != "sheet" or (sheet.get("state") or "visible") != "visible":
            continue
        rid = next((v for k, v in sheet.attrib.items() if _local(k) == "id"), None)
        path = targets.get(rid)
        if path:
            paths.append(path)
    return paths


def _add_cell(pkg: _Package, c, strings: list[str]) -> None:
    """Add a text cell ``c`` to what is seen: a shared string, an inline string or a formula's string result."""
    kind = c.get("t")
    value = next((x for x in c if _local(x.tag) == "v"), None)
    if kind == "s" and value is not None and (value.text or "").strip().isdigit():
        i = int(value.text)
        pkg.add("cell", strings[i] if i < len(strings) else "")
    elif kind == "inlineStr":
        pkg.add("cell", _texts(c))
    elif kind == "str" and value is not None:
        pkg.add("cell", value.text or "")


def _sheet_cells(pkg: _Package, path: str, strings: list[str]) -> None:
    """Add the text cells of sheet ``path`` that are not in a hidden row or column."""
    hidden_cols: set[int] = set()
    for row in pkg.stream(path, ("col", "row")):  # the schema puts <cols> before <sheetData>
        if _local(row.tag) == "col":
            _hidden_col(row, hidden_cols)
            continue
        if (row.get("hidden") or "0") in ("1", "true"):
            continue
        for c in row:
            if _local(c.tag) == "c" and _column(c.get("r") or "") not in hidden_cols:
                _add_cell(pkg, c, strings)


def _sheet_drawings(pkg: _Package, path: str) -> None:
    """Add the text boxes and the charts of sheet ``path``'s drawings."""
    for drawing in pkg.rels(path, "drawing"):
        droot = pkg.xml(drawing)
        for sp in (droot.iter() if droot is not None else ()):
            if _local(sp.tag) == "sp":
                _drawing_paragraphs(pkg, sp, "text box")
        for chart in pkg.rels(drawing, "chart"):
            _chart(pkg, chart)


def xlsx_seen(data: bytes, limits: Limits) -> list[Seen]:
    """What a person sees in an XLSX (module doc): each visible sheet's shown text cells, then its drawings."""
    pkg = _Package(data, limits)
    book = pkg.xml("xl/workbook.xml")
    if book is None:
        raise ValueError("no xl/workbook.xml: not an XLSX this auditor can read")
    targets = _sheet_targets(pkg)
    strings = _shared_strings(pkg)
    for path in _visible_sheets(book, targets):
        _sheet_cells(pkg, path, strings)
        _sheet_drawings(pkg, path)
    return pkg.out


#: The OOXML rows of :data:`rag.ingest.coverage.AUDITORS`.
AUDITORS = {MediaType.DOCX.value: docx_seen, MediaType.PPTX.value: pptx_seen, MediaType.XLSX.value: xlsx_seen}
