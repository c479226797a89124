"""Plain words for the default views (issue 29): what happened and what to do next, for someone who is not a
specialist. Pure (no Streamlit import), so every sentence is tested alone.

The figures stay where a specialist looks for them: each answer's "Details" and the sidebar's "Advanced"
section; the gate's own lines ("NO ANSWER: nothing under cosine distance 0.675 ...", "MAY NOT ANSWER ...
(score 0.31 < 0.55)") are the CLI's and the JSON's, shown in the app under "Details" only.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from rag.language import language_name
from rag.types import MediaType

if TYPE_CHECKING:
    from rag.answer.record import Answer

#: How a file's kind reads in the documents table (sniffed from the bytes; issue 29: "application/vnd...").
KINDS: dict[str, str] = {
    MediaType.PDF: "PDF", MediaType.MARKDOWN: "Markdown", MediaType.TEXT: "Text", MediaType.DOCX: "Word",
    MediaType.PPTX: "PowerPoint", MediaType.XLSX: "Excel", MediaType.XLS: "Excel 97-2003", MediaType.CSV: "CSV", MediaType.HTML: "Web page",
    MediaType.EPUB: "E-book", MediaType.PNG: "Image", MediaType.JPEG: "Image", MediaType.TIFF: "Image",
    MediaType.ODT: "OpenDocument text", MediaType.ODS: "OpenDocument sheet", MediaType.ODP: "OpenDocument slides",
    MediaType.XPS: "XPS", MediaType.FB2: "E-book (FB2)", MediaType.MOBI: "E-book (MOBI)", MediaType.CBZ: "Comic book",
}

#: A document's status in plain words (``rag.types.DocStatus`` values).
STATUS = {"ready": "ready", "queued": "waiting", "indexing": "being read", "failed": "failed"}


def kind_label(media_type: str | None, name: str | None = None) -> str:
    """``"PDF"``, ``"Word"``, ... for a media type; ``"–"`` when unknown (a file refused before it was read).

    With the file's ``name``, a file whose bytes disagree with it says what the name claimed (issue 42: a text file
    named ``report.docx`` read "Text" in the table, with no word of its name): ``"Text (named .docx)"``."""
    kind = KINDS.get(media_type or "", media_type or "–")
    if name and media_type:
        from rag.ingest.extract import misnamed_notice  # the readers: only when a name is given

        try:
            known = MediaType(media_type)
        except ValueError:
            return kind
        if misnamed_notice(name, known) is not None:
            return f"{kind} (named {name[name.rfind('.'):].lower()})"
    return kind


def about(name: str, warning: str) -> str:
    """A document's notice said after its name without naming it twice (issue 42: "report.docx: indexed ...; to
    know: report.docx is plain text ..."): a notice that starts with ``name`` reads "it ..." instead."""
    if warning.startswith(name + " "):
        return "it " + warning[len(name) + 1:]
    return warning


def named(name: str, warning: str) -> str:
    """A document's notice as a line of its own, naming the document once: ``"report.docx: 3 pages read by OCR"``,
    or the notice as it is when it names the document already (``"report.docx is plain text ..."``)."""
    return warning if warning.startswith(name + " ") else f"{name}: {warning}"


def length_label(pages: int, parts: Sequence[Any] = (), words: int | None = None) -> str:
    """How long a document is, in its own unit (issue 42: the pages column read "-" for a 22-slide deck, a DOCX and
    an EPUB): ``"13 pages"`` (a PDF), ``"22 slides"``, ``"3 sheets"`` (from its locator map ``parts``), else
    ``"4,210 words"``; ``"–"`` when nothing is known (a file that failed before it was read)."""

    def n(k: int, unit: str) -> str:
        return f"{k:,} {unit}{'' if k == 1 else 's'}"

    if pages:
        return n(pages, "page")
    slides = {p.number for p in parts if p.kind == "slide"}
    if slides:
        return n(len(slides), "slide")
    sheets = {p.scope for p in parts if p.kind == "rows"}
    if sheets:
        return n(len(sheets), "sheet")
    return n(words, "word") if words else "–"


def human_time(iso: str | None, now: datetime | None = None) -> str:
    """An ISO 8601 UTC timestamp as a person says it: ``"just now"``, ``"12 min ago"``, ``"today 14:05"``,
    ``"yesterday 09:12"``, ``"3 Nov"`` (this year) or ``"3 Nov 2025"``; times in UTC (the server's clock).
    ``"–"`` for ``None``; the text itself when it is no timestamp."""
    if not iso:
        return "–"
    try:
        t = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    now = now or datetime.now(timezone.utc)
    seconds = (now - t).total_seconds()
    if 0 <= seconds < 60:
        return "just now"
    if 0 <= seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    day = (now.date() - t.date()).days
    if day == 0:
        return f"today {t:%H:%M}"
    if day == 1:
        return f"yesterday {t:%H:%M}"
    return f"{t.day} {t:%b}" if t.year == now.year else f"{t.day} {t:%b %Y}"


