"""Design stage 8, server side: check what the model wrote before anyone sees it.

Pure functions on real strings, no model here:

* :func:`clean_citations` removes ``[n]`` markers that refer to no source
  (and counts them), and strips the model's links and URLs so nothing it
  writes can become a link; :class:`CitationStreamFilter` does the same on a
  token stream so an invalid marker is never shown, not even for a moment;
* :func:`split_sentences` cuts an answer into sentences (lines, then
  :func:`rag.text.sentence_spans`), each keeping the markers written after it;
* :func:`lexical_support` / :func:`attribute` are the claim check (issue 14): what a sentence ADDS to
  the question (:func:`novel_roots`, its claim words the question lacks) must be in the source it cites
  (lexical share of those words, or MiniLM cosine computed by the caller with part of them), and every
  number, date, version or name it adds (:func:`specifics`) must occur in that source (:func:`holds`).
  A sentence that only restates the question (or asks one), or ends in a bare ``[n]`` after a copula,
  is no claim and never carries a citation. Each sentence gets a :class:`ClaimVerdict`: supported, inferred
  (the server attaches the source that supports it), unsupported, echo, dangling, declines, no claim.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from rag.text import MARKER_RE, content_words, sentence_spans, strip_markers

MD_LINK_RE = re.compile(r"!?\[([^\]\n]{0,300})\]\(([^)\s]{0,500})(?:\s+\"[^\"]*\")?\)")
URL_RE = re.compile(r"(?:(?:https?|ftp|file)://|\bwww\.)[^\s<>\]\)]*[^\s<>\]\).,;:!?'\"]", re.I)
CODE_RE = re.compile(r"`[^`\n]*`")
_NUM_RE = re.compile(r"\d+")

#: A sentence whose content words are at least this share in a source is supported by it (lexical leg).
LEX_MIN = 0.5
#: MiniLM cosine similarity (sentence vs source quote) at or above which the source supports it (semantic leg).
COS_MIN = 0.6
#: With the question known, the MiniLM leg needs at least this share of the sentence's new words in the source.
NOVEL_MIN = 0.25
#: Fewer content words than this: not a claim (e.g. "Yes."), never marked unsupported.
MIN_CLAIM_WORDS = 2

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


def is_decline(sentence: str) -> bool:
    """Whether ``sentence`` says the sources do not contain the answer (never marked unsupported)."""
    return bool(DECLINE_RE.search(sentence))


class ClaimVerdict(StrEnum):
    """The claim check's verdict on one answer sentence (issue 14); ``ask --json`` shows it per sentence.

    Only ``supported`` and ``inferred`` sentences carry a citation on screen.
    """

    SUPPORTED = "supported"      # a claim its cited source supports (words the question lacks, numbers, names)
    INFERRED = "inferred"        # a claim the model cited to no source or to one that lacks it; the server
                                 # attaches the source that supports it
    UNSUPPORTED = "unsupported"  # a claim no source supports, or whose number / name no source holds
    ECHO = "echo"                # restates the question (adds no word of its own) or asks one: not a claim
    DANGLING = "dangling"        # points at a source instead of saying what it says ("X is [3].")
    DECLINES = "declines"        # says the sources do not contain the answer
    NO_CLAIM = "no_claim"        # too few words to claim anything ("Yes.", a bare "[1] [2]")


#: Verdicts that carry a citation on screen.
CITED_VERDICTS = (ClaimVerdict.SUPPORTED, ClaimVerdict.INFERRED)


@dataclass(frozen=True)
class SentenceAttribution:
    """The server's verdict on one answer sentence.

    ``cited``: valid source numbers the model wrote; ``supported_by``: sources
    that support it, best first (for an *inferred* sentence, the one attached);
    ``unsupported``: a claim no source supports; ``inferred``: the server attached
    ``supported_by[0]`` because the model cited nothing that supports it; ``miscited``: cited,
    but only to sources that do not support it while another one does;
    ``declines``: says the sources lack the answer; ``dangling``: points at a
    source instead of saying what it says (:data:`DANGLING_RE`, "X is [3].");
    ``echo``: restates the question, adding no word of its own, or is a question;
    ``claim``: has at least :data:`MIN_CLAIM_WORDS` content words, does not
    decline, dangle or echo (a bare ``[1] [2]`` or ``59.2s`` is no claim,
    and its markers cite nothing); ``verdict`` (:class:`ClaimVerdict`) sums these up, ``reason`` says why in
    words; ``missing`` the numbers / names of the sentence (not in the question) that the source it would
    cite lacks.
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
    echo: bool = False
    verdict: ClaimVerdict | None = None
    reason: str = ""
    missing: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.verdict is None:  # built from the flags alone (older callers, tests): derive it
            v = (ClaimVerdict.DECLINES if self.declines else ClaimVerdict.DANGLING if self.dangling else ClaimVerdict.ECHO
                 if self.echo else ClaimVerdict.NO_CLAIM if not self.claim else ClaimVerdict.UNSUPPORTED if self.unsupported
                 else ClaimVerdict.INFERRED if self.inferred else ClaimVerdict.SUPPORTED)
            object.__setattr__(self, "verdict", v)

    @property
    def shown_cites(self) -> tuple[int, ...]:
        """The source numbers shown after this sentence: the cited sources that support it (``supported``),
        the attached one (``inferred``), none otherwise (an echo or a dangling sentence never carries one)."""
        if self.verdict == ClaimVerdict.SUPPORTED:
            return tuple(n for n in self.cited if n in self.supported_by) or self.supported_by[:1]
        if self.verdict == ClaimVerdict.INFERRED:
            return self.supported_by[:1]
        return ()

    @property
    def body(self) -> str:
        """The sentence without its ``[n]`` markers."""
        return strip_markers(self.text)

    @property
    def passed(self) -> bool:
        """A claim that passed the check (its sentence is shown with a citation)."""
        return self.verdict in CITED_VERDICTS

    def shown(self) -> str:
        """The sentence as the checked answer shows it: its words, then its :attr:`shown_cites` as ``[n]``."""
        body = self.body
        cites = "".join(f"[{n}]" for n in self.shown_cites)
        if not cites:
            return body
        end = len(body.rstrip(".!?:;"))
        return f"{body[:end]} {cites}{body[end:]}"

    def to_json(self) -> dict:
        """The JSON shape of ``ask --json``'s ``answer_sentences``: ``text, cited, supported_by, unsupported,
        inferred`` (pinned by issue 5) then ``verdict, reason, cites`` (issue 14; ``cites`` = :attr:`shown_cites`)."""
        return {
            "text": self.text,
            "cited": list(self.cited),
            "supported_by": list(self.supported_by),
            "unsupported": self.unsupported,
            "inferred": self.inferred,
            "verdict": str(self.verdict),
            "reason": self.reason,
            "cites": list(self.shown_cites),
        }


