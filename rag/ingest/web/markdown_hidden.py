"""Raw HTML inside Markdown under the HTML reader's hidden-text rules (issue 37): a ``display:none`` span's text is
not evidence.

A Markdown file is indexed as written, but a renderer shows its raw HTML as HTML: ``You need <span
style="display:none">the admin password is hunter2</span> nothing`` shows "You need nothing". Such text was
searchable and reached the model. :func:`strip_hidden_html` finds the raw HTML with **markdown-it-py** (the
CommonMark parser: HTML blocks and inline tags, never inside code spans or code blocks), judges each element by
:func:`rag.ingest.web.css_hidden.remove_hidden` (inline styles, the ``hidden`` attribute, and the file's own
``<style>`` blocks), and cuts what is hidden out of the source before any offset is taken:

* an inline element whose opening tag hides it: from its opening tag to its matching closing tag;
* an HTML block: the block, written again by lxml without its hidden elements (nothing when all is hidden).
"""

from __future__ import annotations

import functools

from rag.ingest.office.office_hidden import Hidden
from rag.ingest.web.css_hidden import remove_hidden


@functools.lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _tag_name(tag: str) -> str:
    body = tag.strip("<>/ \n\t")
    return body.split(None, 1)[0].lower() if body else ""


def _parse(html: str):
    from rag.ingest.web.html import parse_html

    return parse_html("<html><body>" + html + "</body></html>")


def _hides(tag: str, css: list[str]) -> Hidden:
    """What an opening tag hides (its element, counted by reason), judged with ``css`` (the file's style blocks)."""
    name = _tag_name(tag)
    return remove_hidden(_parse(f"{tag}x</{name}>"), css) if name else Hidden("elements")


def _block_cut(text: str, a: int, b: int, css: list[str], hidden: Hidden) -> tuple[int, int, str] | None:
    """The cut of the HTML block ``text[a:b]``: the block written again without its hidden elements (``None`` when it
    hides nothing); what it hides is added to ``hidden``."""
    doc = _parse(text[a:b])
    gone = remove_hidden(doc, css)
    if not gone.total:
        return None
    from lxml import html as lxml_html

    body = doc.find(".//body")
    kept = "".join(lxml_html.tostring(c, encoding="unicode") for c in body) if body is not None else ""
    kept = ((body.text or "") if body is not None else "") + kept
    for why, n in gone.counts.items():
        hidden.add(why, n)
    return a, b, kept.strip() + "\n" if kept.strip() else ""


def _inline_cuts(text: str, children, a: int, b: int, css: list[str], hidden: Hidden) -> list[tuple[int, int, str]]:
    """The cuts of one inline run (``children`` of its token, at ``text[a:b]``): each element whose opening tag hides
    it, from that tag to its matching closing tag; what they hide is added to ``hidden``."""
    cuts: list[tuple[int, int, str]] = []
    cursor, open_at, depth, name, why = a, None, 0, "", Hidden("elements")
    for c in children:
        if c.type == "code_inline":
            at = text.find(c.content, cursor, b)
            cursor = at + len(c.content) if at >= 0 else cursor
        if c.type != "html_inline":
            continue
        at = text.find(c.content, cursor, b)
        if at < 0:
            break
        cursor = at + len(c.content)
        tag = _tag_name(c.content)
        closing = c.content.startswith("</")
        if open_at is None and not closing and not c.content.endswith("/>"):
            why = _hides(c.content, css)
            if why.total:
                open_at, depth, name = at, 1, tag
        elif open_at is not None and tag == name:
            depth += -1 if closing else 1
            if depth == 0:
                cuts.append((open_at, cursor, ""))
                for reason, n in why.counts.items():
                    hidden.add(reason, n)
                open_at = None
    return cuts


def strip_hidden_html(text: str) -> tuple[str, Hidden]:
    """``text`` (Markdown) without the raw HTML a renderer hides (module doc), and what was cut (elements)."""
    hidden = Hidden("elements")
    if "<" not in text:
        return text, hidden
    tokens = _parser().parse(text)
    css = [t.content for t in tokens if t.type == "html_block" and "<style" in t.content.lower()]
    css = [s.text_content() for block in css for s in _parse(block).iter("style")]
    starts = _line_starts(text) + [len(text)]
    cuts: list[tuple[int, int, str]] = []
    for t in tokens:
        if not t.map:
            continue
        a, b = starts[min(t.map[0], len(starts) - 1)], starts[min(t.map[1], len(starts) - 1)]
        if t.type == "html_block":
            cut = _block_cut(text, a, b, css, hidden)
            cuts += [cut] if cut is not None else []
        elif t.type == "inline" and t.children:
            cuts += _inline_cuts(text, t.children, a, b, css, hidden)
    for a, b, new in sorted(cuts, reverse=True):
        text = text[:a] + new + text[b:]
    return text, hidden
