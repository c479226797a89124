"""Strict OOXML read as Transitional (issue 28, item 3): the same DOCX, XLSX and PPTX parts under other names.

ISO/IEC 29500 *Strict* (Office's "Strict Open XML" save option; LibreOffice and calamine write it too) uses
``http://purl.oclc.org/ooxml/...`` namespaces and relationship types where the Transitional files every
Office library reads use ``http://schemas.openxmlformats.org/...``. openpyxl, python-docx and python-pptx know
only the latter: a Strict workbook with data was refused as "every sheet of this XLSX is empty". The XML of
the package is the same otherwise, so :func:`transitional` renames the namespaces in every XML part (the
package's own size limits were checked before: :func:`rag.ingest.limits.check_zip`) and the readers proceed.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile

from rag.ingest.office.numfmt import fixed
from rag.ingest.pdf.audit import words

#: Strict namespace (and relationship-type) prefixes and their Transitional names (ECMA-376 Part 1, annex A).
STRICT_TO_TRANSITIONAL = (
    (b"http://purl.oclc.org/ooxml/spreadsheetml/main", b"http://schemas.openxmlformats.org/spreadsheetml/2006/main"),
    (b"http://purl.oclc.org/ooxml/wordprocessingml/main",
     b"http://schemas.openxmlformats.org/wordprocessingml/2006/main"),
    (b"http://purl.oclc.org/ooxml/presentationml/main", b"http://schemas.openxmlformats.org/presentationml/2006/main"),
    (b"http://purl.oclc.org/ooxml/officeDocument/relationships",
     b"http://schemas.openxmlformats.org/officeDocument/2006/relationships"),
    (b"http://purl.oclc.org/ooxml/officeDocument/extendedProperties",
     b"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"),
    (b"http://purl.oclc.org/ooxml/officeDocument/customProperties",
     b"http://schemas.openxmlformats.org/officeDocument/2006/custom-properties"),
    (b"http://purl.oclc.org/ooxml/officeDocument/docPropsVTypes",
     b"http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"),
    (b"http://purl.oclc.org/ooxml/drawingml/spreadsheetDrawing",
     b"http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"),
    (b"http://purl.oclc.org/ooxml/drawingml/wordprocessingDrawing",
     b"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"),
    (b"http://purl.oclc.org/ooxml/drawingml/chart", b"http://schemas.openxmlformats.org/drawingml/2006/chart"),
    (b"http://purl.oclc.org/ooxml/drawingml/picture", b"http://schemas.openxmlformats.org/drawingml/2006/picture"),
    (b"http://purl.oclc.org/ooxml/drawingml/main", b"http://schemas.openxmlformats.org/drawingml/2006/main"),
    (b"http://purl.oclc.org/ooxml/officeDocument/math", b"http://schemas.openxmlformats.org/officeDocument/2006/math"),
)
_MARK = b"http://purl.oclc.org/ooxml/"


def is_strict(data: bytes) -> bool:
    """Whether the OOXML package ``data`` uses Strict names (its content types or main relationships do)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return any(_MARK in zf.read(n)[:1 << 16] for n in ("_rels/.rels", "[Content_Types].xml")
                       if n in zf.namelist())
    except (zipfile.BadZipFile, OSError, RuntimeError, KeyError):
        return False


def transitional(data: bytes) -> tuple[bytes, bool]:
    """``(package, converted)``: a Strict package rewritten with Transitional names (module doc), or ``data``
    itself when it is not Strict (or not a readable ZIP: the reader then says what is wrong)."""
    if not is_strict(data):
        return data, False
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename.endswith((".xml", ".rels")) and _MARK in body:
                for strict, trans in STRICT_TO_TRANSITIONAL:
                    body = body.replace(strict, trans)
            dst.writestr(info, body)
    return out.getvalue(), True


# --------------------------------------------------------------------------- SmartArt (DrawingML diagrams)

DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R_DM = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}dm"
#: Point types of a diagram's data model that carry no text of their own (connections, presentation).
_NOT_NODES = {"parTrans", "sibTrans", "pres"}


def safe_xml(blob: bytes):
    """Parse an XML part without entities or network (lxml); raises ``lxml.etree.XMLSyntaxError``."""
    from lxml import etree

    return etree.fromstring(blob, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))


def diagram_data_rid(frame) -> str | None:
    """The relationship id of the data part (``ppt/diagrams/dataN.xml``) a SmartArt graphic frame (or a
    ``w:drawing``) points to, or ``None`` when it is not a diagram."""
    rel = next(frame.iter(f"{DGM}relIds"), None)
    return rel.get(_R_DM) if rel is not None else None


def _point_text(pt) -> str:
    """A SmartArt point's text: its ``a:p`` paragraphs (``a:br`` a line break), whitespace runs collapsed,
    joined by spaces; empty ones left out."""
    t = pt.find(f"{DGM}t")
    paras = ["".join(("\n" if el.tag == f"{_A}br" else el.text or "") for el in p.iter(f"{_A}t", f"{_A}br"))
             for p in (t.iter(f"{_A}p") if t is not None else ())]
    return " ".join(" ".join(x.split()) for x in paras if x.strip())


def _smartart_points(root) -> tuple[dict[str, str], list[str], set[str]]:
    """``(texts, order, docs)`` of a data model's points: each node's text by model id, the ids in the point
    list's order with the document points first, and the ids of the document points."""
    texts: dict[str, str] = {}
    order: list[str] = []
    docs: set[str] = set()
    for pt in root.iter(f"{DGM}pt"):
        kind = pt.get("type") or "node"
        if kind in _NOT_NODES:
            continue
        pid = pt.get("modelId") or ""
        texts[pid] = _point_text(pt)
        if kind == "doc":
            order.insert(0, pid)
            docs.add(pid)
        else:
            order.append(pid)
    return texts, order, docs


def _smartart_children(root) -> dict[str, list[tuple[int, str]]]:
    """``{parent id: [(srcOrd, child id), ...]}`` of a data model's ``parOf`` connections (a bad ``srcOrd`` is 0)."""
    children: dict[str, list[tuple[int, str]]] = {}
    for cxn in root.iter(f"{DGM}cxn"):
        if (cxn.get("type") or "parOf") != "parOf":
            continue
        try:
            ordinal = int(cxn.get("srcOrd") or 0)
        except ValueError:
            ordinal = 0
        children.setdefault(cxn.get("srcId") or "", []).append((ordinal, cxn.get("destId") or ""))
    return children


def smartart_lines(root) -> list[tuple[int, str]]:
    """``(depth, text)`` of every node of a SmartArt data model (``dgm:dataModel``) in reading order: the tree of
    ``parOf`` connections from the document point, children by ``srcOrd``; nodes no connection reaches
    follow in the order of the point list. Depth 0 is a top-level node. Empty nodes are left out."""
    texts, order, docs = _smartart_points(root)
    children = _smartart_children(root)
    out: list[tuple[int, str]] = []
    seen: set[str] = set()

    def visit(pid: str, depth: int) -> None:
        stack = [(pid, depth)]
        while stack:
            node, d = stack.pop()
            if node in seen or node not in texts:
                continue
            seen.add(node)
            if texts[node]:
                out.append((max(0, d), texts[node]))
            kids = sorted(children.get(node, []))
            stack.extend((k, d + 1) for _, k in reversed(kids))

    for pid in order:
        visit(pid, -1 if pid in docs else 0)
    return out


def agrees(meta_title: str, canonical: str, opening: int = 5000) -> bool:
    """Whether a metadata title is visible: every word of it is among the words of the text's first ``opening``
    characters (issue 37: a stale title of an older edition or of another talk is not, and never wins over
    the title a reader sees)."""
    want = words(meta_title)
    have = set(words(canonical[:opening]))
    return bool(want) and all(w in have for w in want)