def names_phrase(names: Sequence[str], most: int = 3) -> str:
    """``"a.pdf"``, ``"a.pdf and b.md"``, ``"a.pdf, b.md and c.docx"``; past ``most`` names, ``"5 chosen documents"``."""
    names = list(names)
    if not names:
        return "no document"
    if len(names) > most:
        return f"{len(names)} chosen documents"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def refusal_text(answer: Answer, scope: Sequence[str] | None = None) -> tuple[str, str]:
    """A refusal in plain words: ``(what happened, what to do next)``.

    ``answer`` a refused :class:`rag.answer.record.Answer` (its gate's reason and language check are read);
    ``scope`` the names of the documents it was asked within (``None``: all of them), named in both lines
    (issue 29: a scoped refusal did not say it was scoped).
    """
    advice = answer.advice
    if advice is not None and advice.no_documents:  # issue 39: "your documents do not seem to say this" with none
        return (f"No answer: {advice.searched[0].lower()}{advice.searched[1:]}",
                "Add documents on the Documents page, then ask again.")
    if advice is not None and advice.decided:  # the user's own threshold or cut refused it, not the documents
        return (f"No answer: your own settings refused this, not your documents. {advice.decided}",
                "Ask again with the default settings (reset them in the sidebar), or keep yours and ask with the "
                "words the document would use.")
    lang = answer.gate.language
    if lang is not None and lang.differs and lang.question:
        docs = " and ".join(language_name(c) for c in lang.documents) or "another language"
        return (f"No answer: your question seems to be in {language_name(lang.question)}, and the documents are "
                f"in {docs}.", f"The search matches words within one language: ask again in {docs}.")
    where = f"within {names_phrase(scope)}, the documents" if scope else "your documents"
    what = f"No answer: {where} do not seem to say this, so no answer was written."
    if scope:
        nxt = ("If another document may hold it, ask all of them: clear \"Ask within\" in the sidebar. If you think "
               "these do, ask with the words they would use (names, terms, numbers).")
    else:
        nxt = ("If you think they do, ask with the words the document would use (names, terms, numbers), or choose "
               "the document under \"Ask within\" in the sidebar.")
    return what, nxt


def searched_text(answer: Answer) -> str:
    """What a refusal or "may not answer" searched, in plain words (issue 39, Deliver 3): the documents and the
    closest passages with their locators; ``""`` for the other verdicts, with no documents, or for an answer
    recorded without it."""
    advice = answer.advice
    if advice is None or advice.no_documents:
        return ""
    closest = (" Closest passages: " + "; ".join(advice.closest) + ".") if advice.closest else ""
    return advice.searched + closest


def mentions_text(answer: Answer, scope: Sequence[str] | None = None) -> str:
    """The "may not answer" verdict in plain words, scope named; when the answer's claims would be supported
    (:data:`rag.answer.check.verdict.MENTIONS_BACKED`), that they hold and the doubt is the question's match (a new
    user read "may not answer it" over a right, cited answer, 2026-12-06); the language hint when the question's
    language is not the documents'."""
    from rag.answer.check.verdict import MENTIONS_BACKED

    within = f" (within {names_phrase(scope)})" if scope else ""
    if getattr(getattr(answer, "judged", None), "reason", None) == MENTIONS_BACKED:
        text = (f"Every claim shown is supported by the source it cites, but your documents{within} match the "
                "question only loosely: check it answers what you asked.")
    else:
        text = (f"Your documents mention this{within} but may not answer it: read the passages below before relying "
                "on what they say.")

    lang = answer.gate.language
    if lang is not None and lang.differs and lang.question:
        docs = " and ".join(language_name(c) for c in lang.documents)
        text += f" Your question seems to be in {language_name(lang.question)}: asking in {docs} may find more."
    return text


def answered_from(scope: Sequence[str] | None) -> str:
    """The line under an answer asked within some documents: ``"Answered from report.pdf only."``; ``""`` else."""
    return f"Answered from {names_phrase(scope)} only (\"Ask within\" in the sidebar)." if scope else ""


def plain_results(result: Any) -> list[str]:
    """An evaluation run (:class:`rag.evaluation.records.EvalResult`) in plain words, for the product's own way of
    cutting and searching (strategy E, hybrid) when it was measured, else the first measured: how often the
    answering passage came first / among the first 4 / the first 20, per wording, and how many questions the
    documents do not answer would still get passages at the app's threshold."""
    metrics = result.metrics
    if not metrics:
        return ["Nothing was measured: no strategy and mode ran."]
    m = result.metric("E", "hybrid") or metrics[0]

    def share(cell: Any) -> str:
        return f"{cell.hits} of {cell.n} ({cell.value:.0%})"

    out = [f"Of your {m.n_queries} searches ({result.n_questions} questions), the passage holding the answer came "
           f"first for {share(m.recall[1])}, among the first 4 (what the app answers from) for "
           f"{share(m.recall[4])}, and among the first 20 for {share(m.recall[20])}."]
    words = {"doc": "in the documents' own words", "user": "in a user's words"}
    parts = [f"{words[g]}: {s.recall[4].value:.0%}" for g, s in m.by_wording.items() if g in words and s.n_queries]
    if len(parts) > 1:
        out.append("Among the first 4, by how the questions are worded: " + "; ".join(parts) + ".")
    sweep = next((s for s in result.sweeps if s.strategy == m.strategy and s.mode == m.mode), None)
    if sweep is not None and sweep.rows and (sweep.n_near + sweep.n_far):
        row = min(sweep.rows, key=lambda r: abs(r.threshold - (sweep.recommended or r.threshold)))
        n = sweep.n_near + sweep.n_far
        out.append(f"Of {n} questions your documents do not answer, {row.bluffs_near + row.bluffs_far} would still "
                   f"get passages at the suggested threshold ({row.threshold:g}), and {row.lost} answerable "
                   "questions would lose their answer there.")
    out.append(f"(Measured with chunking strategy {m.strategy}, {m.mode} search: the figures below give "
               "the other strategies and modes.)")
    return out
