"""The store's own references for the gate (issue 15): pseudo-queries, the unrelated bank, shrinkage, JSON."""

import numpy as np
import pytest

from rag.answer.gate import calibration as cb


def _unit(rows):
    v = np.asarray(rows, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_bank_is_fixed_and_free_of_comments():
    bank = cb.unrelated_bank()
    assert len(bank) >= 100
    assert not any(q.startswith("#") for q in bank)
    assert len(set(bank)) == len(bank)


def test_pseudo_query_takes_a_question_sized_sentence():
    text = "Intro.\nParking permits are renewed every January at the front desk. Short one."
    assert cb.pseudo_query(text) == "Parking permits are renewed every January at the front desk."
    assert cb.pseudo_query("| a | b |") is None
    long = " ".join(f"w{i}" for i in range(40))
    assert cb.pseudo_query(long) == " ".join(f"w{i}" for i in range(24))


def test_identical_contents_count_once_for_pseudo_queries():
    contents = ["The warranty period is 24 months from the date of purchase."] * 3 + ["Other text with enough words here."]
    assert cb.distinct_indices(contents) == [0, 3]
    assert [i for i, _ in cb.pseudo_queries(contents)] == [0, 3]


def test_pseudo_queries_are_capped_and_drawn_by_content_not_by_position():
    contents = [f"Sentence number {i} has quite a few words in it." for i in range(300)]
    pq = cb.pseudo_queries(contents, n=10)
    assert len(pq) == 10 and [i for i, _ in pq] == sorted(i for i, _ in pq)
    drawn = {q for _, q in pq}
    # ten more chunks at the front (issue 27): the sample of 64 evenly spaced ones was redrawn whole; now a chunk
    # is drawn for its own content, so at most as many pseudo-queries change as chunks were added
    fifty = {q for _, q in cb.pseudo_queries(contents, n=50)}
    more = [f"An added sentence {i} with a few more words in it." for i in range(10)] + contents
    again = {q for _, q in cb.pseudo_queries(more, n=50)}
    assert len(fifty & again) >= 40  # evenly spaced, as before: 7 of 50 kept
    assert {q for _, q in cb.pseudo_queries(list(reversed(contents)), n=10)} == drawn


def test_trimmed_mean_drops_both_tails():
    assert cb.trimmed_mean([0.1, 0.3, 0.3, 0.3, 5.0]) == pytest.approx(0.3)
    assert cb.trimmed_mean([0.2, 0.4]) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="no values"):
        cb.trimmed_mean([])


def test_nearest_distances_is_one_minus_best_cosine():
    v = _unit([[1, 0], [0, 1]])
    q = _unit([[1, 0], [1, 1]])
    assert cb.nearest_distances(q, v) == pytest.approx([0.0, 1 - np.sqrt(0.5)], abs=1e-6)
    assert cb.nearest_distances(q, np.zeros((0, 2))).tolist() == [2.0, 2.0]


def test_shrinkage_leans_on_the_prior_for_tiny_stores():
    assert cb.shrink(0.1, 1) == pytest.approx((0.1 + cb.PRIOR_WEIGHT * cb.PRIOR_SELF_DISTANCE) / (1 + cb.PRIOR_WEIGHT))
    assert abs(cb.shrink(0.5, 1000) - 0.5) < 0.01


def test_calibrate_with_a_fake_encoder_and_relative_scale():
    # 2-d toy: the store's chunks point along x; bank questions along y (unrelated), pseudo-queries near x.
    contents = [f"Chunk {i} says something about the x axis here." for i in range(20)]
    vecs = _unit([[1, 0.01 * i] for i in range(20)])

    def encode(texts):
        return _unit([[0.0, 1.0] if t in set(cb.unrelated_bank()) else [1.0, 0.05] for t in texts])

    cal = cb.calibrate(contents, vecs, encode, encoder_key="fake-2d", detect=lambda t: ("en", 0.99))
    assert cal.n_chunks == 20 and cal.n_distinct == 20 and cal.n_pseudo == 20
    assert cal.self_distance_raw < 0.01 and cal.far_distance > 0.8
    assert cal.languages == {"en": 1.0}
    assert cal.relative_distance(cal.self_distance) == pytest.approx(0.0)
    assert cal.relative_distance(cal.far_distance) == pytest.approx(1.0)
    assert cb.Calibration.from_json(cal.to_json()) == cal


def test_empty_store_gets_the_prior_and_no_languages():
    cal = cb.calibrate([], np.zeros((0, 384), np.float32), lambda t: pytest.fail("no encode for an empty store"))
    assert cal.n_chunks == 0 and cal.self_distance == cb.PRIOR_SELF_DISTANCE and cal.languages == {}


def test_calibration_of_another_version_is_refused():
    cal = cb.Calibration(1, 1, 1, 0.3, 0.3, 0.8, 0.7)
    bad = cal.to_json().replace(f'"version": {cb.CALIBRATION_VERSION}', '"version": 0')
    with pytest.raises(ValueError, match="version"):
        cb.Calibration.from_json(bad)
    with pytest.raises(ValueError, match="not a gate calibration"):
        cb.Calibration.from_json("{}")


def test_language_shares_only_count_confident_detections():
    det = {"a": ("en", 0.99), "b": ("de", 0.95), "c": ("fr", 0.3)}
    assert cb.language_shares(["a", "a", "b", "c"], lambda t: det[t]) == {"en": 0.667, "de": 0.333}