# --------------------------------------------------------------------------- charts and drawings of a package

C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
_XDR = "{http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing}"
_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
#: At most this many series and category labels are written per chart (a chart of a 10,000-row range).
MAX_CHART_LABELS = 100


def _para_texts(el) -> list[str]:
    """The ``a:p`` paragraphs under ``el`` as one-line texts (``a:br`` a space), empty ones left out."""
    out = []
    for p in el.iter(f"{_A}p"):
        text = " ".join("".join(" " if t.tag == f"{_A}br" else t.text or "" for t in p.iter(f"{_A}t", f"{_A}br"))
                        .split())
        if text:
            out.append(text)
    return out


def _title_text(title) -> str:
    """A ``c:title``'s text: rich text runs, or the cached value of the cell it refers to."""
    if title is None:
        return ""
    rich = _para_texts(title)
    if rich:
        return " ".join(rich)
    return " ".join(" ".join((v.text or "").split()) for v in title.iter(f"{C}v") if (v.text or "").strip())


def _axis_lines(plot) -> list[str]:
    """``Axis: title`` for each axis of a ``c:plotArea`` that has a title, in its order."""
    titles = (_title_text(ax.find(f"{C}title")) for ax in plot if ax.tag.endswith("Ax"))
    return [f"Axis: {t}" for t in titles if t]


def _labels(cat) -> list[str]:
    """The first :data:`MAX_CHART_LABELS` non-empty cached labels of a series' ``c:cat``, whitespace collapsed; dates
    cached as serial numbers under a date format (``m/d/yyyy``) as the dates the axis shows (:func:`_as_date`)."""
    code = cat.find(f".//{C}formatCode")
    code = (code.text or "") if code is not None else ""
    return [date_category(" ".join(v.text.split()), code) for v in cat.iter(f"{C}v")
            if (v.text or "").strip()][:MAX_CHART_LABELS]


def date_category(text: str, code: str) -> str:
    """A category's cached value ``text`` as its axis shows it when ``code`` is a date format: the serial "41275"
    under ``m/d/yyyy`` is 2013-01-01 (XlsxWriter's chart_date01.xlsx and a ShapeCrawler deck read "41275; 41276":
    a walk, 2026-12-07); ``text`` unchanged otherwise."""
    if not code:
        return text
    from openpyxl.styles.numbers import is_date_format

    from rag.ingest.office.numfmt import format_cell

    try:
        days = float(text)
        if not is_date_format(code) or not 0 < days < 2958466:  # up to 9999-12-31
            return text
        return format_cell(dt.datetime(1899, 12, 30) + dt.timedelta(days=days), code)
    except (ValueError, OverflowError):
        return text


def _series_and_categories(plot) -> tuple[list[str], list[str]]:
    """``(series names, categories)`` of a ``c:plotArea``: each series' name once, in order; the categories of the
    first series that has any (the others repeat them)."""
    series: list[str] = []
    cats: list[str] = []
    for ser in plot.iter(f"{C}ser"):
        tx = ser.find(f"{C}tx")
        name = _title_text(tx) if tx is not None else ""
        if name and name not in series:
            series.append(name)
        cat = ser.find(f"{C}cat")
        if cat is not None and not cats:
            cats = _labels(cat)
    return series, cats


def _points(el) -> dict[int, str]:
    """``{point index: cached text}`` of a ``c:cat`` or ``c:val`` (at most :data:`MAX_CHART_LABELS`)."""
    out: dict[int, str] = {}
    for pt in el.iter(f"{C}pt"):
        idx, v = pt.get("idx") or "", pt.find(f"{C}v")
        if idx.isdigit() and v is not None and (v.text or "").strip():
            out[int(idx)] = " ".join(v.text.split())
            if len(out) >= MAX_CHART_LABELS:
                break
    return out