# --------------------------------------------------------------------------- what a sentence adds

#: A word of this many letters or more matches another with the same first :data:`ROOT_LEN` letters
#: ("tokenization" / "tokenizer", "efficient" / "efficiency"): a light stem for the claim check only.
ROOT_MIN = 7
ROOT_LEN = 6

#: A token that names a specific: it holds a digit (a number, date, version: ``0.1``, ``2026``, ``v2.1``,
#: ``GPT-2``) or a capital after its first letter, or is capitalised inside a sentence (a name: ``Alpaca``,
#: ``HBM``, ``FlashAttention``).
_TOKEN_RE = re.compile(r"[^\W_](?:[\w.,\-/]*[^\W_])?")


def _root(word: str) -> str:
    return word[:ROOT_LEN] if len(word) >= ROOT_MIN else word


def roots(text: str) -> set[str]:
    """The claim words of ``text`` (:func:`rag.text.content_words`) reduced to their roots (:data:`ROOT_LEN`)."""
    return {_root(w) for w in content_words(text)}


def novel_roots(sentence: str, question: str | None) -> set[str]:
    """The roots of ``sentence``'s claim words that the question does not have: what the sentence adds.

    ``question=None`` counts every word as new (a check without the question).
    """
    words = roots(sentence)
    return words - roots(question) if question else words


