"""Plain words for the default views (ui.plain, issue 29): pure functions, tested alone."""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

from rag.answer.gate import LanguageCheck
from ui.plain import (
    answered_from,
    human_time,
    kind_label,
    length_label,
    mentions_text,
    names_phrase,
    refusal_text,
    searched_text,
)

NOW = datetime(2026, 12, 1, 18, 0, tzinfo=timezone.utc)


def test_dates_read_as_a_person_says_them():
    assert human_time("2026-12-01T17:59:30+00:00", NOW) == "just now"
    assert human_time("2026-12-01T17:48:00+00:00", NOW) == "12 min ago"
    assert human_time("2026-12-01T09:05:00+00:00", NOW) == "today 09:05"
    assert human_time("2026-11-30T22:10:00+00:00", NOW) == "yesterday 22:10"
    assert human_time("2026-11-03T10:00:00+00:00", NOW) == "3 Nov"
    assert human_time("2025-11-03T10:00:00+00:00", NOW) == "3 Nov 2025"
    assert human_time(None, NOW) == "–" and human_time("not a date", NOW) == "not a date"


def test_kinds_and_names():
    assert kind_label("application/pdf") == "PDF" and kind_label(None) == "–"
    assert kind_label("application/vnd.openxmlformats-officedocument.wordprocessingml.document") == "Word"
    assert names_phrase(["a.pdf"]) == "a.pdf" and names_phrase(["a.pdf", "b.md"]) == "a.pdf and b.md"
    assert names_phrase(["a", "b", "c"]) == "a, b and c" and names_phrase(list("abcde")) == "5 chosen documents"


def _answer(language=None):
    return SimpleNamespace(gate=SimpleNamespace(language=language), advice=None)


def test_a_refusal_says_what_happened_and_what_to_do_naming_the_scope():
    what, nxt = refusal_text(_answer())
    assert what == "No answer: your documents do not seem to say this, so no answer was written."
    assert "Ask within" in nxt and "names, terms, numbers" in nxt
    what, nxt = refusal_text(_answer(), ["leave-policy.md"])
    assert what.startswith("No answer: within leave-policy.md, the documents do not seem to say this")
    assert "clear \"Ask within\"" in nxt
    lang = LanguageCheck("de", 0.99, ("en",), True)
    what, nxt = refusal_text(_answer(lang))
    assert "German" in what and "English" in what and nxt.endswith("ask again in English.")


def test_may_not_answer_and_answered_within():
    assert mentions_text(_answer(), ["a.pdf"]).startswith("Your documents mention this (within a.pdf) but may not")
    assert answered_from(["a.pdf"]) == "Answered from a.pdf only (\"Ask within\" in the sidebar)."
    assert answered_from(None) == ""


def test_a_refusal_with_no_documents_or_decided_by_the_users_threshold_says_so():
    """Issue 39, Deliver 3: with no documents the chat said "your documents do not seem to say this"; a refusal of
    the user's own threshold read like one of the documents."""
    from rag.answer.advice import Closest, Searched
    from rag.answer.gate import apply_gate
    from rag.answer.record import Answer
    from rag.types import Hit

    defaults = {"threshold": 0.675, "max_sources": 4, "min_score": 0.62, "mention_score": 0.27}
    none = Answer(query="q", gate=apply_gate("q", []), searched=Searched(total=0, defaults=defaults))
    what, nxt = refusal_text(none)
    assert what == "No answer: there are no documents to search yet." and "Documents page" in nxt
    assert searched_text(none) == ""
    hit = Hit(chunk_id=1, rank=1, fused_rank=1, rrf_score=1 / 61, cosine_distance=0.5)
    one = Searched(documents=("a.pdf",), total=1, closest=(Closest("a.pdf, p. 2", 0.5),), defaults=defaults)
    mine = Answer(query="q", gate=apply_gate("q", [hit], threshold=0.2), searched=one)
    what, nxt = refusal_text(mine)
    assert what.startswith("No answer: your own settings refused this, not your documents. Your threshold (cosine "
                           "distance) 0.2 decided this (default 0.675)")
    assert nxt.startswith("Ask again with the default settings")
    assert searched_text(mine) == "Searched the only document, a.pdf. Closest passages: a.pdf, p. 2 (cosine distance 0.50)."


def test_a_misnamed_file_s_kind_and_its_notice_name_it_once():
    """Issue 42: a text file named report.docx read "Text" in the table, and its notice named it twice."""
    from ui.plain import about, named

    assert kind_label("text/plain", "report.docx") == "Text (named .docx)"
    assert kind_label("text/plain", "notes.txt") == "Text" and kind_label("application/pdf", "a.pdf") == "PDF"
    notice = "report.docx is plain text, not a Word document: read as text"
    assert about("report.docx", notice) == "it is plain text, not a Word document: read as text"
    assert named("report.docx", notice) == notice
    assert named("scan.pdf", "3 pages read by OCR") == "scan.pdf: 3 pages read by OCR"


def test_a_document_s_length_is_in_its_own_unit():
    from rag.types import LocatorKind, Part

    slides = [Part(LocatorKind.SLIDE, n, n * 10, n * 10 + 5) for n in range(1, 23)]
    rows = [Part(LocatorKind.ROWS, n, n * 10, n * 10 + 5, scope=s) for s in ("A", "B", "C") for n in (1, 2)]
    assert length_label(13) == "13 pages" and length_label(1) == "1 page"
    assert length_label(0, slides) == "22 slides" and length_label(0, rows) == "3 sheets"
    assert length_label(0, (), 4210) == "4,210 words" and length_label(0) == "–"


def test_saved_chats_with_the_same_title_read_apart():
    """Issue 42: two saved chats with the same title differed only by a tooltip."""
    from ui.sidebar import chat_labels

    rows = [SimpleNamespace(id=1, title="Soups", updated_at="2026-12-01T17:00:00Z"),
            SimpleNamespace(id=2, title="Soups", updated_at="2026-11-03T09:00:00Z"),
            SimpleNamespace(id=3, title="Sheds", updated_at="2026-12-01T17:00:00Z"),
            SimpleNamespace(id=4, title="Sheds", updated_at="2026-12-01T17:00:00Z")]
    labels = chat_labels(rows)
    assert len(set(labels)) == 4 and labels[0].startswith("Soups · ") and labels[0] != labels[1]
    assert labels[2].endswith("#3") and labels[3].endswith("#4")
    assert chat_labels(rows[:1]) == ["Soups"]
