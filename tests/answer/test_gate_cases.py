"""Issue 15's cases on real stores and the real embedder: other languages, a one-chunk store, a duplicate upload."""

import pytest

from rag.answer.cite import citations
from rag.answer.gate.calibrated_gate import store_calibration
from rag.answer.pipeline import search_and_gate
from rag.settings import get_settings
from rag.store.store import Store

#: The calibrated gate's verdicts on real text: they need the real embedder's distances (the fake's are not).
pytestmark = pytest.mark.slow

WARRANTY = ("# Warranty terms\n\nThe warranty period is 24 months from the date of purchase. "
            "Repairs under warranty are free of charge when the receipt is shown.\n")


@pytest.fixture()
def make_store(tmp_path, embedder):
    def make(files: dict[str, bytes]) -> Store:
        path = tmp_path / f"store{len(list(tmp_path.iterdir()))}"
        s = Store(path, settings=get_settings(store=path), embedder=embedder)
        for name, data in files.items():
            assert s.ingest_bytes(data, name).status == "ready"
        return s
    return make


def test_c31_other_languages_are_answered_or_told_plainly(make_store, cases_dir):
    store = make_store({"c31_parking_en.md": (cases_dir / "c31_parking_en.md").read_bytes()})
    questions = (cases_dir / "c31_questions.txt").read_text(encoding="utf-8").splitlines()
    assert len(questions) == 4
    for q in questions[:3]:
        g = search_and_gate(store, q)
        assert g.language.documents == ("en",)
        assert g.language.question in ("de", "es", "fr")
        said = (g.refusal or "") + (g.notice or "")
        assert "nothing under" not in said
        assert g.verdict == "answered" or (g.reason == "language" and "English" in said), (q, g.verdict, said)
    en = search_and_gate(store, questions[3])
    assert en.verdict == "answered" and not en.language.differs
    assert "renewed every January" in store.chunk(en.sources[0].chunk_id).content


def test_a_one_chunk_store_answers_what_its_chunk_says(make_store):
    store = make_store({"warranty.md": WARRANTY.encode()})
    assert store.chunk_count == 1
    g = search_and_gate(store, "How long is the warranty period?")
    assert g.verdict == "answered", g.why
    assert search_and_gate(store, "Who won the 2018 FIFA World Cup final?").verdict == "refused"


def test_the_same_text_under_two_names_is_answered_and_cited_once(make_store):
    store = make_store({"warranty.md": WARRANTY.encode(), "warranty-copy.md": (WARRANTY + "\n").encode()})
    assert store.chunk_count == 2
    for q in ("How long is the warranty period?", "Are repairs under warranty free?"):
        g = search_and_gate(store, q)
        assert g.verdict == "answered", (q, g.why)
        assert len(g.sources) == 1 and sum(len(v) for v in g.duplicates.values()) == 1
        cites = citations(g, store)
        assert len(cites) == 1 and len(cites[0].also_in) == 1
        assert {cites[0].document_name, cites[0].also_in[0].split(" > ")[0].split(", ")[0]} == {"warranty.md", "warranty-copy.md"}
    cal = store_calibration(store)
    assert cal.n_chunks == 2 and cal.n_distinct == 1
