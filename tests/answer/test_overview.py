"""What's in a document (issue 29): sections, a summary of its own sentences, questions the gate answers.

Fakes only (the hash embedder); the real embedder's figures are ``scripts/overview_time.py``'s (docs/ui.md).
"""

from __future__ import annotations

import pytest
from fakes import HashEmbedder

from rag.answer.conversation import Conversation
from rag.answer.overview import KEPT_AS, Overview, compute_overview, document_overview, stands_alone
from rag.answer.suggest import candidate_questions, heading_subject, suggested_questions
from rag.settings import get_settings
from rag.store import derived
from rag.store.store import Store
from rag.types import Verdict

GUIDE = b"""# Bike shed guide

## Opening hours

The bike shed opens at seven in the morning and closes at ten at night on weekdays.
On Sundays the shed stays closed all day because the caretaker is away.

## Keys and badges

Every cyclist collects a badge from the front desk before using the shed for the first time.
This badge also opens the lockers. However, lost badges cost five pounds to replace.

## Repairs

A pump and a set of tools hang on the wall next to the door for small repairs.
Flat tyres can be mended at the repair stand on Tuesday evenings by the volunteers.

## References

[1] Smith, J. Cycling at work. Journal of Commuting, 2019, pp. 1-9.
"""

RECIPES = b"""# Soup book

## Tomato soup

Tomato soup needs ripe tomatoes, one onion, garlic and a litre of vegetable stock.
Simmer the tomatoes with the onion for twenty minutes before blending the soup smooth.

## Lentil soup

Red lentils cook in about fifteen minutes and thicken the soup without any cream.
"""


@pytest.fixture()
def store(tmp_path):
    s = Store(tmp_path / "s", settings=get_settings(store=tmp_path / "s", gate="distance"), embedder=HashEmbedder())
    assert s.ingest_bytes(GUIDE, "bike-shed.md").status == "ready"
    assert s.ingest_bytes(RECIPES, "soups.md").status == "ready"
    yield s
    s.close()


def _doc(store, name):
    return next(d for d in store.documents() if d.name == name)


def test_the_summary_is_made_of_the_documents_own_sentences_with_their_place(store):
    doc = _doc(store, "bike-shed.md")
    ov = compute_overview(store, doc.id)
    canonical = store.canonical_text(doc.id)
    assert ov.summary, ov
    for s in ov.summary:
        assert canonical[s.start:s.end] == s.text  # verbatim, with offsets into the stored text
        assert s.label.startswith("bike-shed.md > ")  # its locator, as a citation's
        assert not s.text.startswith(("This", "However")) and "Smith" not in s.text  # stands alone; no reference
    assert [x.title for x in ov.sections] == ["Opening hours", "Keys and badges", "Repairs"]  # no References
    assert len({s.label for s in ov.summary}) == len(ov.summary)  # one sentence per section first


def test_sentences_that_cannot_stand_alone_are_never_picked():
    assert stands_alone("The bike shed opens at seven in the morning on weekdays.")
    for text in ("This badge also opens the lockers and the gate.", "However, lost badges cost five pounds.",
                 "Opens at seven.", "When does the bike shed open in the morning on weekdays?",
                 "See Figure 3 for the opening hours of the shed on weekdays.",
                 "Quantum Computation Under Micromotion In A Planar Ion Crystal.",
                 "The HDC Protocol Specification was written by Axel T."):
        assert not stands_alone(text), text


def test_an_overview_is_kept_with_the_store_and_goes_with_the_document(store):
    doc = _doc(store, "bike-shed.md")
    first = document_overview(store, doc.id)
    kept = derived.read(store.path, doc.id, KEPT_AS)
    assert kept is not None and Overview.from_json(kept) == Overview.from_json(first.to_json())
    assert document_overview(store, doc.id).summary == first.summary  # read back
    store.delete(doc.id)
    assert derived.read(store.path, doc.id, KEPT_AS) is None


def test_after_indexing_keeps_every_ready_documents_overview_and_the_gates_references(store, monkeypatch):
    """The worker's one after-batch step, the CLI's and the API's alike (issue 36): overviews kept, a failing one
    logged and skipped, the calibration computed once for the store."""
    from rag.answer import refresh
    from rag.api import service
    from rag.cli import jobs

    calibrated = []
    real = refresh.store_calibration
    monkeypatch.setattr(refresh, "store_calibration", lambda s: calibrated.append(s) or real(s))
    shed, soups = _doc(store, "bike-shed.md"), _doc(store, "soups.md")
    real_overview = refresh.document_overview

    def overview(s, doc_id):
        if doc_id == soups.id:
            raise ValueError("no rows")
        return real_overview(s, doc_id)

    monkeypatch.setattr(refresh, "document_overview", overview)
    jobs.calibrate(store)
    assert calibrated == [store]
    assert derived.read(store.path, shed.id, KEPT_AS) is not None
    assert derived.read(store.path, soups.id, KEPT_AS) is None
    assert service.after_indexing is refresh.after_indexing  # the API's worker is handed the same step


