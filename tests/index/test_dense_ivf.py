"""The approximate dense index (issue 18): IVF picked by size, exact when every list is probed, deletes, files."""

from __future__ import annotations

import numpy as np
import pytest

from rag.index.dense import APPROX_MIN_CHUNKS, DenseIndex, choose_kind, ivf_lists, ivf_probes


def _clustered(n: int, seed: int = 0, centers: int = 50) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(centers, 384)).astype(np.float32)
    v = c[rng.integers(0, centers, n)] + 0.3 * rng.normal(size=(n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_kind_by_size():
    assert choose_kind(APPROX_MIN_CHUNKS - 1) == "flat"
    assert choose_kind(APPROX_MIN_CHUNKS) == "ivf"
    assert choose_kind(10, "ivf") == "ivf" and choose_kind(10**7, "flat") == "flat"
    with pytest.raises(ValueError, match="unknown dense index kind 'hnsw'"):
        choose_kind(10, "hnsw")
    assert ivf_lists(1_000_000) == 2000 and ivf_lists(1) == 16
    assert ivf_probes(2000) == 125 and ivf_probes(100) == 64 and ivf_probes(16) == 16


def test_ivf_probing_every_list_is_exact_and_default_probes_find_most():
    v = _clustered(6000)
    ids = np.arange(10_000, 16_000, dtype=np.int64)
    flat = DenseIndex.build(ids, v, kind="flat")
    ivf = DenseIndex.build(ids, v, kind="ivf")
    assert (flat.kind, ivf.kind) == ("flat", "ivf") and len(ivf) == 6000
    queries = _clustered(30, seed=1)
    found = 0
    for q in queries:
        want, want_d = flat.search(q, 20)
        ivf.nprobe = ivf_probes(ivf.index.nlist)
        found += len(set(ivf.search(q, 20)[0].tolist()) & set(want.tolist()))
        ivf.nprobe = ivf.index.nlist
        got, got_d = ivf.search(q, 20)
        assert got.tolist() == want.tolist()
        np.testing.assert_allclose(got_d, want_d, atol=1e-5)
        np.testing.assert_allclose(ivf.distances(q, got), want_d, atol=1e-5)  # stored vectors are exact
    assert found / (20 * len(queries)) >= 0.9


def test_ivf_remove_save_load_and_never_pads(tmp_path):
    v = _clustered(2000, seed=2)
    ids = np.arange(2000, dtype=np.int64)
    ivf = DenseIndex.build(ids, v, kind="ivf")
    assert ivf.remove([0, 1, 99999]) == 2 and len(ivf) == 1998
    assert 0 not in ivf.search(v[0], 50)[0].tolist()
    assert sorted(ivf.ids().tolist()) == list(range(2, 2000))
    ivf.save(tmp_path / "d.faiss")
    back = DenseIndex.load(tmp_path / "d.faiss")
    assert back.kind == "ivf" and len(back) == 1998 and back.nprobe == ivf.nprobe
    assert back.search(v[5], 1)[0].tolist() == [5]
    back.add([5000], v[:1])
    assert back.search(v[0], 1)[0].tolist() == [5000]
    got, d = back.search(v[7], 5000)
    assert (got >= 0).all() and len(got) == len(d) <= 1999
    with pytest.raises(ValueError, match="not unit-norm"):
        back.add([6000], 2 * v[:1])


def test_ivf_marks_itself_stale_after_growing_past_its_training():
    v = _clustered(4000, seed=3)
    ivf = DenseIndex.build(np.arange(500), v[:500], kind="ivf")
    assert not ivf.stale
    ivf.add(np.arange(500, 4000), v[500:])
    assert ivf.stale
    assert not DenseIndex.build(np.arange(10), v[:10], kind="flat").stale
