"""Design stage 8, server side: check what the model wrote before anyone sees it.

Pure functions on real strings, no model here:

* :func:`clean_citations` removes ``[n]`` markers that refer to no source
  (and counts them), and strips the model's links and URLs so nothing it
  writes can become a link; :class:`CitationStreamFilter` does the same on a
  token stream so an invalid marker is never shown, not even for a moment;
* :func:`split_sentences` cuts an answer into sentences (lines, then
  :func:`rag.text.sentence_spans`), each keeping the markers written after it;
* :func:`lexical_support` / :func:`attribute` decide, per sentence, which
  sources support it (lexical overlap of :func:`rag.text.content_words`, optionally combined
  with MiniLM cosine similarity computed by the caller), mark unsupported
  sentences, report sentences cited to the wrong source, and attach the
  best-supporting source, marked *inferred*, where the model cited nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from rag.text import MARKER_RE, content_words, sentence_spans

MD_LINK_RE = re.compile(r"!?\[([^\]\n]{0,300})\]\(([^)\s]{0,500})(?:\s+\"[^\"]*\")?\)")
URL_RE = re.compile(r"(?:(?:https?|ftp|file)://|\bwww\.)[^\s<>\]\)]*[^\s<>\]\).,;:!?'\"]", re.I)
CODE_RE = re.compile(r"`[^`\n]*`")
_NUM_RE = re.compile(r"\d+")

#: A sentence whose content words are at least this share in a source is supported by it (lexical leg).
LEX_MIN = 0.5
#: MiniLM cosine similarity (sentence vs source quote) at or above which the source supports it (semantic leg).
COS_MIN = 0.6
#: Fewer content words than this: not a claim (e.g. "Yes."), never marked unsupported.
MIN_CLAIM_WORDS = 3

DECLINE_RE = re.compile(
    r"\b(?:sources?|context|documents?|provided (?:text|information|sources?))\b[^.]{0,40}?"
    r"\b(?:do|does|did)(?:\s+not|n['’]t)\s+(?:contain|provide|mention|include|say|cover|answer|specify|state)"
    r"|\bno (?:relevant )?information\b|\bnot (?:mentioned|covered|found|provided) in the (?:sources?|context)\b"
    r"|\b(?:cannot|can['’]t|unable to) (?:answer|find|determine)\b",
    re.I,
)

#: A sentence that ends on its markers right after a word needing a complement ("... is [3].", "... given in
#: [1] [2].") points at a source instead of saying what it says: the 0.5B did this on the DPR paper.
DANGLING_RE = re.compile(
    r"\b(?:is|are|was|were|be|been|in|by|of|as|at|to|from|on|called|named|uses?|using|see|given|shown|described|"
    r"defined|listed|explained|the|a|an)\s*(?:" + MARKER_RE.pattern + r"\s*(?:and\s*)?)+[.!?:]?\s*$",
    re.I,
)


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
    links = 0
    code = _protected_spans(text)

    def _link(m: re.Match) -> str:
        nonlocal links
        if _inside(m.start(), code):
            return m.group(0)
        links += 1
        label = m.group(1)
        # "[2](url)": a citation the model tried to link; keep the marker, drop the link
        return f"[{label}]" if MARKER_RE.fullmatch(f"[{label}]") else label

    text = MD_LINK_RE.sub(_link, text)
    code = _protected_spans(text)

    def _url(m: re.Match) -> str:
        nonlocal links
        if _inside(m.start(), code):
            return m.group(0)
        links += 1
        return ""

    text = URL_RE.sub(_url, text)
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
        cut = re.search(r"\s*\S*\Z", raw).start()
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


_LEADING_MARKERS_RE = re.compile(r"^(?:\s*" + MARKER_RE.pattern + r")+", re.I)


def split_sentences(text: str) -> list[str]:
    """Split an answer into sentences; markers written after a full stop stay with the sentence before.

    Lines (list items, paragraphs) are split first, then into sentences by
    :func:`rag.text.sentence_spans` (the chunker's rule: a full stop and a
    next word that is not lower-case, abbreviations excepted). ``"A is B. [1] C is D [2]."`` gives
    ``["A is B. [1]", "C is D [2]."]``. A marker that opens a line belongs to
    that line (the small model writes lists as ``[1] claim``), unless the line
    holds nothing else. Empty pieces are dropped.
    """
    pieces: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        parts = [line[a:b] for a, b in sentence_spans(line)]
        for k, part in enumerate(parts):
            part = part.strip()
            if not part:
                continue
            lead = _LEADING_MARKERS_RE.match(part)
            if lead and pieces and (k > 0 or not part[lead.end() :].strip()):
                pieces[-1] = pieces[-1] + " " + lead.group(0).strip()
                part = part[lead.end() :].strip()
            if part and not (MARKER_RE.fullmatch(part) and pieces):
                pieces.append(part)
            elif part:
                pieces[-1] = pieces[-1] + " " + part
    return pieces


def lexical_support(sentences: Sequence[str], quotes: Sequence[str]) -> np.ndarray:
    """``(n_sentences, n_sources)`` float32: share of each sentence's content words found in each quote.

    1.0 means every content word of the sentence occurs in the source; a
    sentence with no content words scores 0 everywhere.
    """
    qsets = [content_words(q) for q in quotes]
    out = np.zeros((len(sentences), len(quotes)), dtype=np.float32)
    for i, s in enumerate(sentences):
        words = content_words(s)
        if not words:
            continue
        for j, qs in enumerate(qsets):
            out[i, j] = len(words & qs) / len(words)
    return out


def is_decline(sentence: str) -> bool:
    """Whether ``sentence`` says the sources do not contain the answer (never marked unsupported)."""
    return bool(DECLINE_RE.search(sentence))


@dataclass(frozen=True)
class SentenceAttribution:
    """The server's verdict on one answer sentence.

    ``cited``: valid source numbers the model wrote; ``supported_by``: sources
    that support it, best first (for an *inferred* sentence, the one attached);
    ``unsupported``: a claim no source supports; ``inferred``: the model cited
    nothing and the server attached ``supported_by[0]``; ``miscited``: cited,
    but only to sources that do not support it while another one does;
    ``declines``: says the sources lack the answer; ``dangling``: points at a
    source instead of saying what it says (:data:`DANGLING_RE`, "X is [3].");
    ``claim``: has at least :data:`MIN_CLAIM_WORDS` content words, does not
    decline and does not dangle (a bare ``[1] [2]`` or ``59.2s`` is no claim,
    and its markers cite nothing).
    """

    text: str
    cited: tuple[int, ...]
    supported_by: tuple[int, ...]
    unsupported: bool
    inferred: bool
    miscited: bool = False
    declines: bool = False
    claim: bool = True
    dangling: bool = False

    def to_json(self) -> dict:
        """The JSON shape pinned by the CLI contract (``text, cited, supported_by, unsupported, inferred``)."""
        return {
            "text": self.text,
            "cited": list(self.cited),
            "supported_by": list(self.supported_by),
            "unsupported": self.unsupported,
            "inferred": self.inferred,
        }


def support_matrix(lexical: np.ndarray, cosine: np.ndarray | None, *, lex_min: float = LEX_MIN, cos_min: float = COS_MIN) -> np.ndarray:
    """Boolean ``(n_sentences, n_sources)``: supported if lexical share >= ``lex_min`` or cosine >= ``cos_min``.

    With ``cosine=None`` only the lexical leg decides.
    """
    sup = lexical >= lex_min
    if cosine is not None:
        sup = sup | (cosine >= cos_min)
    return sup


def attribute(
    sentences: Sequence[str],
    source_indices: Sequence[int],
    lexical: np.ndarray,
    cosine: np.ndarray | None = None,
    *,
    lex_min: float = LEX_MIN,
    cos_min: float = COS_MIN,
) -> list[SentenceAttribution]:
    """Attribute each sentence to the sources (``source_indices[j]`` is the ``n`` of column ``j``).

    ``lexical`` (and optional ``cosine``) are ``(n_sentences, n_sources)``
    scores from :func:`lexical_support` / the embedder. Ranking of supporting
    sources: lexical share plus cosine (when given), descending.
    """
    sup = support_matrix(lexical, cosine, lex_min=lex_min, cos_min=cos_min)
    rank = lexical + (cosine if cosine is not None else 0.0)
    valid = set(source_indices)
    out = []
    for i, s in enumerate(sentences):
        cited = tuple(n for n in markers(s) if n in valid)
        declines = is_decline(s)
        dangling = bool(DANGLING_RE.search(s))
        claim = len(content_words(s)) >= MIN_CLAIM_WORDS and not declines and not dangling
        order = np.argsort(-rank[i], kind="stable") if len(source_indices) else []
        supported = tuple(source_indices[j] for j in order if sup[i, j])
        inferred = bool(claim and not cited and supported)
        miscited = bool(cited and supported and not set(cited) & set(supported))
        if inferred:
            supported = supported[:1]
        out.append(
            SentenceAttribution(
                text=s,
                cited=cited,
                supported_by=supported if claim else (),
                unsupported=bool(claim and not supported),
                inferred=inferred,
                miscited=miscited,
                declines=declines,
                claim=claim,
                dangling=dangling,
            )
        )
    return out