def _flag(labels, name: str) -> bool | None:
    el = labels.find(f"{C}{name}")
    return None if el is None else (el.get("val") or "1") in ("1", "true")


def _labels_shown(ser, group) -> tuple[bool, bool, str]:
    """``(values shown, percentages shown, number format)`` of a series' data labels: its own ``c:dLbls``, else
    its chart group's (ECMA-376 Part 1, 21.2.2.49); a deleted label shows nothing."""
    for labels in (ser.find(f"{C}dLbls"), group.find(f"{C}dLbls")):
        if labels is None:
            continue
        if _flag(labels, "delete"):
            return False, False, ""
        value, percent = _flag(labels, "showVal"), _flag(labels, "showPercent")
        if value is not None or percent is not None:
            fmt = labels.find(f"{C}numFmt")
            return bool(value), bool(percent), (fmt.get("formatCode") or "") if fmt is not None else ""
    return False, False, ""


#: Chart types whose data labels can show a share of the whole (PowerPoint shows "percentage" on these only).
_PIE_CHARTS = {"pieChart", "pie3DChart", "doughnutChart", "ofPieChart"}
#: Currency signs a number format may carry before or after its number (``$#,##0.00``).
_CURRENCY = "$\u20ac\u00a3\u00a5"


def chart_number(text: str, code: str = "", share_of: float | None = None) -> str | None:
    """A cached chart value as its data label shows it: ``formatCode`` ``0%`` / ``0.0%`` a percentage, ``#,##0.00``
    with separators and decimals (at most 10), a currency sign kept, ``General`` (or none) without float noise
    (``0.14000000000000001`` -> ``0.14``); ``share_of`` a total: the value's share of it, as a pie's percentage
    label (``0%``). ``None`` for a format this cannot render faithfully (dates, fractions, scaling commas,
    sections, literals): a number the chart does not show is not read (a reviewer's probe, 2026-12-07: a date
    label read "45000", "2M" read "1,500,000")."""
    try:
        v = float(text)
    except ValueError:
        return text
    if share_of:
        v, code = v / share_of, "0%"
    code = code.strip()
    if code.lower() in ("", "general"):
        return f"{v:.10g}"
    before = code[:1] if code[:1] in _CURRENCY else ""
    after = code[-1:] if code[-1:] in _CURRENCY and not before else ""
    core = code[len(before):len(code) - len(after)]
    if not core or core.endswith(",") or any(c not in "0#,.%" for c in core):
        return None
    tail = core.split(".", 1)[1] if "." in core else ""
    decimals = min(len(tail) - len(tail.lstrip("0#")), 10)  # a hostile "0.000...0" builds no huge number
    shown = fixed(abs(v) * (100 if "%" in core else 1), decimals, grouped="," in core)  # half away from zero, as Excel
    number = ("-" if v < 0 and any(c in "123456789" for c in shown) else "") + shown
    return f"{number}%" if "%" in core else f"{before}{number}{after}"


