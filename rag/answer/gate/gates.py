"""The table of gates (design stage 7, issues 8 and 15): one row per :class:`rag.types.GateKind`.

Each row implements :class:`rag.answer.gate.Gate` (``decide``, ``regate``, ``default_min_score``), so the
pipeline, the app's slider and the CLI look a gate up once and never branch on its kind; a new gate is one
module and one row. :class:`StoreContext` is what a gate may read about a store besides the hits (chunk
texts and contents, term statistics, the calibration), each read only when the gate asks for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rag.answer.gate import DistanceGate, Gate, GateKnobs, GateResult
from rag.answer.gate.calibrated_gate import CalibratedGate, store_calibration, store_gate_stats
from rag.answer.gate.calibration import Calibration
from rag.answer.gate.learned_gate import LearnedGate
from rag.text import TermStats
from rag.types import GateKind

if TYPE_CHECKING:
    from rag.store.records import ChunkRow
    from rag.store.store import Store

#: Every gate by kind: the design's distance gate, issue 8's learned gate, issue 15's calibrated gate (the default).
GATES: Mapping[GateKind, Gate] = {
    GateKind.DISTANCE: DistanceGate(),
    GateKind.LEARNED: LearnedGate(),
    GateKind.CALIBRATED: CalibratedGate(),
}


def gate_for(kind: GateKind | str) -> Gate:
    """The row of :data:`GATES` for ``kind``; ``ValueError`` listing the kinds for an unknown one."""
    try:
        return GATES[GateKind(kind)]
    except ValueError:
        raise ValueError(f"unknown gate {kind!r}; allowed: {', '.join(GateKind)}") from None


def regate_with(result: GateResult, knobs: GateKnobs) -> GateResult:
    """``result`` re-decided at ``knobs`` by the gate that made it (no search, no scoring again)."""
    return GATES[result.kind].regate(result, knobs)


class StoreContext:
    """:class:`rag.answer.gate.GateContext` over a :class:`rag.store.store.Store`: chunk rows are read once per
    question (texts and contents together), the statistics and calibration from the store's index cache."""

    def __init__(self, store: Store):
        self.store = store
        self._rows: dict[int, ChunkRow] = {}

    def _read(self, chunk_ids: Sequence[int]) -> None:
        missing = [i for i in dict.fromkeys(chunk_ids) if i not in self._rows]
        if missing:
            self._rows.update((r.chunk_id, r) for r in self.store.chunks(missing))

    def texts(self, chunk_ids: Sequence[int]) -> dict[int, str]:
        self._read(chunk_ids)
        return {i: self._rows[i].text for i in chunk_ids if i in self._rows}

    def contents(self, chunk_ids: Sequence[int]) -> dict[int, str]:
        self._read(chunk_ids)
        return {i: self._rows[i].content for i in chunk_ids if i in self._rows}

    def term_stats(self) -> TermStats:
        return self.store.term_stats()

    def gate_stats(self) -> TermStats:
        return store_gate_stats(self.store)

    def calibration(self) -> Calibration:
        return store_calibration(self.store)
