"""Text an OpenDocument file's styles hide from a reader (the rule of :mod:`rag.ingest.office.office_hidden`, for ODF).

A paragraph or span whose style (its own, or one it inherits through ``style:parent-style-name``, in
``content.xml``'s automatic styles or ``styles.xml``'s common ones) sets ``text:display="none"`` in its text
properties is not shown by LibreOffice (pandoc's test file ``hiddenTextByStyle.odt``: its one paragraph was
indexed and became the key passage, a new user's walk, 2026-12-07); nor is text under 2 pt (``fo:font-size``).
:func:`drop_hidden` takes such elements out of the document's tree before the reader walks it, counting them and
keeping their text for the coverage audit (a piece a reader reported hidden is not counted as missed).
"""

from __future__ import annotations

from rag.ingest.office.odf_numbers import attr
from rag.ingest.office.office_hidden import MIN_VISIBLE_PT, Hidden

#: Styled elements whose style can hide them (paragraphs, headings, spans).
_STYLED = ("text:p", "text:h", "text:span")
#: At most this many elements are dropped (each one's text kept up to the :class:`Hidden` bound).
MAX_DROPPED = 100_000


def _points(size: str) -> float | None:
    """``fo:font-size`` in points (``"1pt"``, ``"0.5mm"``), ``None`` for a percentage or anything else."""
    units = {"pt": 1.0, "mm": 72 / 25.4, "cm": 72 / 2.54, "in": 72.0, "pc": 12.0, "px": 0.75}
    for unit, factor in units.items():
        if size.endswith(unit):
            try:
                return float(size[: -len(unit)]) * factor
            except ValueError:
                return None
    return None


def hidden_styles(doc) -> dict[str, str]:
    """Style name -> why its text is hidden (``"display none"``, ``"under 2 pt"``), for the paragraph and text
    styles of ``doc`` (an ``odfdo.Document``), inheritance followed (at most 20 parents)."""
    parent: dict[str, str] = {}
    own: dict[str, str] = {}
    for part in (doc.styles, doc.content):
        if part is None:
            continue
        for st in part.get_elements("//style:style"):
            if attr(st, "style:family") not in ("paragraph", "text"):
                continue
            name = attr(st, "style:name")
            parent[name] = attr(st, "style:parent-style-name")
            for props in st.children:
                if props.tag != "style:text-properties":
                    continue
                size = _points(attr(props, "fo:font-size"))
                if attr(props, "text:display") == "none":
                    own[name] = "display none"
                elif size is not None and size < MIN_VISIBLE_PT:
                    own[name] = "under 2 pt"
    out = {}
    for name in parent:
        seen, at = 0, name
        while at and seen < 20:
            if at in own:
                out[name] = own[at]
                break
            at, seen = parent.get(at, ""), seen + 1
    return out


def drop_hidden(doc, root, hidden: Hidden) -> None:
    """Remove from ``root`` (an odfdo element: the body, a master page) the paragraphs, headings and spans whose
    style hides them (:func:`hidden_styles`), the text after each kept; count each in ``hidden`` by reason and keep
    its text."""
    styles = hidden_styles(doc)
    if not styles:
        return
    found = []
    for tag in _STYLED:
        found += [el for el in root.get_elements(f"descendant::{tag}[@text:style-name]")
                  if attr(el, "text:style-name") in styles][:MAX_DROPPED]
    top = root._xml_element.getroottree().getroot()
    for el in found[:MAX_DROPPED]:
        up = el.parent
        if up is None or el._xml_element.getroottree().getroot() is not top:  # inside one already dropped
            continue
        hidden.add(f"styled {styles[attr(el, 'text:style-name')]}")
        hidden.keep(el.text_recursive or "")
        up.delete(el, keep_tail=True)


def hidden_tables(doc) -> set[str]:
    """Names of the table styles of ``doc`` that hide their sheet (``style:table-properties table:display="false"``,
    OpenDocument 1.3 part 3, 20.249: a hidden sheet is hidden by its style, not by an attribute of the table; a
    walk over SheetJS's test files, 2026-12-07: ``sheet_visibility.ods``'s "Hidden" and "VeryHidden" sheets indexed)."""
    out = set()
    for part in (doc.styles, doc.content):
        if part is None:
            continue
        for st in part.get_elements("//style:style"):
            if attr(st, "style:family") == "table" and any(
                    c.tag == "style:table-properties" and attr(c, "table:display") == "false" for c in st.children):
                out.add(attr(st, "style:name"))
    return out