def _value_lines(plot) -> list[str]:
    """``Series: category value; ...`` for each series whose data labels show values or percentages on the chart
    (a pie's "37 %"): the numbers a person reads on it (a new user's walk, 2026-12-07: "What was the approval
    rating?" found only the categories). Values without labels are not shown, so not read."""
    out = []
    for group in plot:
        if not isinstance(group.tag, str):
            continue
        for ser in group.findall(f"{C}ser")[:MAX_CHART_LABELS]:
            value, percent, code = _labels_shown(ser, group)
            percent = percent and group.tag.rsplit("}", 1)[-1] in _PIE_CHARTS
            val = ser.find(f"{C}val")
            if not (value or percent) or val is None:
                continue
            values = _points(val)
            cat = ser.find(f"{C}cat")
            cats = _points(cat) if cat is not None else {}
            total = sum(float(v) for v in values.values() if _is_number(v)) if percent and not value else None
            tx = ser.find(f"{C}tx")
            name = (_title_text(tx) if tx is not None else "") or "Values"
            numbers = [(cats.get(i, i + 1), chart_number(v, code, total)) for i, v in sorted(values.items())]
            shown = [f"{cat} {n}".strip() for cat, n in numbers if n is not None]
            if shown:
                out.append(f"{name}: " + "; ".join(shown))
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def chart_lines(root) -> list[str]:
    """The lines a person reads on a chart (``c:chartSpace``): ``Chart: title``, ``Axis: title`` per axis,
    ``Series: a; b`` and ``Categories: x; y`` (cached labels, at most :data:`MAX_CHART_LABELS` each), and the
    values its data labels show (:func:`_value_lines`)."""
    chart = root.find(f"{C}chart")
    if chart is None:
        return []
    title = _title_text(chart.find(f"{C}title"))
    out = [f"Chart: {title}"] if title else []
    plot = chart.find(f"{C}plotArea")
    if plot is None:
        return out
    out += _axis_lines(plot)
    series, cats = _series_and_categories(plot)
    if series:
        out.append("Series: " + "; ".join(series[:MAX_CHART_LABELS]))
    if cats:
        out.append("Categories: " + "; ".join(cats))
    return out + _value_lines(plot)


def chart_value_lines(root) -> list[str]:
    """The data-label lines of a chart (``c:chartSpace``, e.g. python-pptx's ``chart._chartSpace``), as
    :func:`chart_lines` ends; ``[]`` when it shows no values."""
    plot = root.find(f"{C}chart/{C}plotArea")
    return _value_lines(plot) if plot is not None else []


def part_rels(zf: zipfile.ZipFile, part: str, kind: str | None = None) -> dict[str, str]:
    """``{relationship id: target part name}`` of package part ``part`` (internal targets only; with ``kind``,
    only relationships whose type ends ``/kind``, e.g. ``drawing``)."""
    folder, _, base = part.rpartition("/")
    name = f"{folder}/_rels/{base}.rels" if folder else f"_rels/{base}.rels"
    try:
        root = safe_xml(zf.read(name))
    except Exception:  # noqa: BLE001 - no relationships part, or a damaged one: no targets
        return {}
    out = {}
    for rel in root.iter(_REL):
        if rel.get("TargetMode") == "External" or kind and not (rel.get("Type") or "").endswith("/" + kind):
            continue
        target = rel.get("Target") or ""
        out[rel.get("Id") or ""] = resolve_target(folder, target)
    return out


def resolve_target(folder: str, target: str) -> str:
    """A relationship target as a part name (``../drawings/drawing1.xml`` from ``xl/worksheets``)."""
    import posixpath

    if target.startswith("/"):
        return target.lstrip("/")
    return posixpath.normpath(posixpath.join(folder, target)) if folder else posixpath.normpath(target)


def drawing_blocks(zf: zipfile.ZipFile, drawing: str) -> list[list[str]]:
    """The text of a spreadsheet drawing part (``xl/drawings/drawingN.xml``) in its order: each text box or
    shape with text one block of lines, each chart (its part read) one block of :func:`chart_lines`."""
    try:
        root = safe_xml(zf.read(drawing))
    except Exception:  # noqa: BLE001 - a missing or damaged drawing adds nothing and loses nothing else
        return []
    rels = part_rels(zf, drawing)
    out = []
    for anchor in root:
        for el in anchor.iter(f"{_XDR}sp", f"{_XDR}graphicFrame"):
            if el.tag == f"{_XDR}sp":
                body = el.find(f"{_XDR}txBody")
                lines = _para_texts(body) if body is not None else []
            else:
                ref = next(el.iter(f"{C}chart"), None)
                target = rels.get(ref.get(_R_ID) or "") if ref is not None else None
                try:
                    lines = chart_lines(safe_xml(zf.read(target))) if target else []
                except Exception:  # noqa: BLE001 - an unreadable chart part adds nothing
                    lines = []
            if lines:
                out.append(lines)
    return out
