"""Stage 4 of the design, dense leg (issue 27, item 1): unit vectors beside chunk vectors.

A user's question usually matches the meaning of one sentence, and a chunk's
vector (the mean of up to 256 word-pieces) dilutes it. So every chunk of more
than one unit (:func:`rag.ingest.chunk.chunk_units`: its sentences, list items,
table rows) also has one vector per unit, embedded with the chunk's header
(``[Doc title > Section]\\n`` + the unit, as the chunk itself is embedded). In
the dense leg a chunk scores the best of its own cosine similarity and its
units' (:func:`dense_leg`); the chunk, never the unit, is what is fused, gated,
cited and quoted, and each hit's ``cosine_distance`` stays its own vector's,
so the gate reads what it was fitted on.

Measured on both dev corpora (docs/evaluation.md, issue 27), with the even
paragraph splits and carried leads of :mod:`rag.ingest.chunk`: users' wording
R@4 0.759 -> 0.815 against the chunk vectors alone (+3 / -0), documents'
wording 0.926 -> 0.944; 3.3 unit vectors per chunk, about 1.5 ms per search.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rag.index.dense import DenseIndex

#: Unit hits read per query, before they are folded into their chunks (measured: 20 and 100 rank the same).
UNIT_DEPTH = 60

#: A unit's cosine similarity counts this much less than a chunk's own (issue 27): a unit is short, so a few shared
#: words make it close to a question whose passage lies elsewhere. Chosen leave-one-corpus-out over 0, .01, .02,
#: .03, .05 (users' R@4, then R@20, then MRR): .02 on the course chapters, .03 on the PDFs; either, applied to the
#: other corpus, keeps its R@4 and wins one question back at R@20 (docs/evaluation.md).
UNIT_MARGIN = 0.02


class UnitIndex:
    """Unit vectors and the chunk each belongs to.

    ``unit_ids`` ``(n,)`` int64 unit row ids, ``chunk_ids`` ``(n,)`` int64 the
    owning chunk of each, ``vectors`` ``(n, dim)`` float32 unit rows (exact
    inner product: FAISS ``IndexFlatIP`` through :class:`rag.index.dense.DenseIndex`).
    Raises ``ValueError`` when the lengths differ.
    """

    def __init__(self, unit_ids: Sequence[int] | np.ndarray, chunk_ids: Sequence[int] | np.ndarray,
                 vectors: np.ndarray, dim: int = 384):
        unit_ids = np.asarray(unit_ids, dtype=np.int64).reshape(-1)
        chunk_ids = np.asarray(chunk_ids, dtype=np.int64).reshape(-1)
        if len(unit_ids) != len(chunk_ids) or len(unit_ids) != len(vectors):
            raise ValueError(f"{len(unit_ids)} unit ids, {len(chunk_ids)} chunk ids, {len(vectors)} vectors")
        self.dim = int(dim)
        self._owner = dict(zip(unit_ids.tolist(), chunk_ids.tolist()))
        self._units_of: dict[int, list[int]] = {}
        for u, c in zip(unit_ids.tolist(), chunk_ids.tolist()):
            self._units_of.setdefault(c, []).append(u)
        self.dense = DenseIndex.build(unit_ids, np.asarray(vectors, np.float32).reshape(-1, self.dim), dim=self.dim)

    def __len__(self) -> int:
        return len(self.dense)

    def best(self, q_vec: np.ndarray, depth: int = UNIT_DEPTH,
             allowed: np.ndarray | None = None) -> dict[int, float]:
        """``{chunk id: best cosine similarity of its units}`` over the ``depth`` nearest units to ``q_vec``
        ((dim,) unit float32); ``allowed`` (int64 chunk ids) keeps only those chunks' units."""
        if len(self) == 0:
            return {}
        units = None
        if allowed is not None:
            units = np.asarray([u for c in np.asarray(allowed).tolist() for u in self._units_of.get(int(c), ())],
                               dtype=np.int64)
            if not len(units):
                return {}
        ids, dist = self.dense.search(q_vec, depth, units)
        out: dict[int, float] = {}
        for u, d in zip(ids.tolist(), dist.tolist()):
            c = self._owner[u]
            out[c] = max(out.get(c, -1.0), 1.0 - d)
        return out


def dense_leg(q_vec: np.ndarray, dense: DenseIndex, units: UnitIndex | None, depth: int,
              allowed: np.ndarray | None = None, margin: float = UNIT_MARGIN) -> tuple[np.ndarray, np.ndarray]:
    """The dense leg's ranking: ``(chunk ids int64 (m,), scores float32 (m,))``, best first, ``m <= depth``.

    Without ``units`` (or with an empty one) it is the chunk vectors' own search
    (scores are cosine distances, ascending, as :meth:`DenseIndex.search` gives
    them). With ``units`` each chunk among the ``depth`` nearest chunks and the
    chunks of the :data:`UNIT_DEPTH` nearest units scores ``1 - max(own
    similarity, best unit similarity - margin)`` (a distance again, ascending;
    equal ones by chunk id; ``margin`` default :data:`UNIT_MARGIN`).
    """
    ids, dist = dense.search(q_vec, depth) if allowed is None else dense.search(q_vec, depth, allowed)
    if units is None or len(units) == 0:
        return ids, dist
    sim = {int(c): 1.0 - float(d) for c, d in zip(ids, dist)}
    best = units.best(q_vec, max(UNIT_DEPTH, depth), allowed)
    extra = [c for c in best if c not in sim]
    if extra:
        own = 1.0 - dense.distances(q_vec, extra)
        sim.update({c: float(s) for c, s in zip(extra, own)})
    score = {c: max(s, best.get(c, -1.0) - margin) for c, s in sim.items()}
    order = sorted(score, key=lambda c: (-score[c], c))[:depth]
    return np.asarray(order, dtype=np.int64), np.asarray([1.0 - score[c] for c in order], dtype=np.float32)
