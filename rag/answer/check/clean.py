"""Design stage 8, server side: clean the model's text before anyone sees it (split from ``attribute``, issue 24).

* :func:`clean_citations` removes ``[n]`` markers that refer to no source (and counts them), and strips the
  model's links and URLs so nothing it writes can become a link, and lines that only echo a source heading;
* :class:`CitationStreamFilter` does the same on a token stream so an invalid marker is never shown, not
  even for a moment;
* :func:`markers` lists the source numbers a text cites.

:mod:`rag.answer.check.attribute` re-exports these names (its callers import them from there).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rag.text import MARKER_RE


def _last_word_start(text: str) -> int:
    """Where the text's last word begins, with the whitespace before it (what ``\\s*\\S*\\Z`` found; a scan from
    the end, linear: issue 35)."""
    j = len(text)
    while j > 0 and not text[j - 1].isspace():
        j -= 1
    while j > 0 and text[j - 1].isspace():
        j -= 1
    return j


MD_LINK_RE = re.compile(r"!?\[([^\[\]\n]{0,300})\]\(([^)\s]{0,500})(?:\s+\"[^\"]*\")?\)")
URL_RE = re.compile(r"(?:(?:https?|ftp|file)://|\bwww\.)[^\s<>\]\)]*[^\s<>\]\).,;:!?'\"]", re.I)
CODE_RE = re.compile(r"`[^`\n]*`")
_NUM_RE = re.compile(r"\d+")


@dataclass(frozen=True)
class CleanResult:
    """Output of :func:`clean_citations`: ``text`` with only valid markers; counts of what was removed."""

    text: str
    invalid_removed: int
    links_removed: int
    labels_removed: int = 0


def _norm_line(line: str) -> str:
    return re.sub(r"\s+", " ", line).strip().rstrip(":").strip().casefold()


def remove_echoed_labels(text: str, echoes: Iterable[str]) -> tuple[str, int]:
    """Remove whole lines that only repeat a source heading of the prompt (``[n] Section heading``, marker optional).

    The small model often copies the source list instead of answering; those
    lines are identifiers, never claims. Returns ``(text, lines_removed)``.
    """
    keys = {_norm_line(e) for e in echoes if e.strip()}
    if not keys:
        return text, 0
    lines = text.split("\n")
    kept = [ln for ln in lines if _norm_line(ln) not in keys or not ln.strip()]
    return "\n".join(kept), len(lines) - len(kept)


def _protected_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in CODE_RE.finditer(text)]


def _inside(pos: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(a <= pos < b for a, b in spans)


def _sub_outside_code(pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str], text: str) -> tuple[str, int]:
    """``pattern.sub(repl, text)`` except for matches that start inside backticks (left as they are), and how many
    matches were replaced."""
    code = _protected_spans(text)
    count = 0

    def one(m: re.Match[str]) -> str:
        nonlocal count
        if _inside(m.start(), code):
            return m.group(0)
        count += 1
        return repl(m)

    return pattern.sub(one, text), count


def _unlink(m: re.Match[str]) -> str:
    """A Markdown link's label without its link; ``[2](url)``, a citation the model tried to link, keeps its marker."""
    label = m.group(1)
    return f"[{label}]" if MARKER_RE.fullmatch(f"[{label}]") else label


