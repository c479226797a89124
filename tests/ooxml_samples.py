"""Small generated Office files for issue 37's readers and coverage audit: what python-docx, python-pptx and
openpyxl write, with raw XML parts added where the libraries cannot (content controls, footnotes, TOC fields,
SmartArt data, theme fills). Each helper returns the file's bytes.
"""

from __future__ import annotations

import io
import re
import zipfile

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
WNS = f'xmlns:w="{W_NS}" xmlns:r="{R_NS}"'


def save(obj) -> bytes:
    """A python-docx / python-pptx / openpyxl object's bytes."""
    buf = io.BytesIO()
    obj.save(buf)
    return buf.getvalue()


def docx_with_body(xml: str, *, numbering: str | None = None, title: str | None = None):
    """A python-docx ``Document`` whose body is ``xml`` (``w:`` elements, namespaces added), optionally with the
    numbering part's content replaced by ``numbering`` and the core title set."""
    import docx
    from docx.oxml import parse_xml

    d = docx.Document()
    body = d.element.body
    sect = body.find(f"{{{W_NS}}}sectPr")
    for el in parse_xml(f"<w:body {WNS}>{xml}</w:body>"):
        sect.addprevious(el)
    if numbering is not None:
        root = d.part.numbering_part.element
        for child in list(root):
            root.remove(child)
        for el in parse_xml(f"<w:numbering {WNS}>{numbering}</w:numbering>"):
            root.append(el)
    if title is not None:
        d.core_properties.title = title
    return d


def p(text: str, style: str | None = None, num: tuple[int, int] | None = None) -> str:
    """A ``w:p`` of one run (``style`` a style id, ``num`` ``(numId, ilvl)``)."""
    ppr = ""
    if style or num:
        ppr = "<w:pPr>" + (f'<w:pStyle w:val="{style}"/>' if style else "")
        ppr += (f'<w:numPr><w:ilvl w:val="{num[1]}"/><w:numId w:val="{num[0]}"/></w:numPr>' if num else "")
        ppr += "</w:pPr>"
    return f'<w:p>{ppr}<w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def add_parts(data: bytes, parts: dict[str, str], rels: list[tuple[str, str, str]], overrides: list[tuple[str, str]],
              rels_part: str = "word/_rels/document.xml.rels") -> bytes:
    """``data`` (a package) with XML ``parts`` added, relationships ``(id, type, target)`` added to ``rels_part``
    and content-type overrides ``(part name, content type)``."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename in (rels_part, "[Content_Types].xml"):
                body = body.decode("utf-8")
            if info.filename == rels_part:
                add = "".join(f'<Relationship Id="{i}" Type="{t}" Target="{g}"/>' for i, t, g in rels)
                body = body.replace("</Relationships>", add + "</Relationships>")
            elif info.filename == "[Content_Types].xml":
                add = "".join(f'<Override PartName="/{n}" ContentType="{c}"/>' for n, c in overrides)
                body = body.replace("</Types>", add + "</Types>")
            dst.writestr(info, body)
        for name, xml in parts.items():
            dst.writestr(name, xml)
    return out.getvalue()


FOOTNOTES_TYPE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes"
ENDNOTES_TYPE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/endnotes"
FOOTNOTES_CT = "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"
ENDNOTES_CT = "application/vnd.openxmlformats-officedocument.wordprocessingml.endnotes+xml"


def notes_part(kind: str, notes: dict[int, str]) -> str:
    """A ``footnotes.xml`` / ``endnotes.xml`` with Word's two separator notes and ``notes`` ``{id: text}``."""
    sep = (f'<w:{kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{kind}>'
           f'<w:{kind} w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p>'
           f"</w:{kind}>")
    body = "".join(f'<w:{kind} w:id="{i}"><w:p><w:r><w:{kind}Ref/></w:r><w:r><w:t xml:space="preserve"> {t}'
                   f"</w:t></w:r></w:p></w:{kind}>" for i, t in notes.items())
    return f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:{kind}s {WNS}>{sep}{body}</w:{kind}s>'


def ref(kind: str, note_id: int) -> str:
    """A run holding a footnote or endnote reference."""
    return f'<w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr><w:{kind}Reference w:id="{note_id}"/></w:r>'


def strip_ns(xml: str) -> str:
    """Collapse whitespace between tags (readable literals in tests)."""
    return re.sub(r">\s+<", "><", xml.strip())


DGM_NS = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"
DIAGRAM_DATA_TYPE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/diagramData"
DIAGRAM_DATA_CT = "application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml"


