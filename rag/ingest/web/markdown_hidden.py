"""Raw HTML inside Markdown under the HTML reader's hidden-text rules (issue 37): a ``display:none`` span's text is
not evidence.

A Markdown file is indexed as written, but a renderer shows its raw HTML as HTML: ``You need <span
style="display:none">the admin password is hunter2</span> nothing`` shows "You need nothing". Such text was
searchable and reached the model. :func:`strip_hidden_html` finds the raw HTML with **markdown-it-py** (the
CommonMark parser: HTML blocks and inline tags, never inside code spans or code blocks), judges each element by
:func:`rag.ingest.web.css_hidden.remove_hidden` (inline styles, the ``hidden`` attribute, and the file's own
``<style>`` blocks), and cuts what is hidden out of the source before any offset is taken:

* an inline element whose opening tag hides it: from its opening tag to its matching closing tag;
* an HTML block: the text a reader sees of it, written by the HTML reader's own writer
  (:func:`rag.ingest.web.html.write_html`: headings as ``#`` lines, lists, tables as ``|`` rows, tags and
  attributes dropped, scripts, iframes and images left out) once its hidden elements are removed (nothing when
  it shows nothing: a ``<Youtube id=.../>`` or a bare ``</div>``); a block inside a list or quote keeps its
  line prefix;
* an element a block opens and leaves open, hidden by its opening tag (``<div style="display:none">``, a blank
  line, Markdown, a blank line, ``</div>``: CommonMark ends the HTML block at the blank line, but a browser hides
  the Markdown between): from its opening tag to the end of its matching closing tag, Markdown and all.
"""

from __future__ import annotations

import functools

from rag.ingest.office.office_hidden import Hidden
from rag.ingest.web.css_hidden import remove_hidden


def commonmark():
    """A new markdown-it-py parser as every Markdown reader of this project parses (the reader's hidden-HTML
    pass, the inline renderer, the coverage audit): CommonMark with tables and strikethrough, HTML allowed, and
    a footnote (``[^2]: https://...``, GitHub's and pandoc's syntax) never a link reference definition: CommonMark
    alone read ``[^2]: <url>`` as one, so the footnote vanished and ``[^2][^3]`` became a link reading "^2" (a new
    user's walk, 2026-12-07). The footnotes stay as written: ``[^1]`` marks, ``[^1]: text`` lines."""
    from markdown_it import MarkdownIt

    def footnote_line(state, start: int, end: int, silent: bool) -> bool:
        # a footnote line is a paragraph of its own line: link definitions after it stay definitions (a
        # paragraph would take them in: a reviewer's probe, 2026-12-07)
        at = state.bMarks[start] + state.tShift[start]
        if state.sCount[start] - state.blkIndent >= 4 or not state.src.startswith("[^", at):
            return False
        if silent:
            return True
        token = state.push("paragraph_open", "p", 1)
        token.map = [start, start + 1]
        token = state.push("inline", "", 0)
        token.content, token.map, token.children = state.src[at:state.eMarks[start]].strip(), [start, start + 1], []
        state.push("paragraph_close", "p", -1)
        state.line = start + 1
        return True

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    md.block.ruler.before("reference", "footnote_line", footnote_line)
    return md


@functools.lru_cache(maxsize=1)
def _parser():
    return commonmark()


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


def _as_text(html: str, css: list[str], hidden: Hidden) -> str:
    """What a reader sees of the HTML ``html``, as the HTML reader writes it (module doc); what its CSS hides is
    added to ``hidden``."""
    from rag.ingest.canonical import CanonicalBuilder
    from rag.ingest.web.html import write_html
    from rag.ingest.web.html_main import strip_boilerplate

    doc = _parse(html)
    hidden.merge(remove_hidden(doc, css))
    body = doc.find(".//body")
    if body is None:
        return ""
    strip_boilerplate(body, keep_semantic=True)  # scripts, styles, iframes, forms, comments
    b = CanonicalBuilder()
    write_html(b, body)
    return b.text()


def _block_cut(text: str, a: int, b: int, content: str, css: list[str], hidden: Hidden) -> tuple[int, int, str] | None:
    """The cut of the HTML block ``text[a:b]`` (``content``: its lines without their container prefix): its text as
    a reader sees it (module doc); ``None`` when that cannot be lined up with the source (left as written)."""
    first = text[a:b].split("\n", 1)[0]
    head = content.split("\n", 1)[0]
    if not first.endswith(head):
        return None
    prefix = first[:len(first) - len(head)] if head else ""
    seen = _as_text(content, css, hidden)
    if not seen:
        return a, b, ""
    return a, b, "\n".join((prefix + line).rstrip() if line else prefix.rstrip() for line in seen.split("\n")) + "\n"