def clean_citations(text: str, valid: Iterable[int], echoes: Iterable[str] = ()) -> CleanResult:
    """Keep only ``[n]`` markers whose ``n`` is in ``valid``; remove the model's links and URLs.

    * ``[1, 7]`` with 7 invalid becomes ``[1]``; ``[7]`` alone is removed with
      the whitespace before it; each invalid number counts once in
      ``invalid_removed``. Valid groups are rewritten ``[1][2]``.
    * Markdown links ``[title](url)`` become ``title``; bare URLs are removed;
      each counts in ``links_removed``. The server, never the model, makes links.
    * Text inside backticks (code) is left alone (``x[0]`` is not a citation).
    * Lines that only repeat a prompt source header (``echoes``, e.g.
      ``[1] Install on Linux``) are removed and counted in ``labels_removed``.
    """
    ok = set(valid)
    text, labels = remove_echoed_labels(text, echoes)
    text, md_links = _sub_outside_code(MD_LINK_RE, _unlink, text)
    text, urls = _sub_outside_code(URL_RE, lambda m: "", text)
    links = md_links + urls
    code = _protected_spans(text)
    removed = 0
    out: list[str] = []
    last = 0
    run: set[int] = set()  # numbers already kept in the current run of adjacent markers
    for m in MARKER_RE.finditer(text):
        if _inside(m.start(), code):
            continue
        if m.start() != last:
            run = set()
        nums = [int(x) for x in _NUM_RE.findall(m.group(1))]
        keep = [n for n in dict.fromkeys(n for n in nums if n in ok) if n not in run]
        run.update(keep)
        removed += sum(1 for n in dict.fromkeys(nums) if n not in ok)
        before = text[last : m.start()]
        if keep:
            out.append(before + "".join(f"[{n}]" for n in keep))
        else:
            out.append(before.rstrip(" \t") if not run else before)
        last = m.end()
    out.append(text[last:])
    return CleanResult("".join(out), removed, links, labels)


def markers(text: str) -> list[int]:
    """The source numbers cited in ``text``, in order of first appearance, code spans excluded."""
    code = _protected_spans(text)
    nums: list[int] = []
    for m in MARKER_RE.finditer(text):
        if not _inside(m.start(), code):
            nums.extend(int(x) for x in _NUM_RE.findall(m.group(1)))
    return list(dict.fromkeys(nums))


class CitationStreamFilter:
    """Apply :func:`clean_citations` to a token stream without ever showing an invalid marker.

    ``feed(piece)`` returns the text that is safe to show now; ``finish()`` the
    rest. Text is held back from the last whitespace (a marker, link or URL may
    still be growing) and from any ``[`` or ``(`` not yet closed; the shown
    pieces concatenate to exactly ``clean_citations(raw, valid).text``.
    """

    #: An unclosed ``[`` older than this many characters is taken as a plain bracket.
    MAX_HOLD = 400

    def __init__(self, valid: Iterable[int], echoes: Iterable[str] = ()):
        self.valid = set(valid)
        self.echoes = tuple(echoes)
        self._keys = tuple(_norm_line(e) for e in self.echoes if e.strip())
        self.raw = ""
        self.shown = ""

    def _safe_cut(self) -> int:
        raw = self.raw
        cut = _last_word_start(raw)
        lo = max(0, cut - self.MAX_HOLD)
        for opener, closer in (("[", "]"), ("(", ")")):
            i = raw.rfind(opener, lo, cut)
            if i != -1 and raw.find(closer, i, cut) == -1:
                cut = i
        j = raw.rfind("](", lo, cut)
        if j != -1 and raw.find(")", j, cut) == -1:
            cut = min(cut, raw.rfind("[", 0, j) if raw.rfind("[", 0, j) != -1 else j)
        # hold back a line that may still turn out to be an echoed source header
        ls = raw.rfind("\n") + 1
        cur = _norm_line(raw[ls:])
        if cur and any(k.startswith(cur) for k in self._keys):
            cut = min(cut, ls)
        # never end on whitespace: an invalid marker removed later takes the space before it
        return len(raw[:cut].rstrip())

    def _emit(self, upto: str) -> str:
        clean = clean_citations(upto, self.valid, self.echoes).text
        if not clean.startswith(self.shown):  # should not happen; stay correct rather than pretty
            return ""
        new = clean[len(self.shown) :]
        self.shown = clean
        return new

    def feed(self, piece: str) -> str:
        """Add ``piece`` of raw model text; return the newly safe cleaned text (may be empty)."""
        self.raw += piece
        return self._emit(self.raw[: self._safe_cut()])

    def finish(self) -> str:
        """The remaining cleaned text once the stream has ended."""
        clean = clean_citations(self.raw, self.valid, self.echoes).text
        new = clean[len(self.shown) :] if clean.startswith(self.shown) else ""
        self.shown = clean
        return new
