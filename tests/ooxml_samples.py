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