def specifics(text: str) -> set[str]:
    """The numbers, dates, versions and names in ``text`` (markers removed), case-folded, thousands
    separators dropped: ``"GPT-2 scored 1,200 on MMLU in 2023 [1]."`` -> ``{"gpt-2", "1200", "mmlu", "2023"}``.

    A name is a word with a capital letter that does not open the sentence (or one with a capital after
    its first letter, anywhere); a number is any token holding a digit.
    """
    out = set()
    body = strip_markers(text)
    for k, m in enumerate(_TOKEN_RE.finditer(body)):
        tok = m.group(0).rstrip(".,")
        if not tok:
            continue
        opens = k == 0 or body[: m.start()].rstrip().endswith((".", ":", "!", "?", "\n", "-", "*"))
        if any(ch.isdigit() for ch in tok):
            out.add(re.sub(r"(?<=\d),(?=\d{3})", "", tok).casefold())
        elif any(ch.isupper() for ch in tok[1:]) or (tok[0].isupper() and not opens):
            out.add(tok.casefold())
    return out


def holds(source: str, specific: str) -> bool:
    """Whether ``source`` contains ``specific`` (from :func:`specifics`) as a whole token, case-insensitive,
    thousands separators ignored (``1200`` is found in ``1,200``, ``6`` is not found in ``805`` or ``6.5``)."""
    text = re.sub(r"(?<=\d),(?=\d{3})", "", source).casefold()
    pat = r"(?<![\w.])" + re.escape(specific) + r"(?![\w]|\.\d)"
    if re.search(pat, text):
        return True
    # a name's plural or possessive ("Transformers", "BERT's") still names it
    return not any(ch.isdigit() for ch in specific) and re.search(r"(?<![\w])" + re.escape(specific) + r"(?:s|'s|’s)?(?!\w)", text) is not None


def lexical_support(sentences: Sequence[str], quotes: Sequence[str], question: str | None = None) -> np.ndarray:
    """``(n_sentences, n_sources)`` float32: share of each sentence's NEW claim roots (:func:`novel_roots`:
    its words the question lacks; all its words without ``question``) found in each quote.

    1.0 means every new word occurs in the source; a sentence with no new word scores 0 everywhere.
    """
    qsets = [roots(q) for q in quotes]
    out = np.zeros((len(sentences), len(quotes)), dtype=np.float32)
    for i, s in enumerate(sentences):
        words = novel_roots(s, question)
        if not words:
            continue
        for j, qs in enumerate(qsets):
            out[i, j] = len(words & qs) / len(words)
    return out


def support_matrix(lexical: np.ndarray, cosine: np.ndarray | None, *, lex_min: float = LEX_MIN, cos_min: float = COS_MIN,
                   novel_min: float = 0.0) -> np.ndarray:
    """Boolean ``(n_sentences, n_sources)``: supported if lexical share >= ``lex_min``, or cosine >= ``cos_min``
    with a lexical share of at least ``novel_min`` (the MiniLM leg accepts a paraphrase, not a sentence none
    of whose new words the source has: a restated question is close to every source on its topic).

    With ``cosine=None`` only the lexical leg decides.
    """
    sup = lexical >= lex_min
    if cosine is not None:
        sup = sup | ((cosine >= cos_min) & (lexical >= novel_min))
    return sup


def _reason(v: ClaimVerdict, cited: Sequence[int], supported: Sequence[int], missing: Sequence[str], lacking_at: int | None) -> str:
    if v == ClaimVerdict.SUPPORTED:
        return "its source holds the words it adds to the question"
    if v == ClaimVerdict.INFERRED:
        was = f"cited {list(cited)}, which does not hold it; " if cited else "no citation written; "
        return was + f"[{supported[0]}] holds it"
    if v == ClaimVerdict.UNSUPPORTED:
        if missing:
            where = f"[{lacking_at}]" if lacking_at is not None else "no source"
            return f"{where} does not hold {', '.join(missing)}"
        return "no source holds the words it adds to the question"
    return {
        ClaimVerdict.ECHO: "restates the question: adds no word of its own",
        ClaimVerdict.DANGLING: "points at a source without saying what it says",
        ClaimVerdict.DECLINES: "says the sources do not contain the answer",
        ClaimVerdict.NO_CLAIM: "too short to claim anything",
    }[v]


