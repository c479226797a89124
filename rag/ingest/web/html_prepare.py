"""What a web page shows that the HTML layout would lose or garble (issue 37), set right in the parsed tree before
:mod:`rag.ingest.web.html` writes it (HTML pages and EPUB chapters alike):

* **heading decorations** left out: edit links (Wikipedia's ``[edit]``: ``mw-editsection``), permalink signs
  (Sphinx's ``¶`` ``headerlink``, Docusaurus' ``#`` ``hash-link``, ``anchorjs-link``, ``heading-anchor`` ...) and
  any link inside a heading whose whole text is ``¶``, ``#``, ``§`` or ``🔗``: a reader does not read them as the
  heading's words;
* **formulas as text**: a ``<math>`` element is read as its ``alttext`` (unless a placeholder many formulas share),
  else its TeX annotation, else its MathML written as one line (:func:`rag.ingest.mathml.linear`: ``(π^2)/6``)
  (``application/x-tex``), else its MathML text; the picture a page draws a formula with (an ``<img>`` of class
  ``*math*`` or inside a ``*math*`` element, as Wikipedia's ``mwe-math-fallback-image``) is read as its ``alt``
  text, TeX's ``{\\displaystyle ...}`` wrapper removed. A formula is never a hole in the sentence;
* **note markers kept apart from the text**: a note reference (a link to ``#...`` marked as one: ``role`` or
  ``epub:type`` ``noteref``/``doc-noteref``, a class such as ``footnote-ref``, ``fnref``, ``noteref``,
  ``reference``, or a ``<sup>`` holding only a link to ``#fn...``/``#cite...``/``#note...``/``#footnote...``) in
  running text is written ``[22]`` (as Wikipedia draws its own), and a marker that starts a block (the number
  in front of a footnote's text, "22Sometimes known as ...") is followed by a space.

Every function changes the tree in place and returns how many elements it changed; none raises on odd markup.
"""

from __future__ import annotations

import re
from collections import Counter

from rag.ingest.mathml import linear

#: The block elements of the HTML layout (:mod:`rag.ingest.web.html`): here because the preparation reads them
#: too, and the layout imports this module (not the other way round).
BLOCKS = {"p", "div", "section", "article", "main", "header", "footer", "aside", "nav", "blockquote", "figure",
          "figcaption", "address", "details", "summary", "center", "body", "html", "dl", "dt", "dd", "hr",
          "fieldset", "legend", "caption", "hgroup", "search"}

_DECORATION = re.compile(r"(?:^|[-_\s])(mw-editsection|editsection|edit-section|headerlink|anchorjs-link|"
                         r"heading-anchor|header-anchor|hash-link|anchor-link|permalink|heading-link)(?:$|\s)",
                         re.IGNORECASE)
_DECORATION_TEXT = {"¶", "#", "§", "🔗", "⁋", "[edit]", "edit"}
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_MATH_CLASS = re.compile(r"math", re.IGNORECASE)
_DISPLAYSTYLE = re.compile(r"^\{\\displaystyle\s*(.*)\}$", re.DOTALL)
_NOTE_CLASS = re.compile(r"(?:^|[-_\s])(footnote-ref|footnoteref|fnref|noteref|footnote|reference|endnote-ref|"
                         r"cite-ref|citation-ref)(?:$|[-_\s])", re.IGNORECASE)
_NOTE_HREF = re.compile(r"^#(?:fn|cite|note|footnote|endnote|ftn|edn|_ftn|_edn)", re.IGNORECASE)
_MARK = re.compile(r"^[\[(]?(?:\d{1,4}|[*†‡§¶]{1,3}|[a-z]{1,2}|[ivxlc]{1,6})[\])]?$", re.IGNORECASE)


def _drop_keep_tail(el) -> None:
    if el.getparent() is not None:
        el.drop_tree()


def _classes(el) -> str:
    return f"{el.get('class') or ''}"


def drop_heading_decorations(root) -> int:
    """Remove edit links and permalink signs from every heading (module doc)."""
    n = 0
    for h in [e for e in root.iter(*_HEADINGS)]:
        for el in [e for e in h.iter() if e is not h and isinstance(e.tag, str)]:
            if el.getparent() is None:
                continue
            text = " ".join(el.text_content().split())
            if _DECORATION.search(_classes(el)) or (el.tag == "a" and text in _DECORATION_TEXT):
                _drop_keep_tail(el)
                n += 1
    return n


