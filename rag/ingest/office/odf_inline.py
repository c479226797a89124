"""The text of an OpenDocument paragraph as a reader sees it (moved out of :mod:`rag.ingest.office.odf` when it
reached 500 lines): :func:`inline_text` - spans, spaces, tabs and soft line breaks, with hidden text, notes,
annotations and shapes left out; :func:`note_blocks` - the footnotes and endnotes cited in an element, each after its
number. Pure functions on odfdo elements (OpenDocument 1.3, part 3, sections 6 and 7).
"""

from __future__ import annotations

from rag.ingest.canonical import clean_inline
from rag.ingest.office.odf_numbers import attr as _attr

#: Elements whose text a reader does not see in the line: hidden paragraphs and text, annotations (comments in the
#: margin), note citations (written with their note), tracked changes, list numbers (drawn from the list style).
HIDDEN = {"text:hidden-paragraph", "text:hidden-text", "office:annotation", "office:annotation-end",
          "text:note-citation", "text:tracked-changes", "text:sequence-decls", "office:forms",
          "text:number"}
#: Drawing shapes that can hold text: read as blocks of their own where they stand, never inside a line.
SHAPES = {"draw:frame", "draw:text-box", "draw:custom-shape", "draw:rect", "draw:ellipse", "draw:circle",
          "draw:polygon", "draw:polyline", "draw:regular-polygon", "draw:path", "draw:line", "draw:connector",
          "draw:caption", "draw:measure", "draw:g",
          "draw:image"}  # an image's own text is drawn on it (a walk, 2026-12-07)
#: Fields whose text changes from page to page (left out of headers and footers, which are written once).
PAGE_FIELDS = {"text:page-number", "text:page-count", "text:page-continuation"}


def inline_text(el, *, page_fields: bool = True) -> str:
    """The text of an ODF paragraph-like element as a reader sees it: spans and links opened, ``text:s`` as
    spaces, tabs and soft line breaks (``text:line-break``) as white space, hidden text, notes (written
    apart, with their number), annotations and shapes (read as blocks of their own) left out; with
    ``page_fields=False`` page numbers and counts too (a header or footer written once)."""
    out: list[str] = [el.text or ""]
    for child in el.children:
        tag = child.tag
        if tag in HIDDEN or tag == "text:note" or tag in SHAPES or (not page_fields and tag in PAGE_FIELDS):
            pass
        elif tag == "text:s":
            out.append(" " * max(1, int(_attr(child, "text:c") or 1)))
        elif tag == "text:tab":
            out.append("\t")
        elif tag == "text:line-break":
            out.append("\n")
        else:
            out.append(inline_text(child, page_fields=page_fields))
        out.append(child.tail or "")
    return "".join(out)


def note_blocks(el) -> list[str]:
    """The footnotes and endnotes cited inside ``el``, each as a reader finds it at the foot of the page or the
    end of the document: its number (the citation as drawn, ``1``, ``iv``, ``*``), a space, its text."""
    out = []
    for note in el.get_elements("descendant::text:note"):
        mark = next((clean_inline(c.text_recursive, keep_newlines=False) for c in note.children
                     if c.tag == "text:note-citation"), "")
        body = next((c for c in note.children if c.tag == "text:note-body"), None)
        text = clean_inline("\n".join(inline_text(p) for p in body.children)) if body is not None else ""
        if text:
            out.append(f"{mark} {text}" if mark else text)
    return out
