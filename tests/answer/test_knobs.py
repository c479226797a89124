"""The one ``settings`` an answer is asked with carries every gate knob (review 2026-12-01, defect 2).

``pipeline.ask(store, q, settings)`` gated with ``store.settings`` and generated with ``settings``: a threshold,
a score cut or a gate kind passed that way was silently ignored. Fakes only: a hash embedder, a scripted model.
"""

from __future__ import annotations

import pytest
from fakes import FakeGenerator, HashEmbedder

from rag.answer.pipeline import ask
from rag.settings import get_settings
from rag.store.store import Store
from rag.types import GateKind

PARKING = b"""# Parking

Visitors park in lot B, next to the main entrance. Parking in lot B is free for the first two hours.

## Bicycles

Bicycles are parked in the covered racks behind building C.
"""
QUESTION = "Where are bicycles parked behind building C?"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("knobs")
    s = Store(path, settings=get_settings(store=path), embedder=HashEmbedder())
    assert s.ingest_bytes(PARKING, "parking.md").status == "ready"
    yield s
    s.close()


def _ask(store, **knobs):
    gen = FakeGenerator()
    stream = ask(store, QUESTION, store.settings.with_overrides(**knobs), get_generator=lambda s: gen)
    return stream.run(), gen


def test_the_store_settings_answer_the_question(store):
    a, gen = _ask(store)
    assert not a.refused and a.citations and len(gen.prompts) == 1


def test_a_threshold_given_in_settings_is_the_gates(store):
    a, gen = _ask(store, threshold=0.01)
    assert a.refused and a.threshold == 0.01 and gen.prompts == []
    assert a.refusal == f'NO ANSWER: nothing under cosine distance 0.01 for "{QUESTION}"'


def test_max_sources_min_score_and_gate_kind_given_in_settings_are_the_gates(store):
    a, _ = _ask(store, max_sources=1, threshold=2.0)
    assert len(a.citations) == 1
    a, gen = _ask(store, min_score=1.0, mention_score=1.0)
    assert a.refused and (a.gate.min_score, a.gate.mention_score) == (1.0, 1.0) and gen.prompts == []
    a, _ = _ask(store, gate=GateKind.DISTANCE, min_score=1.0)
    assert not a.refused and a.gate.kind == GateKind.DISTANCE