def tex_text(tex: str) -> str:
    """A formula's TeX as written for a reader: one line, the ``{\\displaystyle ...}`` wrapper removed."""
    tex = " ".join(tex.split())
    m = _DISPLAYSTYLE.match(tex)
    return (m.group(1) if m else tex).strip()


def _replace_with_text(el, text: str) -> None:
    """Put ``text`` in the place of ``el`` (its tail kept), as a plain ``<span>``."""
    from lxml import etree

    span = etree.Element("span")
    span.text = text
    span.tail = el.tail
    parent = el.getparent()
    if parent is not None:
        parent.replace(el, span)


#: An ``alttext`` given to this many formulas or more that say different things is a placeholder, not their text
#: (IDPF's linear-algebra sample: "Alternative text not available" on 10,281 formulas, read in their place).
PLACEHOLDER_ALTTEXTS = 3


def _mathml_text(m) -> str:
    return linear(m)


def formulas_as_text(root) -> int:
    """Replace every ``<math>`` and every formula picture by its text (module doc); an ``alttext`` that
    :data:`PLACEHOLDER_ALTTEXTS` formulas or more share while their MathML differs is passed over."""
    n = 0
    maths = [e for e in root.iter() if isinstance(e.tag, str) and e.tag.lower().rsplit("}", 1)[-1] == "math"]
    said: dict[str, set[str]] = {}
    for m in maths:
        if m.get("alttext"):
            said.setdefault(m.get("alttext"), set()).add(_mathml_text(m))
    counts = Counter(m.get("alttext") for m in maths if m.get("alttext"))  # once: per alttext it was quadratic
    placeholders = {a for a, texts in said.items() if len(texts) >= 2 and counts[a] >= PLACEHOLDER_ALTTEXTS}
    for m in maths:
        tex = ""
        for ann in m.iter():
            if isinstance(ann.tag, str) and ann.tag.lower().endswith("annotation") and \
                    "tex" in (ann.get("encoding") or "").lower():
                tex = ann.text_content()
                break
        alt = m.get("alttext") if m.get("alttext") not in placeholders else ""
        text = tex_text(alt or tex) or _mathml_text(m)
        _replace_with_text(m, text)
        n += 1
    for img in [e for e in root.iter("img")]:
        parent = img.getparent()
        if img.get("alt") and (_MATH_CLASS.search(_classes(img))
                               or (parent is not None and _MATH_CLASS.search(_classes(parent)))):
            _replace_with_text(img, tex_text(img.get("alt")))
            n += 1
    return n


def _is_note_ref(el) -> bool:
    kind = f"{el.get('role') or ''} {el.get('epub:type') or ''} {el.get('{http://www.idpf.org/2007/ops}type') or ''}"
    if "noteref" in kind.lower():
        return True
    links = [a for a in el.iter("a")]
    href = (el.get("href") if el.tag == "a" else links[0].get("href") if len(links) == 1 else "") or ""
    if not href.startswith("#"):
        return False
    return bool(_NOTE_CLASS.search(_classes(el)) or _NOTE_HREF.match(href))


def _block_start(el) -> bool:
    """Whether no text comes before ``el`` in its block (its parent chain up to the first block element)."""
    node = el
    while True:
        parent = node.getparent()
        if parent is None:
            return True
        prev = node.getprevious()
        while prev is not None:
            if " ".join(prev.text_content().split()) or (prev.tail or "").strip():
                return False
            prev = prev.getprevious()
        if (parent.text or "").strip():
            return False
        if parent.tag in BLOCKS or parent.tag in ("li", "td", "th"):
            return True
        node = parent


def separate_note_markers(root) -> int:
    """Write note references apart from the words around them (module doc)."""
    n = 0
    for el in [e for e in root.iter("sup", "a", "span")]:
        if el.getparent() is None or not _is_note_ref(el):
            continue
        parent = el.getparent()
        if parent is not None and parent.tag in ("sup", "a", "span") and _is_note_ref(parent):
            continue  # the outer marker is rewritten
        text = " ".join(el.text_content().split())
        if not _MARK.match(text):
            continue
        if _block_start(el):
            label = text
            el.tail = " " + (el.tail or "").lstrip()
        else:
            label = text if text.startswith(("[", "(")) else f"[{text}]"
        for child in list(el):
            el.remove(child)
        el.text = label
        n += 1
    return n


def prepare(root) -> None:
    """All three fixes of the module doc, on the parsed page or chapter ``root``."""
    drop_heading_decorations(root)
    formulas_as_text(root)
    separate_note_markers(root)