def smartart_data(tree: list[tuple[str, list[str]]]) -> str:
    """A SmartArt data part (``dgm:dataModel``): top-level nodes with children, listed in the point list in
    reverse (so only the connections give the reading order), with a transition point carrying junk text."""
    pts = ['<dgm:pt modelId="doc" type="doc"><dgm:prSet/><dgm:spPr/><dgm:t><a:bodyPr/><a:p/></dgm:t></dgm:pt>']
    cxns = []
    for i, (top, kids) in enumerate(tree):
        cxns.append(f'<dgm:cxn modelId="c{i}" srcId="doc" destId="n{i}" srcOrd="{i}" destOrd="0"/>')
        pts.append(f'<dgm:pt modelId="n{i}"><dgm:t><a:bodyPr/><a:p><a:r><a:t>{top}</a:t></a:r></a:p></dgm:t></dgm:pt>')
        for j, kid in enumerate(kids):
            cxns.append(f'<dgm:cxn modelId="c{i}_{j}" srcId="n{i}" destId="n{i}_{j}" srcOrd="{j}" destOrd="0"/>')
            pts.append(f'<dgm:pt modelId="n{i}_{j}"><dgm:t><a:bodyPr/><a:p><a:r><a:t>{kid}</a:t></a:r></a:p></dgm:t>'
                       "</dgm:pt>")
    pts.append('<dgm:pt modelId="t1" type="parTrans"><dgm:t><a:bodyPr/><a:p><a:r><a:t>TRANSITION</a:t></a:r></a:p>'
               "</dgm:t></dgm:pt>")
    body = "".join([pts[0]] + pts[:0:-1])
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><dgm:dataModel xmlns:dgm="{DGM_NS}" '
            f'xmlns:a="{A_NS}"><dgm:ptLst>{body}</dgm:ptLst><dgm:cxnLst>{"".join(cxns)}</dgm:cxnLst></dgm:dataModel>')


def smartart_frame(rid: str, shape_id: int = 99, top: int = 2000000) -> str:
    """A slide's ``p:graphicFrame`` that shows the diagram whose data part is relationship ``rid``."""
    return (f'<p:graphicFrame xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="{A_NS}" '
            f'xmlns:r="{R_NS}"><p:nvGraphicFramePr><p:cNvPr id="{shape_id}" name="Diagram"/><p:cNvGraphicFramePr/>'
            f'<p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="500000" y="{top}"/><a:ext cx="8000000" cy="3000000"/>'
            f'</p:xfrm><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/diagram">'
            f'<dgm:relIds xmlns:dgm="{DGM_NS}" r:dm="{rid}" r:lo="" r:qs="" r:cs=""/></a:graphicData></a:graphic>'
            "</p:graphicFrame>")


def with_smartart(data: bytes, slide: int, tree: list[tuple[str, list[str]]]) -> bytes:
    """A deck's bytes with a SmartArt graphic of ``tree`` added to slide ``slide`` (1-based)."""
    name = f"ppt/slides/slide{slide}.xml"
    src = zipfile.ZipFile(io.BytesIO(data))
    xml = src.read(name).decode("utf-8").replace("</p:spTree>", smartart_frame("rIdDgm") + "</p:spTree>")
    out = add_parts(data, {"ppt/diagrams/data1.xml": smartart_data(tree)},
                    [("rIdDgm", DIAGRAM_DATA_TYPE, "../diagrams/data1.xml")],
                    [("ppt/diagrams/data1.xml", DIAGRAM_DATA_CT)], rels_part=f"ppt/slides/_rels/slide{slide}.xml.rels")
    return replace_part(out, name, xml)


def replace_part(data: bytes, name: str, xml: str) -> bytes:
    """``data`` with part ``name`` replaced by ``xml``."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, xml if info.filename == name else src.read(info))
    return out.getvalue()


C_NS = "http://schemas.openxmlformats.org/drawingml/2006/chart"
CHART_TYPE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/chart"
CHART_CT = "application/vnd.openxmlformats-officedocument.drawingml.chart+xml"


def chart_part(title: str, series: str, categories: list[str]) -> str:
    """A minimal ``c:chartSpace``: a bar chart with a rich-text title, one named series and cached categories."""
    cats = "".join(f'<c:pt idx="{i}"><c:v>{c}</c:v></c:pt>' for i, c in enumerate(categories))
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><c:chartSpace xmlns:c="{C_NS}" '
            f'xmlns:a="{A_NS}"><c:chart><c:title><c:tx><c:rich><a:bodyPr/><a:p><a:r><a:t>{title}</a:t></a:r></a:p>'
            f"</c:rich></c:tx></c:title><c:plotArea><c:barChart><c:ser><c:idx val=\"0\"/><c:tx><c:strRef><c:f>S!B1"
            f"</c:f><c:strCache><c:pt idx=\"0\"><c:v>{series}</c:v></c:pt></c:strCache></c:strRef></c:tx><c:cat>"
            f"<c:strRef><c:f>S!A2:A9</c:f><c:strCache>{cats}</c:strCache></c:strRef></c:cat></c:ser></c:barChart>"
            "</c:plotArea></c:chart></c:chartSpace>")


def docx_graphics_paragraph(chart_rid: str, dgm_rid: str) -> str:
    """A ``w:p`` drawing an inline chart and an inline SmartArt graphic."""
    def inline(uri: str, inner: str) -> str:
        return (f'<w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/'
                f'wordprocessingDrawing"><wp:extent cx="5000000" cy="3000000"/><wp:docPr id="1" name="G"/>'
                f'<a:graphic xmlns:a="{A_NS}"><a:graphicData uri="{uri}">{inner}</a:graphicData></a:graphic>'
                "</wp:inline></w:drawing></w:r>")
    return ("<w:p>" + inline(C_NS, f'<c:chart xmlns:c="{C_NS}" r:id="{chart_rid}"/>')
            + inline("http://schemas.openxmlformats.org/drawingml/2006/diagram",
                     f'<dgm:relIds xmlns:dgm="{DGM_NS}" r:dm="{dgm_rid}" r:lo="" r:qs="" r:cs=""/>') + "</w:p>")
