"""Design stage 8, server side: check what the model wrote before anyone sees it.

Pure functions on real strings, no model here:

* :func:`clean_citations` / :class:`CitationStreamFilter` (from :mod:`rag.answer.check.clean`, re-exported):
  invalid ``[n]`` markers, links and URLs removed, on the stream too;
* :func:`split_sentences` (from :mod:`rag.answer.check.split`, re-exported) cuts an answer into sentences (lines, then
  :func:`rag.text.sentence_spans`), each keeping the markers written after it;
* :func:`lexical_support` / :func:`attribute` are the claim check (issue 14): what a sentence ADDS to
  the question (:func:`novel_roots`, its claim words the question lacks) must be in the source it cites
  (lexical share of those words, or MiniLM cosine computed by the caller with part of them), and every
  number, date, version or name it adds (:func:`specifics`) must occur in that source (:func:`holds`), in
  the same statement as the claim's other words (issue 24, :mod:`rag.answer.check.claims`).
  A sentence that only restates the question (or asks one), ends in a bare ``[n]`` after a copula, or is
  no statement at all, is no claim and never carries a citation. Each sentence gets a :class:`ClaimVerdict`:
  supported, inferred (the server attaches the source that supports it), unsupported, echo, dangling,
  declines, no claim, garbled, repeated (a claim said again word for word).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from rag.answer.check.checkboxes import unticked
from rag.answer.check.claims import (
    holds,
    novel_roots,
    source_roots,
    specifics,
    statement_gaps,
)
from rag.answer.check.clean import (
    CitationStreamFilter as CitationStreamFilter,  # re-exported: callers import it from here
)
from rag.answer.check.clean import CleanResult as CleanResult
from rag.answer.check.clean import clean_citations as clean_citations
from rag.answer.check.clean import markers
from rag.answer.check.clean import remove_echoed_labels as remove_echoed_labels
from rag.answer.check.exceptions import excepted
from rag.answer.check.list_parts import list_gaps
from rag.answer.check.names import misspelt_names, names_it, repeated_numbers, unnamed_in
from rag.answer.check.no_claim import announces, garbled, points_elsewhere, title_states
from rag.answer.check.polarity import denied_by, denies, polarity_clash, swap_clash, without_denials
from rag.answer.check.qualifiers import recommended_only
from rag.answer.check.short_answers import (
    POLARITY_RE,
    YES_NO_RE,
    affirmed_by,
    answer_words,
    code_answered_by,
    code_missing,
    sole_answer,
    takes_side,
    without_yes,
)
from rag.answer.check.shown import code_block, with_cites
from rag.answer.check.split import split_sentences as split_sentences  # re-exported: callers import it from here
from rag.text import MARKER_RE, content_words, paragraphs, sentences, strip_markers

#: A sentence whose content words are at least this share in a source is supported by it (lexical leg).
LEX_MIN = 0.5
#: MiniLM cosine similarity (sentence vs source quote) at or above which the source supports it (semantic leg).
COS_MIN = 0.6
#: With the question known, the MiniLM leg needs at least this share of the sentence's new words in the source.
NOVEL_MIN = 0.25
#: Fewer content words than this: not a claim (e.g. "Yes."), never marked unsupported.
MIN_CLAIM_WORDS = 2
#: The reasons of a sentence that announces what follows (:func:`rag.answer.check.no_claim.announces`): no claim when
#: something follows it, no statement when the answer ends there.
LEADS, ANNOUNCES_NOTHING = "introduces what follows", "announces what follows, but the answer ends there"

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
    GARBLED = "garbled"          # no statement at all ("In 2015, was published [1].", a clause left open)
    REPEATED = "repeated"        # says again, word for word, what an earlier sentence of the answer said


#: Verdicts that carry a citation on screen.
CITED_VERDICTS = (ClaimVerdict.SUPPORTED, ClaimVerdict.INFERRED)

#: Each claim verdict as a user reads it (the chat, the export, the CLI; issue 39: no codes on screen).
VERDICT_WORDS = {
    ClaimVerdict.SUPPORTED: "supported by the source it cites",
    ClaimVerdict.INFERRED: "supported by another source than the one cited",
    ClaimVerdict.UNSUPPORTED: "not supported by the sources",
    ClaimVerdict.ECHO: "repeats the question",
    ClaimVerdict.DANGLING: "points at a source without saying what it says",
    ClaimVerdict.DECLINES: "says the sources do not contain the answer",
    ClaimVerdict.NO_CLAIM: "too short to check",
    ClaimVerdict.GARBLED: "not a complete statement",
    ClaimVerdict.REPEATED: "says again what an earlier sentence said",
}


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
    ``garbled``: no statement at all (:func:`rag.answer.check.no_claim.garbled`);
    ``claim``: has at least :data:`MIN_CLAIM_WORDS` content words, does not
    decline, dangle, echo or garble (a bare ``[1] [2]`` or ``59.2s`` is no claim,
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
    garbled: bool = False

    def __post_init__(self) -> None:
        if self.verdict is None:  # built from the flags alone (older callers, tests): derive it
            v = (ClaimVerdict.DECLINES if self.declines else ClaimVerdict.DANGLING if self.dangling
                 else ClaimVerdict.GARBLED if self.garbled else ClaimVerdict.ECHO
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
        if code_block(body) is not None:  # after the closing fence, on a line of its own
            return f"{body.rstrip()}\n{cites}"
        return with_cites(body, cites)

    @property
    def label(self) -> str:
        """The sentence's verdict in plain words (:data:`VERDICT_WORDS`), never a code; an inferred sentence that
        cited nothing is "supported by a source it did not cite" (it cited no other one)."""
        if self.verdict == ClaimVerdict.INFERRED and not self.cited:
            return "supported by a source it did not cite"
        return VERDICT_WORDS[self.verdict]

    @property
    def explained(self) -> str:
        """The verdict and why, each said once: ``label: reason`` where the reason adds to the label (what the
        source lacks, which source holds it), ``label (what is wrong)`` for a sentence that is no statement, the
        label alone where the reason only says it again (an echo, a dangling marker, a decline, no claim: the
        left-out list read "repeats the question: restates the question: adds no word of its own")."""
        if self.verdict == ClaimVerdict.GARBLED and "(" in self.reason:
            return f"{self.label} ({self.reason.split('(', 1)[1].rstrip(')')})"
        if self.verdict in (ClaimVerdict.UNSUPPORTED, ClaimVerdict.INFERRED, ClaimVerdict.SUPPORTED) and self.reason:
            return f"{self.label}: {self.reason}"
        return self.label

    def to_json(self) -> dict:
        """The JSON shape of ``ask --json``'s ``answer_sentences``: ``text, cited, supported_by, unsupported,
        inferred`` (pinned by issue 5) then ``verdict, reason, cites`` (issue 14; ``cites`` = :attr:`shown_cites`),
        then (issue 39) ``supported`` (the sentence passed the check and is shown with a source) and ``label`` (the
        verdict in plain words)."""
        return {
            "text": self.text,
            "cited": list(self.cited),
            "supported_by": list(self.supported_by),
            "unsupported": self.unsupported,
            "inferred": self.inferred,
            "verdict": str(self.verdict),
            "reason": self.reason,
            "cites": list(self.shown_cites),
            "supported": self.passed,
            "label": self.label,
        }


#: A list item of the model's answer (``- x``, ``* x``, ``1. x``, ``1) x``).
_ITEM_RE = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+\S")
#: Characters of a sentence (markers and list bullet removed, whitespace collapsed) from which a copy found word for
#: word in a cited source counts as supported by it.
VERBATIM_MIN = 20
_SPACES_RE = re.compile(r"\s+")
_BULLET_RE = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+")


def _flat(text: str) -> str:
    """``text`` without ``[n]`` markers and a leading list bullet, whitespace collapsed, case-folded, the final full
    stop dropped: how a sentence and a source are compared word for word."""
    t = _SPACES_RE.sub(" ", _BULLET_RE.sub("", strip_markers(text))).strip().casefold()
    return t[:-1].rstrip() if t.endswith(".") else t


def lexical_support(sentences: Sequence[str], quotes: Sequence[str], question: str | None = None) -> np.ndarray:
    """``(n_sentences, n_sources)`` float32: share of each sentence's NEW claim roots (:func:`novel_roots`:
    its words the question lacks; all its words without ``question``) found in each quote.

    1.0 means every new word occurs in the source; a sentence with no new word scores 0 everywhere. The words are
    looked for in two neighbouring units of the source (:func:`_windows`), the best pair counting, not anywhere in a
    long chunk, where they can be gathered from places that say other things (dev d16, q21).
    """
    windows = [_windows(q) for q in quotes]
    out = np.zeros((len(sentences), len(quotes)), dtype=np.float32)
    for i, s in enumerate(sentences):
        words = novel_roots(s, question)
        if not words:
            continue
        for j, ws in enumerate(windows):
            out[i, j] = max(len(words & w) for w in ws) / len(words)
    return out


def _windows(quote: str) -> list[set[str]]:
    """:func:`source_roots` of each unit of ``quote`` with the one before it: its sentences, and a list, table or code
    block whole (a sentence may sum up a list), which joins its lead-in but not what follows it. On the saved dev
    answers (2026-12-06) this failed 2 sentences gathered from unrelated places and moved no verdict."""
    pieces = [(s, e, block) for a, b, block in paragraphs(quote, 0, len(quote))
              for s, e in ([(a, b)] if block else sentences(quote, a, b))]
    sets = [source_roots(quote[s:e]) for s, e, _ in pieces] or [source_roots(quote)]
    after_block = [k > 0 and pieces[k - 1][2] and not pieces[k][2] for k in range(len(pieces))]
    return [sets[k] | (sets[k - 1] if k and not after_block[k] else set()) for k in range(len(sets))]


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


def _reason(v: ClaimVerdict, cited: Sequence[int], supported: Sequence[int], missing: Sequence[str],
            lacking_at: int | None, astray: Sequence[str] = (), why: str = "") -> str:
    if v == ClaimVerdict.SUPPORTED:
        return "its source holds the words it adds to the question"
    if v == ClaimVerdict.INFERRED:
        was = f"cited {list(cited)}, which does not hold it; " if cited else "no citation written; "
        return was + f"[{supported[0]}] holds it"
    if v == ClaimVerdict.UNSUPPORTED:
        where = f"[{lacking_at}]" if lacking_at is not None else "no source"
        absent = [x for x in missing if x not in astray]
        parts = [f"{where} does not hold {', '.join(absent)}"] if absent else []
        if astray:
            parts.append(f"{where} holds {', '.join(astray)} only in a statement about something else")
        return "; ".join(parts) or "no source holds the words it adds to the question"
    if v == ClaimVerdict.GARBLED:
        return f"not a statement ({why})"
    return {
        ClaimVerdict.ECHO: "restates the question: adds no word of its own",
        ClaimVerdict.DANGLING: "points at a source without saying what it says",
        ClaimVerdict.DECLINES: "says the sources do not contain the answer",
        ClaimVerdict.NO_CLAIM: why or "too short to claim anything",
        ClaimVerdict.REPEATED: "the same words as an earlier sentence of the answer",
    }[v]


def _gaps(sentence: str, spec: Sequence[str], quote: str, question: str | None, heading: str,
          own: bool = False) -> tuple[list[str], list[str]]:
    """``(absent, astray)``: the specifics ``quote`` does not hold at all (with an opening word that writes one of
    its names wrong, :func:`rag.answer.check.names.misspelt_names`), and those it holds only in statements that
    do not make the sentence's claim (:func:`~rag.answer.check.claims.statement_gaps`, :mod:`~rag.answer.check.list_parts`)."""
    absent = [x for x in spec if not holds(quote, x)]
    absent += [x for x in misspelt_names(sentence, quote) if x not in spec and not (question and holds(question, x))]
    held = [x for x in spec if x not in absent]
    return absent, list_gaps(sentence, quote, held, statement_gaps(sentence, quote, held, question, heading, own=own), heading)


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
    headings: Sequence[str] | None = None,
    places: Sequence[str] | None = None,
) -> list[SentenceAttribution]:
    """The claim check (design stage 8, issues 14 and 24): a :class:`SentenceAttribution` per sentence.

    ``source_indices[j]`` is the ``n`` of column ``j`` of ``lexical`` (from :func:`lexical_support`, given the
    same ``question``) and ``cosine`` (MiniLM, optional). With ``question``, a sentence that adds no claim
    word to it, or asks a question, is an echo (no claim, never cited). A sentence that is no statement
    (:func:`rag.answer.check.no_claim.garbled`: "In 2015, was published [1].") is no claim either. With ``quotes``
    (the sources' text, same order), a source supports a sentence only if it also holds every number,
    date, version and name of the sentence that the question lacks (:func:`specifics`, :func:`holds`), each
    in a statement that makes the sentence's claim (issue 24: :func:`rag.answer.check.claims.statement_gaps`;
    ``headings[j]``, the source's innermost section heading, is read with each of its statements).
    A name or number the question asks about that the sentence says again must be named by the source too, or by
    its heading or ``places[j]`` (its document's name and section path). Supporting sources are ranked by lexical
    share plus cosine, descending. A claim its cited source does
    not support gets the best supporting source instead (``inferred``; ``miscited`` when the model had cited
    another).
    """
    sup = support_matrix(lexical, cosine, lex_min=lex_min, cos_min=cos_min, novel_min=NOVEL_MIN if question else 0.0)
    rank = lexical + (cosine if cosine is not None else 0.0)
    valid = set(source_indices)
    asked = specifics(question) if question else set()
    heads = list(headings) if headings is not None else [""] * len(source_indices)
    anywhere = "\n".join([*(quotes or ()), *heads, *(places or ())]) if quotes is not None else None
    titles = {_flat(h) for h in heads if h.strip()}
    out, made = [], set()  # made: the claims said so far (flattened)
    for i, s in enumerate(sentences):
        # "follow these steps [1]:" claims nothing and cites nothing; with nothing after it, the answer stops short
        announce = announces(s, question) and not (question and YES_NO_RE.match(question))
        lead = announce and i + 1 < len(sentences)
        cited = () if lead else tuple(n for n in markers(s) if n in valid)
        declines = is_decline(s)
        # a section's title given back ("HTTP Return Code [4]", a new user's walk) names a place, says nothing
        dangling = bool(DANGLING_RE.search(s) or (_flat(s) in titles and not title_states(s, question)) or points_elsewhere(s, question))
        item = bool(_ITEM_RE.match(s))  # a list item is read as part of its list: one word of its own is a claim
        n_words = len(content_words(s))
        # a one-word answer to a question that asks for a thing ("Which tool ...?" - "Cargo [2].") is a claim:
        # the question says what it is claimed of; it must cite (a bare "1." is a list's number cut off its item)
        short = bool(question is not None and cited and not item and n_words == 1 and MIN_CLAIM_WORDS > 1
                     and not YES_NO_RE.match(question) and novel_roots(s, question)
                     and not POLARITY_RE.search(strip_markers(s)))
        worded = (n_words >= (1 if item or short else MIN_CLAIM_WORDS) or announce) and not lead
        why = (garbled(s) or (ANNOUNCES_NOTHING if announce else None)) if worded and not declines and not dangling else None
        # a command the question names only as a plain word ("use `history`" to "How do I see my command
        # history?") is the sentence's own answer where a source writes it as code
        # "Yes, contractors may use SMS codes [1]." restates the yes/no question after its "yes", which no source
        # holds as a word: read without it, it is the restatement a source must affirm (a review, 2026-12-07)
        said = without_yes(s, question) if question is not None and YES_NO_RE.match(question) else s
        bare = question is not None and not novel_roots(said, question)
        code_in = [j for j in range(len(source_indices))
                   if bare and quotes is not None and code_answered_by(s, quotes[j], question)]
        echo = bool(worded and not declines and not dangling and not why and (
            strip_markers(s).rstrip(" *_").endswith("?")
            or (bare and not takes_side(said, question) and not code_in)))
        # a yes/no question restated as a statement answers "yes": a claim when a source it cites affirms it; restated
        # with a denial ("No, you cannot keep tokens in local storage."), "no": a claim when a source denies it too
        affirms = bool(echo and quotes is not None and question is not None and YES_NO_RE.match(question)
                       and not strip_markers(s).rstrip(" *_").endswith("?"))
        echo = echo and not affirms
        says_no = bool(quotes is not None and question is not None and YES_NO_RE.match(question) and worded and not echo
                       and not declines and not dangling and not why and denies(s)
                       and not novel_roots(without_denials(s), question))
        # the 0.5B's loop (a new user's walk, 2026-12-06: three claims, then the same three again): a claim said
        # again word for word (or its start, where the loop was cut) is shown once; the copy is no claim, and never
        # counts against the answer
        flat = _flat(s)
        repeated = bool(worded and len(flat) >= VERBATIM_MIN and any(m.startswith(flat) for m in made))
        claim = worded and not declines and not dangling and not echo and not why and not repeated
        made.update([flat] if claim else [])
        row = np.array([(affirmed_by if affirms else denied_by)(s, quotes[j], question) for j in range(len(source_indices))],
                       dtype=bool) if affirms or says_no else sup[i].copy()
        if bare and code_in:
            row[code_in] = True
        missing, astray, lacking_at = (), (), None
        if quotes is not None and claim:
            spec = sorted((specifics(s) | (answer_words(s, question) if short and question else set())) - asked)
            gaps = [_gaps(s, spec, quotes[j], question, heads[j], own=short) for j in range(len(source_indices))]
            # report what the source the sentence leans on (cited, else best supporting) lacks
            lean = [j for j in range(len(source_indices)) if source_indices[j] in cited and row[j]] or \
                   [j for j in np.argsort(-rank[i], kind="stable") if row[j]]
            if lean and any(gaps[lean[0]]):
                absent, off = gaps[lean[0]]
                missing, astray, lacking_at = tuple(absent + off), tuple(off), source_indices[lean[0]]
            row &= np.array([not (a or b) for a, b in gaps], dtype=bool)
            # the thing the question names, said again as the claim's subject, must be named by the source, its
            # heading or its document: "Requirement V1.2.1 has ..." from another requirement's row is about
            # something else (a walk over a CSV, 2026-12-07)
            repeated = repeated_numbers(s, question) if question else []
            lacks = [unnamed_in(s, question, quotes[j], f"{heads[j]}\n{places[j] if places is not None else ''}",
                                anywhere)
                     + [x for x in repeated if not names_it(f"{heads[j]}\n{quotes[j]}", x)]
                     if question else [] for j in range(len(source_indices))]
            if lean and lacks[lean[0]] and not missing:
                missing, lacking_at = tuple(lacks[lean[0]]), source_indices[lean[0]]
            row &= np.array([not x for x in lacks], dtype=bool)
            codes = [code_missing(s, quotes[j], question) for j in range(len(source_indices))]
            if lean and codes[lean[0]] and not missing:  # a command not written so in the source it leans on
                missing, lacking_at = tuple(f"`{c}`" for c in codes[lean[0]]), source_indices[lean[0]]
            row &= np.array([not c for c in codes], dtype=bool)
            if short and question:  # a one-word answer names the one thing of its kind its statement names
                said = answer_words(s, question)
                row &= np.array([all(sole_answer(w, quotes[j], question) for w in said) for j in range(len(source_indices))],
                                dtype=bool)
        denied = {}
        if quotes is not None and claim and not affirms and not says_no:  # said otherwise: "never stored" for "store"
            denied = {j: c for j in np.flatnonzero(row) if (c := polarity_clash(s, quotes[j], question))}
            row[list(denied)] = False
        elif quotes is not None and affirms:  # "yes" from a source that says the opposite word: "excludes" for "includes"
            denied = {j: c for j in np.flatnonzero(row) if (c := swap_clash(s, quotes[j], question))}
            row[list(denied)] = False
        if quotes is not None and claim and not says_no:  # the case its source makes an exception of
            denied |= {j: c for j in np.flatnonzero(row) if (c := excepted(s, quotes[j], question)
                                                              or recommended_only(s, quotes[j], question))}
            # an option any source shows not ticked is denied by all: the form's state wins over its bare label
            denied |= (off := {j: c for j in range(len(source_indices)) if (c := unticked(s, quotes[j], question))})
            row[list(denied)] = False
            row &= not off
        if quotes is not None and claim:
            # a sentence copied word for word from a source it cites is supported by that source, whatever the
            # word-level checks say (issue 39: verbatim, correctly cited sentences were marked "inferred"); so is
            # its section's title that states a value (:func:`title_states`), text the reader sees above it
            body = _flat(s)
            for j, n in enumerate(source_indices):
                if n in cited and len(body) >= VERBATIM_MIN and (body in _flat(quotes[j]) or body == _flat(heads[j])) \
                        and j not in denied:
                    row[j] = True
        order = np.argsort(-rank[i], kind="stable") if len(source_indices) else []
        supported = tuple(source_indices[j] for j in order if row[j])
        if not claim:
            v = (ClaimVerdict.DECLINES if declines else ClaimVerdict.DANGLING if dangling else ClaimVerdict.REPEATED
                 if repeated else ClaimVerdict.GARBLED if why else ClaimVerdict.ECHO if echo else ClaimVerdict.NO_CLAIM)
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
            reason=(next(iter(denied.values())).reason(source_indices[next(iter(denied))])
                    if v == ClaimVerdict.UNSUPPORTED and denied else
                    _reason(v, cited, supported, missing, lacking_at, astray, why or (LEADS if lead else ""))),
            missing=missing if v == ClaimVerdict.UNSUPPORTED else (), garbled=bool(why),
        ))
    return out
