"""Markdown's inline markup rendered to the text a reader sees (issue 37): ``[GSA's generic clearance](https://...)``
reads "GSA's generic clearance", ``You _do not_ need`` reads "You do not need".

The canonical text of a Markdown file is what a rendered page shows, in the block layout every reader of this
project writes (:mod:`rag.ingest.canonical`: ``#`` headings, ``- `` and ``1. `` list items, ``|`` table rows,
code fenced): so the *blocks* stay as the source has them, line for line, and only the *inline* markup inside
paragraphs, headings and table cells is rendered, by **markdown-it-py** (CommonMark with tables and
strikethrough, the parser :mod:`rag.ingest.web.markdown_hidden` uses):

* emphasis, strong and strikethrough marks dropped (``**TTFT**`` -> ``TTFT``; ``snake_case`` stays, as
  CommonMark says);
* a link is its text (inline, reference and autolinks: ``<https://x.org>`` -> ``https://x.org``); an image is
  its alt text; the URL of neither is shown;
* backslash escapes and character references resolved (``\\*`` -> ``*``, ``&amp;`` -> ``&``);
* a code span stays marked as code, backticks and all, as a fenced block keeps its fences: the backticks are
  where the code ends (``the `labels` have been padded with `-100`s``); without them "-100s" is one word, and
  on the course corpus that cost a question (q17: hybrid rank 2 -> 10 and 9 -> not in the top 20; measured
  2026-12-03, docs/extraction.md);
* raw inline HTML tags dropped, their text kept (``<kbd>Ctrl</kbd>`` -> ``Ctrl``; hidden HTML was cut before, by
  :func:`rag.ingest.web.markdown_hidden.strip_hidden_html`);
* ``$$ ... $$`` display math is kept as its TeX (as the HTML reader keeps a formula's TeX), escapes and all.

Left as written: code blocks and fences, block markers (``#``, ``>``, list markers; HTML blocks were written as their text by
:func:`rag.ingest.web.markdown_hidden.strip_hidden_html`), line breaks (a
paragraph keeps its lines: a soft break stays a line end), link reference definitions (removed afterwards by
:func:`rag.ingest.textfile.strip_reference_definitions`, with its warning). A line is rewritten only when the
parser's view of it is exactly the source line's tail (or, for headings and table cells, found in it); anything
else (a code span across lines, a tab-expanded container) keeps its source line.

Everything happens before any offset is taken (design stage 1): headings, chunks and citations point into the
rendered text, and ``canonical[start:end]`` is what was stored. The evaluation renders the course corpus's
needles, which quote the Markdown source, with the same function (:func:`render_markdown`).
"""

from __future__ import annotations

import functools

#: Inline tokens whose own text is what a reader sees.
_TEXT_TOKENS = {"text", "math_inline"}
#: Inline tokens that are markup only (their children or neighbours carry the text).
_MARK_TOKENS = {"em_open", "em_close", "strong_open", "strong_close", "s_open", "s_close", "link_open",
                "link_close", "html_inline"}


def _display_math(state, silent: bool) -> bool:
    """``$$ ... $$`` inside a paragraph: one token holding the source between the marks, escapes unresolved."""
    src, pos = state.src, state.pos
    if not src.startswith("$$", pos):
        return False
    end = src.find("$$", pos + 2)
    if end < 0 or end == pos + 2:
        return False
    if not silent:
        token = state.push("math_inline", "", 0)
        token.content = src[pos:end + 2]
    state.pos = end + 2
    return True


@functools.lru_cache(maxsize=1)
def _parser():
    from rag.ingest.web.markdown_hidden import commonmark

    md = commonmark()
    md.inline.ruler.before("escape", "display_math", _display_math)
    return md


def _inline_text(children) -> str:
    """What a reader sees of one inline token's children: text without marks, soft and hard breaks as line ends."""
    out: list[str] = []
    for child in children or ():
        kind = child.type
        if kind in _TEXT_TOKENS:
            out.append(child.content)
        elif kind == "code_inline":  # code stays marked as code, as a fence does (module doc)
            pad = " " if child.content[:1] == "`" or child.content[-1:] == "`" else ""
            out.append(f"{child.markup}{pad}{child.content}{pad}{child.markup}")
        elif kind in ("softbreak", "hardbreak"):
            out.append("\n")
        elif kind == "image":
            out.append(_inline_text(child.children) or child.content)
        elif kind == "html_inline" and child.content[:3].lower() == "<br":
            out.append(" ")
        elif kind not in _MARK_TOKENS:
            out.append(child.content)
    return "".join(out)


def _rewrite(lines: list[str], token, parent: str, rendered: str) -> bool:
    """Put ``rendered`` (one inline token as read) in place of its source in ``lines``; False when the token's lines
    do not line up with the source (the source is then kept)."""
    first, last = token.map
    source = token.content.split("\n")
    seen = rendered.split("\n")
    if len(source) != last - first or len(seen) != len(source):
        if parent in ("th", "td") and len(source) == 1 and len(seen) == 1:
            last = first + 1
        else:
            return False
    new = []
    for i, (src, out) in enumerate(zip(source, seen, strict=True)):
        line = lines[first + i]
        if parent in ("th", "td"):
            out = out.replace("|", "\\|")
            at = line.find(src, token.meta.get("from", 0)) if src else -1
            if at < 0:
                return False
            token.meta["end"] = at + len(out)
            new.append(line[:at] + out + line[at + len(src):])
            continue
        if parent == "heading" and i == 0:
            hashes = len(line) - len(line.lstrip(" >\t"))
            hashes += len(line[hashes:]) - len(line[hashes:].lstrip("#"))
            at = line.find(src, hashes)
            if at < 0:
                return False
            new.append(line[:at] + out + line[at + len(src):])
            continue
        tail = line.rstrip()
        src = src.rstrip()
        if not src or not tail.endswith(src):
            return False
        # a line the markup did not touch stays as written, trailing spaces and all
        new.append(line if out.rstrip() == src else tail[:len(tail) - len(src)] + out + line[len(tail):])
    lines[first:first + len(new)] = new
    return True


def render_markdown(text: str) -> str:
    """``text`` (Markdown) with its inline markup rendered (module doc); the lines and blocks stay."""
    if not any(ch in text for ch in "*_`[]<>\\&~!$"):
        return text
    lines = text.split("\n")
    parent = ""
    row_from: dict[int, int] = {}
    for token in _parser().parse(text):
        if token.type.endswith("_open"):
            parent = {"heading_open": "heading", "th_open": "th", "td_open": "td"}.get(token.type, parent)
            if token.type == "paragraph_open":
                parent = "paragraph"
            continue
        if token.type != "inline" or not token.map:
            continue
        rendered = _inline_text(token.children)
        if parent in ("th", "td"):  # cells of one row are found left to right, changed or not
            row = token.map[0]
            token.meta = {**(token.meta or {}), "from": row_from.get(row, 0)}
            if _rewrite(lines, token, parent, rendered):
                row_from[row] = token.meta["end"]
        elif rendered != token.content:
            _rewrite(lines, token, parent, rendered)
    return "\n".join(lines)
