"""Issue 27, item 1 (rag/index/units.py): a chunk's dense score is the best of its own and its units'."""

from __future__ import annotations

import numpy as np
import pytest

from rag.index.dense import DenseIndex
from rag.index.units import UnitIndex, dense_leg


def _unit(rng, n, d=384):
    v = rng.normal(size=(n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _brute(q, chunk_vecs, unit_vecs, owner, depth, margin=0.02):
    sims = chunk_vecs @ q
    best = {c: float(s) for c, s in enumerate(sims)}
    for u, c in enumerate(owner):
        best[c] = max(best[c], float(unit_vecs[u] @ q) - margin)
    order = sorted(best, key=lambda c: (-best[c], c))[:depth]
    return order, [1.0 - best[c] for c in order]


def test_dense_leg_matches_brute_force_max_of_chunk_and_units():
    rng = np.random.default_rng(0)
    chunks, units = _unit(rng, 50), _unit(rng, 120)
    owner = rng.integers(0, 50, size=120)
    dense = DenseIndex.build(np.arange(50), chunks)
    ui = UnitIndex(np.arange(1000, 1120), owner, units)
    for q in _unit(rng, 5):
        ids, dist = dense_leg(q, dense, ui, depth=10)
        want, wdist = _brute(q, chunks, units, owner, 10)
        assert ids.tolist()[:5] == want[:5]
        assert np.allclose(dist[:5], wdist[:5], atol=1e-5)
        assert np.all(np.diff(dist) >= -1e-6)


def test_a_chunk_found_only_by_its_unit_rises():
    rng = np.random.default_rng(1)
    chunks = _unit(rng, 30)
    q = _unit(rng, 1)[0]
    unit = (q + 0.05 * _unit(rng, 1)[0])
    unit /= np.linalg.norm(unit)
    dense = DenseIndex.build(np.arange(30), chunks)
    plain, _ = dense_leg(q, dense, None, depth=5)
    ui = UnitIndex([7], [29], unit[None, :])
    ids, dist = dense_leg(q, dense, ui, depth=5)
    assert 29 not in plain.tolist() and ids[0] == 29 and dist[0] < 0.03


def test_scope_keeps_only_allowed_chunks_units():
    rng = np.random.default_rng(2)
    chunks, units = _unit(rng, 20), _unit(rng, 40)
    owner = np.arange(40) % 20
    dense = DenseIndex.build(np.arange(20), chunks)
    ui = UnitIndex(np.arange(40), owner, units)
    allowed = np.array([3, 5, 11], np.int64)
    ids, _ = dense_leg(units[0], dense, ui, depth=10, allowed=allowed)
    assert set(ids.tolist()) <= {3, 5, 11}
    assert ui.best(units[0], allowed=np.array([], np.int64)) == {}


def test_empty_unit_index_is_the_chunk_search_and_lengths_checked():
    rng = np.random.default_rng(3)
    dense = DenseIndex.build(np.arange(10), _unit(rng, 10))
    q = _unit(rng, 1)[0]
    empty = UnitIndex(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 384), np.float32))
    a, b = dense_leg(q, dense, empty, 5), dense.search(q, 5)
    assert a[0].tolist() == b[0].tolist()
    with pytest.raises(ValueError, match="unit ids"):
        UnitIndex([1, 2], [1], _unit(rng, 2))
