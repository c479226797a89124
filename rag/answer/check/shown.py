"""How the claim check's sentences are written back as one answer on screen (the chat, the export, the CLI): fenced
code blocks kept whole and inert. Pure functions on strings (moved out of :mod:`rag.answer.check.attribute`, which
reads :func:`code_block` and :func:`with_cites` (:func:`cite_at`) to write a sentence with its citations)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.text import FENCE_RE, strip_markers


def code_block(piece: str) -> tuple[str, str] | None:
    """``(info, code)`` when answer piece ``piece`` (of :func:`split_sentences`) is a fenced code block: the fence's
    info string ("bash") and the lines between the fences, markers after the closing fence left out; else ``None``."""
    lines = strip_markers(piece).strip().split("\n")
    if not FENCE_RE.match(lines[0]):
        return None
    body = lines[1:-1] if len(lines) > 1 and FENCE_RE.match(lines[-1]) else lines[1:]
    return lines[0].strip().lstrip("`~").strip(), "\n".join(body)


def code_fence(info: str, code: str) -> str:
    """``code`` as a fenced Markdown code block (inert: nothing in a code block is read as Markdown or HTML), its
    fence longer than any run of backticks in ``code`` so that the code cannot close it; ``info`` kept only when it
    is one plain word ("bash", "c++")."""
    run = max((len(m.group(0)) for m in re.finditer(r"`+", code)), default=0)
    fence = "`" * max(3, run + 1)
    lang = info if info.isascii() and info.replace("-", "").replace("+", "").isalnum() else ""
    return f"{fence}{lang}\n{code}\n{fence}"


#: The last words after which a full stop is the word's own, not (only) the sentence's.
_ABBREVIATIONS = frozenset({"etc", "al", "vs", "cf", "approx", "incl", "resp"})


def cite_at(body: str) -> int:
    """Where citation markers go in ``body`` (a sentence without markers, trailing space removed): before its
    closing punctuation, the way the answer writes them ("A is B [1]."), as a character offset into
    ``body.rstrip()``. A full stop that may be a word's own stays before the markers: after a sign ("alt-." was
    shown as "alt- [2]." in a new user's walk, 2026-12-06), after an abbreviation ("etc.") or a word with a dot
    inside ("e.g.", "Node.js.", "U.S.?"), and a path's ".." ("cd .."). A run of marks ("?!", "...") stays whole
    after them."""
    text = body.rstrip()
    k = len(text)
    while k > 0 and text[k - 1] in ".!?:;":
        k -= 1
    run, before = text[k:], text[:k]
    words = before.split()
    last = words[-1] if words else ""
    if run == "..":  # a path's parent ("cd .."), never a sentence's end
        return len(text)
    own_dot = run[:1] == "." and (not before or not (before[-1].isalnum() or before[-1] in ")]\"'’”*_`")
                                  or "." in last or last.casefold().strip("(") in _ABBREVIATIONS)
    if not own_dot:
        return k
    return len(text) if run == "." else k + 1  # "Is it U.S.?": the word keeps its dot, the question mark follows


def with_cites(body: str, cites: str) -> str:
    """``body`` with ``cites`` (``"[1][2]"``) at :func:`cite_at`, every character of ``body`` kept (trailing space
    removed); ``body`` alone without ``cites``."""
    text = body.rstrip()
    if not cites:
        return text
    k = cite_at(text)
    return f"{text[:k]} {cites}{text[k:]}"


def join_shown(parts: Sequence[str]) -> str:
    """The shown sentences of an answer as one text: joined by spaces, a fenced code block (:func:`code_block`) on
    lines of its own so that it stays a code block."""
    out = ""
    for k, part in enumerate(parts):
        block = code_block(part) is not None
        if k:
            out += "\n" if block or code_block(parts[k - 1]) is not None else " "
        out += part
    return out