def test_generic_headings_suggest_nothing():
    assert heading_subject("3.2 Opening hours") == "Opening hours"
    assert heading_subject("Step 1: Group Sampling") == "Group Sampling"
    for title in ("Introduction", "References", "Summary (and terminology)", "Section Quiz", "12", "Contents"):
        assert heading_subject(title) is None, title


def test_suggested_questions_are_answered_by_the_gate_from_their_document(store):
    """Each suggestion, asked as the chat asks it (one Conversation turn), is answered: not refused, no
    "may not answer" warning, and its first source is the document the question was drawn from."""
    cands = candidate_questions(store)
    assert cands[0].question == "What about Opening hours in Bike shed guide?"  # its title, its heading, a question
    assert cands[1].document_id != cands[0].document_id  # documents take turns
    picked, ms = suggested_questions(store, store.settings, n=3)
    assert picked and ms >= 0
    for s in picked:
        turn = Conversation(store, save=False).ask(s.question)
        assert turn.gate.verdict == Verdict.ANSWERED, (s.question, turn.gate.why)
        assert turn.cites[0].document_id == s.document_id
    within = suggested_questions(store, store.settings, doc_ids=[_doc(store, "soups.md").id])[0]
    assert within and {s.document_id for s in within} == {_doc(store, "soups.md").id}


def test_a_placeholder_title_or_a_site_suffix_never_names_a_document_in_a_suggestion():
    """Issue 42: "<Presentation title here>: what about ASP.NET Core?" was suggested (and clicked, 'may not
    answer')."""
    from types import SimpleNamespace

    from rag.answer.suggest import document_name, heading_question

    def doc(title):
        return SimpleNamespace(title=title, label="deck.pptx")

    for placeholder in ("<Presentation title here>", "Click to add title", "[Title]", "Presentation Title",
                        "Untitled presentation", "Lorem ipsum dolor"):
        assert document_name(doc(placeholder)) == "deck.pptx", placeholder
    assert document_name(doc("Rain garden - Wikipedia")) == "Rain garden"
    assert document_name(doc("Install | Acme Docs")) == "Install"
    assert document_name(doc("Composting at home")) == "Composting at home"
    assert heading_question("Rain garden", "Plants") == "What about Plants in Rain garden?"
    # a new user read "What about Achieving fault-tolerance in In Search of ...?" (2026-12-06)
    assert heading_question("In Search of an Understandable Consensus Algorithm", "Leader election") == \
        "What about Leader election in \u201cIn Search of an Understandable Consensus Algorithm\u201d?"
    assert heading_subject("Details") is None and heading_subject("See also") is None
    assert heading_question("Rain garden", "Why do rain gardens fail?") == "Why do rain gardens fail?"


LOCKERS = b"""# Locker rules

## How many lockers are there?

The lockers stand along the north wall of the shed, next to the pump, and every locker has a brass key.

## Locker keys

Locker keys are handed out at the front desk in exchange for a deposit of ten pounds.
"""


def test_a_suggestion_is_offered_only_when_its_answer_could_be_supported(store):
    """Issue 42: suggestions offered only when the app can answer them as supported, not merely when the gate
    answers. A heading question asking how many, over a passage holding no number, passes the gate but its key
    passage, restated, would be "partly supported" (the question asks for a number): not offered."""
    from rag.answer.pipeline import gated_sources
    from rag.answer.suggest import supported_if_restated

    assert store.ingest_bytes(LOCKERS, "lockers.md").status == "ready"
    asked = "How many lockers are there?"
    assert asked in [c.question for c in candidate_questions(store)]
    gate, cites, _ = gated_sources(store, asked, store.settings)
    assert gate.verdict == Verdict.ANSWERED and _doc(store, "lockers.md").id == cites[0].document_id
    assert not supported_if_restated(gate, cites, store.term_stats())
    picked, _ = suggested_questions(store, store.settings, n=10)
    questions = [s.question for s in picked]
    assert asked not in questions and "What about Locker keys in Locker rules?" in questions
    for s in picked:
        gate, cites, _ = gated_sources(store, s.question, store.settings)
        assert supported_if_restated(gate, cites, store.term_stats()), s.question


def test_a_slides_speaker_notes_are_no_section_of_the_overview():
    """The overview of a talk listed "Speaker notes" once per slide with notes, among its slides' titles
    (seen in the browser, 2026-12-06)."""
    from rag.answer.overview import sections_of
    from rag.store.records import ChunkRow

    def row(i: int, section: tuple[str, ...]) -> ChunkRow:
        return ChunkRow(i, "d" * 64, "talk.pptx", "talk.pptx", "application/pptx", i, "x", "x", section, i, i + 1,
                        None, None)

    rows = [row(1, ("Why ASP.NET Core?",)), row(2, ("Why ASP.NET Core?", "Speaker notes")), row(3, ("Speaker notes",)),
            row(4, ("Middleware",)), row(5, ("Middleware", "Speaker notes"))]
    assert [s.title for s in sections_of(rows)] == ["Why ASP.NET Core?", "Middleware"]
