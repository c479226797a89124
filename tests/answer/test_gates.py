"""Gates as a table of strategies behind one typed decision (review 2026-12-01, change 3; defect 6).

Every row of ``GATES`` implements the ``Gate`` protocol; ``search_and_gate`` and the app's slider look a gate up
once; the decision is typed (``Verdict`` and ``GateKind`` members, ``Evidence``, ``LanguageCheck``), for every
kind. Fakes only: a hash embedder.
"""

from __future__ import annotations

import json

import pytest
from fakes import HashEmbedder

from rag.answer.gate import Evidence, GateKnobs, GateReason, GateResult, LanguageCheck, apply_gate
from rag.answer.gate.calibrated_gate import calibrated_model
from rag.answer.gate.gates import GATES, StoreContext, gate_for, regate_with
from rag.answer.gate.learned_gate import default_model
from rag.answer.pipeline import search_and_gate
from rag.settings import get_settings
from rag.store.store import Store
from rag.types import GateKind, Verdict

DOC = b"""# Parking

Visitors park in lot B, next to the main entrance. Parking in lot B is free for the first two hours.

## Bicycles

Bicycles are parked in the covered racks behind building C.
"""
Q = "Where are bicycles parked behind building C?"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("gates")
    s = Store(path, settings=get_settings(store=path), embedder=HashEmbedder())
    assert s.ingest_bytes(DOC, "parking.md").status == "ready"
    yield s
    s.close()


def test_one_row_per_kind_each_a_gate():
    assert set(GATES) == set(GateKind)
    for kind, gate in GATES.items():
        assert gate.kind is kind
        assert callable(gate.decide) and callable(gate.regate) and 0.0 <= gate.default_min_score() <= 1.0
    assert GATES[GateKind.CALIBRATED].default_min_score() == calibrated_model().default_min_score
    assert GATES[GateKind.LEARNED].default_min_score() == default_model().default_min_score
    assert GATES[GateKind.DISTANCE].default_min_score() == 0.0  # no score to cut
    with pytest.raises(ValueError, match="unknown gate 'nope'; allowed: distance, learned, calibrated"):
        gate_for("nope")


@pytest.mark.parametrize("kind", list(GateKind))
def test_every_kind_decides_with_typed_fields(store, kind):
    """``kind="calibrated"`` was a string literal and ``verdict`` a string set in ``__post_init__`` (defect 6)."""
    g = search_and_gate(store, Q, store.settings.with_overrides(gate=kind))
    assert type(g.kind) is GateKind and g.kind is kind
    assert type(g.verdict) is Verdict and g.verdict is (Verdict.REFUSED if g.refused else g.verdict)
    assert g.plan is not None and g.candidates
    if kind is GateKind.DISTANCE:
        assert g.score is None and g.evidence is None
    else:
        assert isinstance(g.evidence, Evidence) and g.evidence.score == pytest.approx(g.score, abs=1e-4)
    if kind is GateKind.CALIBRATED:
        assert isinstance(g.language, LanguageCheck) and g.language.documents == ("en",)
        assert g.evidence.chunks == g.evidence.distinct_chunks == store.chunk_count


def test_search_and_gate_looks_the_gate_up_in_the_table(store, monkeypatch):
    """A fourth gate is one row: whatever the table holds for the settings' kind decides, with the store's context."""
    seen = []

    class Recording:
        kind = GateKind.DISTANCE

        def decide(self, query, hits, knobs, context):
            seen.append((query, knobs, type(context)))
            return apply_gate(query, hits, knobs.threshold, knobs.max_sources)

    monkeypatch.setitem(GATES, GateKind.DISTANCE, Recording())
    search_and_gate(store, Q, store.settings.with_overrides(gate=GateKind.DISTANCE, threshold=0.5))
    assert seen == [(Q, GateKnobs(0.5, 4, None, None), StoreContext)]


def test_regate_goes_to_the_gate_that_decided(store):
    g = search_and_gate(store, Q, store.settings.with_overrides(gate=GateKind.CALIBRATED))
    assert not g.refused
    low = regate_with(g, GateKnobs(threshold=0.0001))
    assert low.refused and low.kind is GateKind.CALIBRATED and low.reason is GateReason.THRESHOLD
    assert low.score == g.score and low.evidence == g.evidence  # nothing scored again
    strict = regate_with(g, GateKnobs(threshold=0.675, min_score=1.0))
    assert strict.verdict in (Verdict.MENTIONS, Verdict.REFUSED) and strict.min_score == 1.0
    back = regate_with(low, GateKnobs())
    assert back.verdict == g.verdict and [h.chunk_id for h in back.sources] == [h.chunk_id for h in g.sources]


def test_a_decision_survives_its_json():
    g = GateResult(
        query="q", threshold=0.675, max_sources=4, refused=False, refusal=None, sources=(), candidates=(),
        nearest_distance=0.31, verdict=Verdict.MENTIONS, kind=GateKind.CALIBRATED, score=0.4, min_score=0.55,
        mention_score=0.3, why="nearest distance 0.310", notice="MAY NOT ANSWER: ...", reason=GateReason.SCORE,
        evidence=Evidence({"coverage": 0.5}, 0.4, 0.3, 0.8, 3, 3),
        language=LanguageCheck("en", 0.99, ("en",), False))
    d = json.loads(json.dumps(g.to_json()))
    assert d["evidence"] == {"coverage": 0.5, "score": 0.4, "self_distance": 0.3, "far_distance": 0.8, "chunks": 3,
                             "distinct_chunks": 3}
    back = GateResult.from_json(d, query="q", threshold=0.675, refused=False, refusal=None, notice=g.notice)
    assert back == g