def attribute(
    sentences: Sequence[str],
    source_indices: Sequence[int],
    lexical: np.ndarray,
    cosine: np.ndarray | None = None,
    *,
    lex_min: float = LEX_MIN,
    cos_min: float = COS_MIN,
    question: str | None = None,
    quotes: Sequence[str] | None = None,
) -> list[SentenceAttribution]:
    """The claim check (design stage 8, issue 14): a :class:`SentenceAttribution` per sentence.

    ``source_indices[j]`` is the ``n`` of column ``j`` of ``lexical`` (from :func:`lexical_support`, given the
    same ``question``) and ``cosine`` (MiniLM, optional). With ``question``, a sentence that adds no claim
    word to it, or asks a question, is an echo (no claim, never cited). With ``quotes`` (the sources' text,
    same order), a source supports a sentence only if it also holds every number, date, version and name
    of the sentence that the question lacks (:func:`specifics`, :func:`holds`). Supporting sources are
    ranked by lexical share plus cosine, descending. A claim its cited source does not support gets the
    best supporting source instead (``inferred``; ``miscited`` when the model had cited another).
    """
    sup = support_matrix(lexical, cosine, lex_min=lex_min, cos_min=cos_min, novel_min=NOVEL_MIN if question else 0.0)
    rank = lexical + (cosine if cosine is not None else 0.0)
    valid = set(source_indices)
    asked = specifics(question) if question else set()
    out = []
    for i, s in enumerate(sentences):
        cited = tuple(n for n in markers(s) if n in valid)
        declines = is_decline(s)
        dangling = bool(DANGLING_RE.search(s))
        worded = len(content_words(s)) >= MIN_CLAIM_WORDS
        echo = bool(worded and not declines and not dangling and (
            strip_markers(s).rstrip(" *_").endswith("?") or (question is not None and not novel_roots(s, question))))
        claim = worded and not declines and not dangling and not echo
        row = sup[i].copy()
        missing: tuple[str, ...] = ()
        lacking_at = None
        if quotes is not None and claim:
            spec = sorted(specifics(s) - asked)
            lacks = [[x for x in spec if not holds(quotes[j], x)] for j in range(len(source_indices))]
            # report what the source the sentence leans on (cited, else best supporting) lacks
            lean = [j for j in range(len(source_indices)) if source_indices[j] in cited and row[j]] or \
                   [j for j in np.argsort(-rank[i], kind="stable") if row[j]]
            if lean and lacks[lean[0]]:
                missing, lacking_at = tuple(lacks[lean[0]]), source_indices[lean[0]]
            row &= np.array([not x for x in lacks], dtype=bool)
        order = np.argsort(-rank[i], kind="stable") if len(source_indices) else []
        supported = tuple(source_indices[j] for j in order if row[j])
        if not claim:
            v = (ClaimVerdict.DECLINES if declines else ClaimVerdict.DANGLING if dangling else ClaimVerdict.ECHO if echo
                 else ClaimVerdict.NO_CLAIM)
        elif set(cited) & set(supported):
            v = ClaimVerdict.SUPPORTED
        elif supported:
            v = ClaimVerdict.INFERRED
        else:
            v = ClaimVerdict.UNSUPPORTED
        shown_sup = supported[:1] if v == ClaimVerdict.INFERRED else supported if claim else ()
        out.append(SentenceAttribution(
            text=s, cited=cited, supported_by=shown_sup, unsupported=v == ClaimVerdict.UNSUPPORTED,
            inferred=v == ClaimVerdict.INFERRED, miscited=bool(v == ClaimVerdict.INFERRED and cited), declines=declines,
            claim=claim, dangling=dangling, echo=echo, verdict=v,
            reason=_reason(v, cited, supported, missing, lacking_at),
            missing=missing if v == ClaimVerdict.UNSUPPORTED else (),
        ))
    return out