#: Elements without a closing tag (never left open).
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def _tag_events(html: str) -> list[tuple[str, str, int, int]]:
    """``(kind, tag, start, end)`` of every start (``"open"``) and end (``"close"``) tag of ``html``, offsets into
    it; void and self-closed elements left out."""
    from html.parser import HTMLParser

    starts = _line_starts(html)
    out: list[tuple[str, str, int, int]] = []

    class _P(HTMLParser):
        def _at(self) -> int:
            line, col = self.getpos()
            return starts[line - 1] + col

        def handle_starttag(self, tag, attrs) -> None:
            if tag not in _VOID:
                at = self._at()
                out.append(("open", tag, at, at + len(self.get_starttag_text() or "")))

        def handle_endtag(self, tag) -> None:
            at = self._at()
            close = html.find(">", at)
            out.append(("close", tag, at, close + 1 if close >= 0 else len(html)))

    p = _P(convert_charrefs=True)
    p.feed(html)
    p.close()
    return out


def _left_open(html: str) -> list[tuple[str, int, int]]:
    """The elements ``html`` opens and does not close: ``(tag, start, end of its opening tag)``, outermost first."""
    stack: list[tuple[str, int, int]] = []
    for kind, tag, s, e in _tag_events(html):
        if kind == "open":
            stack.append((tag, s, e))
            continue
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] == tag:
                del stack[i:]
                break
    return stack


def _closing(text: str, blocks, name: str) -> int | None:
    """The end offset in ``text`` of the tag closing an open ``name`` element, looked for in the HTML blocks
    ``blocks`` (``(start, end)`` in ``text``, in order), or ``None``."""
    depth = 1
    for a, b in blocks:
        for kind, tag, _, e in _tag_events(text[a:b]):
            if tag == name:
                depth += 1 if kind == "open" else -1
                if depth == 0:
                    return a + e
    return None


def _spanning_cut(text: str, a: int, b: int, later, css: list[str], hidden: Hidden) -> tuple[int, int, str] | None:
    """The cut of a hidden element the HTML block ``text[a:b]`` leaves open (module doc): from its opening tag to the
    end of its closing tag in one of the ``later`` HTML blocks; ``None`` when there is none or it hides nothing."""
    for name, s, e in _left_open(text[a:b]):
        why = _hides(text[a + s:a + e], css)
        if not why.total:
            continue
        end = _closing(text, later, name)
        if end is None:
            return None
        for reason, n in why.counts.items():
            hidden.add(reason, n)
        hidden.keep(text[a + e:end])  # the Markdown between (its marks are not words)
        return a + s, end, ""
    return None


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
                hidden.keep(_parse(text[open_at:cursor]).text_content())
                open_at = None
    return cuts


def strip_hidden_html(text: str) -> tuple[str, Hidden]:
    """``text`` (Markdown) without the raw HTML a renderer hides, its HTML blocks as the text a reader sees (module
    doc), and what was cut (elements)."""
    hidden = Hidden("elements")
    if "<" not in text:
        return text, hidden
    tokens = [t for t in _parser().parse(text) if t.map]
    css = [t.content for t in tokens if t.type == "html_block" and "<style" in t.content.lower()]
    css = [s.text_content() for block in css for s in _parse(block).iter("style")]
    starts = _line_starts(text) + [len(text)]

    def span(t) -> tuple[int, int]:
        return starts[min(t.map[0], len(starts) - 1)], starts[min(t.map[1], len(starts) - 1)]

    blocks = [(i, *span(t)) for i, t in enumerate(tokens) if t.type == "html_block"]
    cuts: list[tuple[int, int, str]] = []
    done = 0  # text before this offset is inside a cut already
    for i, t in enumerate(tokens):
        a, b = span(t)
        if a < done:
            continue
        cut = None
        if t.type == "html_block":
            later = [(x, y) for j, x, y in blocks if j > i]
            cut = _spanning_cut(text, a, b, later, css, hidden) or _block_cut(text, a, b, t.content, css, hidden)
        elif t.type == "inline" and t.children:
            cuts += _inline_cuts(text, t.children, a, b, css, hidden)
        if cut is not None:
            if cut[0] > a:  # what the block shows before the hidden element it leaves open
                cut = (a, cut[1], _as_text(text[a:cut[0]], css, hidden) + ("\n" if text[a:cut[0]].strip() else ""))
            cuts.append(cut)
            done = cut[1]
    for a, b, new in sorted(cuts, reverse=True):
        text = text[:a] + new + text[b:]
    return text, hidden
