"""The distance gate (design stage 7): a comparison of two numbers, never a prompt."""

from __future__ import annotations

import math

import pytest

from rag.answer.gate import GateResult, apply_gate, refusal_text
from rag.types import Hit


def _hits(dists):
    return [Hit(chunk_id=100 + i, rank=i + 1, fused_rank=i + 1, rrf_score=1 / (61 + i), cosine_distance=d)
            for i, d in enumerate(dists)]


def test_refusal_text_exact():
    assert refusal_text("how do I renew my passport", 0.675) == \
        'NO ANSWER: nothing under cosine distance 0.675 for "how do I renew my passport"'
    assert refusal_text("q", 0.6) == 'NO ANSWER: nothing under cosine distance 0.6 for "q"'


def test_keeps_at_most_max_sources_in_fused_order():
    g = apply_gate("q", _hits([0.7, 0.3, 0.5, 0.2, 0.1, 0.4]), threshold=0.675, max_sources=4)
    assert isinstance(g, GateResult) and not g.refused and g.refusal is None
    assert [h.chunk_id for h in g.sources] == [101, 102, 103, 104]  # fused order, 0.7 dropped
    assert len(g.candidates) == 6 and g.nearest_distance == pytest.approx(0.1)


def test_threshold_is_strict():
    g = apply_gate("q", _hits([0.675, 0.6751]), threshold=0.675)
    assert g.refused and g.sources == ()


def test_refuses_with_query_and_threshold():
    g = apply_gate("how do I renew my passport", _hits([0.8, 0.9]), threshold=0.675)
    assert g.refused
    assert g.refusal == 'NO ANSWER: nothing under cosine distance 0.675 for "how do I renew my passport"'
    assert g.nearest_distance == pytest.approx(0.8) and len(g.candidates) == 2


def test_no_candidates_refuses():
    g = apply_gate("anything", [], threshold=0.675)
    assert g.refused and g.nearest_distance is None and g.candidates == ()


def test_nan_distance_never_passes():
    g = apply_gate("q", _hits([math.nan, 0.2]), threshold=0.675, max_sources=4)
    assert [h.chunk_id for h in g.sources] == [101]


@pytest.mark.parametrize("kw, msg", [({"max_sources": 0}, "max_sources"), ({"threshold": 2.5}, "threshold")])
def test_bad_arguments(kw, msg):
    with pytest.raises(ValueError, match=msg):
        apply_gate("q", _hits([0.1]), **kw)


# ---------------------------------------------------------------- the learned gate (issue 8), the default


def _learned(query, dists, texts, corpus, **kw):
    from rag.answer.gate.learned_gate import apply_learned_gate
    from rag.text import TermStats

    hits = _hits(dists)
    return apply_learned_gate(query, hits, {h.chunk_id: t for h, t in zip(hits, texts)}, TermStats.from_texts(corpus), **kw)


CORPUS = ["Longformer and reformer use a sparse version of the attention matrix to speed up training.",
          "The prefill phase processes the whole prompt before the first token is generated.",
          "Beam search keeps several candidate sequences at each step of decoding."] * 5


def test_learned_gate_keeps_distance_sources_when_the_words_are_covered():
    g = _learned("Which models use a sparse version of the attention matrix?", [0.35, 0.5, 0.8],
                 CORPUS[:3], CORPUS)
    assert g.kind == "learned" and not g.refused
    assert [h.chunk_id for h in g.sources] == [100, 101]  # exactly the distance gate's sources
    assert 0.0 <= g.score <= 1.0 and g.score >= g.min_score and "nearest distance 0.350" in g.why


def test_learned_gate_refuses_what_the_distance_gate_refuses():
    g = _learned("how do I renew my passport", [0.8, 0.9], CORPUS[:2], CORPUS)
    assert g.refused and g.sources == ()
    assert g.refusal == 'NO ANSWER: nothing under cosine distance 0.675 for "how do I renew my passport"'


def test_learned_gate_score_cut_is_a_knob():
    q = "Which models use a sparse version of the attention matrix?"
    ok = _learned(q, [0.35, 0.5], CORPUS[:2], CORPUS, min_score=0.0)
    strict = _learned(q, [0.35, 0.5], CORPUS[:2], CORPUS, min_score=1.0)
    assert not ok.refused and strict.refused
    assert strict.refusal.startswith("NO ANSWER: the sources do not seem to answer")


def test_regate_flips_without_searching_again():
    from rag.answer.gate import regate

    g = _learned("Which models use a sparse version of the attention matrix?", [0.35, 0.5, 0.8], CORPUS[:3], CORPUS)
    assert regate(g, 0.3, 4).refused  # nothing under 0.3
    assert [h.chunk_id for h in regate(g, 0.9, 4).sources] == [100, 101, 102]
    assert regate(g, 0.9, 4, min_score=1.0).refused
    d = apply_gate("q", _hits([0.2]), 0.675)
    assert regate(d, 0.1, 4).refused and regate(d, 0.1, 4).kind == "distance"


def test_a_source_near_by_its_best_unit_is_kept_once_the_chunks_decide_it_is_not_refused():
    """A long chunk whose one line answers (a form's "Total Budget: $331,404", first in both legs) is far by its
    whole vector; not refused, the gate keeps it by its best unit's distance (a new user's walk, 2026-12-06)."""
    from rag.answer.gate import source_distance

    form = Hit(chunk_id=7, rank=1, fused_rank=1, rrf_score=2 / 61, cosine_distance=0.80, unit_distance=0.40)
    near = Hit(chunk_id=8, rank=2, fused_rank=2, rrf_score=1 / 62, cosine_distance=0.60)
    far = Hit(chunk_id=9, rank=3, fused_rank=3, rrf_score=1 / 63, cosine_distance=0.90, unit_distance=0.85)
    assert source_distance(form) == 0.40 and source_distance(near) == 0.60
    g = apply_gate("What is the total budget?", [form, near, far], 0.675, 4)
    assert [h.chunk_id for h in g.sources] == [7, 8] and not g.refused
    # the refusal is still the chunks': a unit alone never lets a question through
    alone = apply_gate("What is the total budget?", [form, far], 0.675, 4)
    assert alone.refused and alone.sources == ()
