"""Questions the documents can answer, for an empty chat page (issue 29).

A new user facing an empty chat does not know what to ask. The suggestions are drawn from the documents'
own headings (:func:`rag.answer.overview.sections_of`): "What about Installing on Linux in Install guide?";
a document without sections gets "What is in <its title>?". Naming the document by its title and the
section by its heading words the question the way its chunks were embedded (``[Doc title > Section]``),
with no other content word for the gate to find missing. Each candidate is then asked of the gate with
the settings the chat uses (:func:`rag.answer.pipeline.gated_sources`: search and gate, no model), and only
the ones the gate **answers** from the document they were drawn from, and whose answer could be judged
**supported**, are offered (issue 42: "offered only when the app can answer them as supported"). The verdict
needs the model's claims, and writing one answer per suggestion at page load would cost 10-30 s each on 2 cores;
so each candidate's key passage (chosen in about 1 ms, as for any question) is put through the claim check and
the verdict rules as if the model had said just that, citing it (:func:`supported_if_restated`): a question
whose best passage leaves part of it unaddressed (a file name or identifier the passage does not name, a
number asked and none given, a two-part question) or matches it only in part is not offered. The model may
still write a weaker answer; it cannot turn a question this check rejects into a supported one by restating
its evidence. Generic headings ("Introduction", "References", "Quiz") are
skipped; documents take turns, so each gets one before any gets two.

Measured on both dev stores (``docs/ui.md``) with the earlier wording "<document>: what about <heading>?", which
has the same content words as "What about <heading> in <document>?" (issue 42: a question a person writes; not
measured again): that wording was answered from its own document for 62 of 62
heading questions over the course corpus and 30 of 30 over pdf-dev ("What does <file name> say about
<heading>?": 30 and 18; "What does the document say about <heading>?": 19 and 10), about 40 ms each on a
loaded 2-core machine; :data:`TRIES` bounds the cost of a page's first view. The restated check, measured on
copies of the course and pdf-dev stores (2026-12-03 12:50 UTC, load 1.9-2.0; every heading question, the
store's calibrated gate): of the questions the gate answers from their own document, 109 of 126 (course) and
47 of 76 (pdf-dev) would be supported; the others, mostly questions naming a document by a file name
("What about Clip Function in 13-grpo-deepseekmath.md?", which no answer names), would be "partly supported".
50-66 ms per question with the gate.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from rag.answer.cite import Citation
from rag.answer.gate import GateResult
from rag.answer.key_passage import key_passage
from rag.answer.overview import document_overview
from rag.answer.pipeline import check_answer, gated_sources
from rag.answer.record import Answer
from rag.settings import Settings
from rag.text import TermStats
from rag.types import AnswerVerdict, DocStatus, Verdict

#: How many suggestions the chat page shows.
SUGGESTIONS = 4

#: How many candidate questions are asked of the gate at most (each costs one search: about 40 ms).
TRIES = 12

#: Headings that say nothing a question could be about.
GENERIC = re.compile(
    r"^(?:introduction|intro|overview|summary|conclusions?|concluding remarks|abstract|references?|bibliography|"
    r"contents|table of contents|acknowledge?ments?|appendix(?: [a-z0-9]+)?|index|preface|foreword|about|notes?|"
    r"further reading|resources|(?:section |end-of-chapter |chapter )?quiz|key takeaways|takeaways|next steps|"
    r"exercises?|examples?|background|discussion|results|methods|related work|title|untitled|getting started|"
    r"speaker notes|q&a|questions|faq|glossary|license|copyright|disclaimer|contact|sources|results in brief|"
    r"about this (?:document|guide|book|report|manual|paper|chapter)|impressum|vorwort|einführung|"
    r"einleitung|zusammenfassung|inhalt|inhaltsverzeichnis|literatur|open|details|more details|see also|"
    r"external links|notes and references|footnotes|citations|further information)$", re.IGNORECASE)

#: Numbering before a heading's words: ``3.2 ``, ``IV. ``, ``Step 1: ``, ``Chapter 4 - ``, ``A) ``.
_NUMBERING = re.compile(r"^\s*(?:(?:step|chapter|part|section|lesson|unit)\s+\w+\s*[:.\-–]\s*|"
                        r"\d+(?:\.\d+)*[.):]?\s+|[IVXLC]+[.)]\s+|[A-Z][.)]\s+)", re.IGNORECASE)
_LETTERS = re.compile(r"[^\W\d_]")


@dataclass(frozen=True)
class Suggestion:
    """A question the gate answers: ``question`` as shown (and asked when clicked), the ``document_id`` and the
    ``section`` heading it was drawn from."""

    question: str
    document_id: str
    section: str


def heading_subject(title: str) -> str | None:
    """What a heading is about, fit for a question: its numbering dropped, whitespace collapsed; ``None`` for a
    generic heading (:data:`GENERIC`), one of more than 8 words or without a letter, or a quiz item."""
    t = _NUMBERING.sub("", " ".join(title.split())).strip(" :.-–#*_")
    bare = re.sub(r"(?<!\s)\s*\([^()]*\)\s*", " ", t).strip()  # "Summary (and terminology)" is a summary
    if not t or not _LETTERS.search(t) or len(t.split()) > 8 or GENERIC.match(bare):
        return None
    if t.endswith("?") and len(t.split()) > 6:  # a quiz's question, not a section's subject
        return None
    return t


def heading_question(name: str, subject: str) -> str:
    """The question a heading suggests: the heading itself when it is a question ("What are learning curves?"),
    else "What about <subject> in <document>?" (issue 42: "<document>: what about <subject>?" is no question a
    person writes; this one has the same content words, which is what the gate reads, and they were measured
    above)."""
    if subject.endswith("?"):
        return subject
    if name.split(" ", 1)[0].casefold() in _PREPOSITIONS:  # "in In Search of ..." reads as a slip: quoted
        name = f"\u201c{name}\u201d"
    return f"What about {subject} in {name}?"


#: Words a title may open with that would read as a slip after "in" ("What about X in In Search of ...?").
_PREPOSITIONS = frozenset("in on at by for from to with about towards toward beyond into of under over".split())


#: A title that is a template's placeholder, not the document's name (issue 42: "<Presentation title here>: what
#: about ASP.NET Core?"): in angle or square brackets, or a template's prompt.
PLACEHOLDER = re.compile(r"^\s*(?:<[^<>]{0,80}>|\[[^\[\]]{0,80}\]|\{[^{}]{0,80}\})\s*$|"
                         r"^\s*(?:click (?:here )?to (?:add|edit|type)\b|(?:your|insert|enter|add) (?:a )?title\b|"
                         r"(?:presentation|document|slide|report) title(?: here)?\s*$|title here\s*$|"
                         r"untitled(?: document| presentation)?\s*\d*\s*$|lorem ipsum\b)", re.IGNORECASE)

#: A web page title's site suffix: "Rain garden - Wikipedia", "Install | Acme Docs" (the page is the first part).
#: (Matched on the whitespace-collapsed title: single spaces, so no run of blanks is scanned twice.)
_SITE_SUFFIX = re.compile(r" [-|–—] (?:wikipedia|wikibooks|wiktionary|mdn web docs|[^-|–— ][^-|–—]{0,29} docs?)$",
                          re.IGNORECASE)


def document_name(doc) -> str:
    """How a suggestion names a document: its title when it has a short one that is no template placeholder
    (:data:`PLACEHOLDER`; a web page's site suffix dropped), else its file name."""
    title = _SITE_SUFFIX.sub("", " ".join((doc.title or "").split()))
    ok = title and len(title.split()) <= 8 and _LETTERS.search(title) and not PLACEHOLDER.match(title)
    return title if ok else doc.label


def candidate_questions(store, doc_ids: Sequence[str] | None = None) -> list[Suggestion]:
    """Heading questions of ``store``'s ready documents (or of ``doc_ids``), documents taking turns, each
    document's top-level sections first, each subject once."""
    per_doc: list[list[Suggestion]] = []
    for d in store.documents():
        if d.status != DocStatus.READY or (doc_ids is not None and d.id not in doc_ids):
            continue
        ov = document_overview(store, d.id)
        name = document_name(d)
        seen: set[str] = set()
        qs = []
        for sec in sorted(ov.sections, key=lambda s: s.depth):
            subject = heading_subject(sec.title)
            if subject is None or subject.casefold() in seen:
                continue
            seen.add(subject.casefold())
            qs.append(Suggestion(heading_question(name, subject), d.id, sec.title))
        if not qs and name != d.label:  # no sections: the document as a whole, by its title
            qs.append(Suggestion(f"What is in {name}?", d.id, ""))
        if qs:
            per_doc.append(qs)
    out = []
    for i in range(max((len(q) for q in per_doc), default=0)):
        out += [q[i] for q in per_doc if i < len(q)]
    return out


def supported_if_restated(gate: GateResult, cites: Sequence[Citation], term_stats: TermStats | None = None) -> bool:
    """Whether an answer that says what the key passage says, citing it, would be judged **supported**
    (:func:`rag.answer.check.verdict.judge`, the rules every answer is judged by): the key passage is chosen
    (about 1 ms, :func:`rag.answer.key_passage.key_passage`), its words are put through the claim check as the
    model's answer (lexical leg only: no model, no embedding) and judged. A question whose best passage would
    leave it "partly supported" (part of what it asks unaddressed, a number asked and none given, the passage
    covering the question only in part) or "may not answer" is not offered (issue 42)."""
    if gate.verdict != Verdict.ANSWERED or not cites:
        return False
    kp = key_passage(gate.query, cites, term_stats)
    if not kp.sentences:
        return False
    text, _, _, sentences = check_answer(kp.text, cites, None, gate.query)
    a = Answer(query=gate.query, gate=gate, text=text, citations=tuple(cites), sentences=tuple(sentences),
               key_passage=kp)
    return a.judged.verdict == AnswerVerdict.SUPPORTED


def suggested_questions(store, settings: Settings | None = None, *, n: int = SUGGESTIONS, tries: int = TRIES,
                        doc_ids: Sequence[str] | None = None) -> tuple[list[Suggestion], float]:
    """Up to ``n`` of :func:`candidate_questions` that the gate answers (with ``settings``, default the store's)
    from the document each was drawn from and whose key passage, restated, would be supported
    (:func:`supported_if_restated`), trying at most ``tries``; returns them and the milliseconds spent."""
    t0 = time.perf_counter()
    out: list[Suggestion] = []
    stats = None
    for s in candidate_questions(store, doc_ids)[:tries]:
        gate, cites, _ = gated_sources(store, s.question, settings, doc_ids)
        if gate.verdict != Verdict.ANSWERED or not cites or cites[0].document_id != s.document_id:
            continue
        stats = stats or store.term_stats()
        if supported_if_restated(gate, cites, stats):
            out.append(s)
            if len(out) >= n:
                break
    return out, (time.perf_counter() - t0) * 1000.0
