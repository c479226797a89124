"""The records an evaluation run produces: recall cells, per strategy x mode metrics, chunking facts,
paired tests, refusal sweeps and the whole :class:`EvalResult` (JSON-ready through :meth:`EvalResult.to_dict`).

Plain dataclasses, no behaviour beyond look-ups; ranks are 1-based, distances
cosine distances ``1 - cos``, character counts Python code points.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from rag.evaluation.metrics import RankSummary, RecallCell, SignTest


@dataclass(frozen=True)
class SweepRow:
    """One threshold of the refusal sweep.

    ``bluffs_near``/``bluffs_far``: OOD queries that still got at least one
    source; ``lost``: answerable in-domain queries (needle in the ungated top
    4) whose gated sources no longer hold it, refusals included;
    ``refused``: in-domain queries refused outright (answerable or not).
    """

    threshold: float
    bluffs_near: int
    bluffs_far: int
    lost: int
    refused: int

    @property
    def bluffs(self) -> int:
        return self.bluffs_near + self.bluffs_far


@dataclass
class Sweep:
    """A refusal sweep for one strategy and mode; ``recommended`` is a threshold from ``rows``."""

    strategy: str
    mode: str
    gate: str
    n_near: int
    n_far: int
    n_answerable: int
    n_in_domain: int
    rows: list[SweepRow]
    recommended: float | None = None
    rule: str = ""
    knob: str = "cosine distance threshold"

    def row(self, threshold: float) -> SweepRow | None:
        return next((r for r in self.rows if abs(r.threshold - threshold) < 1e-9), None)


@dataclass
class ModeMetrics:
    """Retrieval quality of one strategy x mode over all in-domain queries.

    ``recall`` by k (1, 4, 8, 20); ``mrr`` over the top 20; ``budget_recall``
    recall within the first 2000 characters delivered (``budget_hits`` of
    ``n_queries``); ``ctx4_chars`` mean characters of ``content`` in the top 4;
    ``ranks`` 1-based rank of the first correct chunk per query key (``None``
    = not in the top 20); ``by_wording`` the same recall and MRR over the
    queries of each wording, ``"doc"`` and ``"user"`` (issue 19).
    """

    strategy: str
    mode: str
    n_queries: int
    recall: dict[int, RecallCell]
    mrr: float
    budget_hits: int
    budget_recall: float
    ctx4_chars: float
    ranks: dict[str, int | None]
    by_wording: dict[str, RankSummary] = field(default_factory=dict)


@dataclass
class ChunkStats:
    """Chunking facts of one strategy: ``chunks``, ``over_window`` (texts over 256 word-pieces),
    ``header_share`` (header word-pieces / all embedded word-pieces), ``destroyed`` question ids."""

    strategy: str
    chunks: int
    over_window: int
    header_share: float
    mean_content_chars: float
    destroyed: list[str]


@dataclass(frozen=True)
class PairTest:
    """A paired sign test at Recall@k: ``a`` against ``b`` (strategies within ``within`` mode, or modes within a strategy).

    ``test`` is over all queries, ``by_wording`` over each wording's (``"doc"``, ``"user"``).
    """

    kind: str  # "strategy" or "mode"
    within: str
    a: str
    b: str
    k: int
    test: SignTest
    by_wording: dict[str, SignTest] = field(default_factory=dict)


@dataclass
class EvalResult:
    """Everything one evaluation run measured (serialisable with :meth:`to_dict`, except the in-memory runs)."""

    created: str
    commit: str | None
    documents: list[str]
    failed_documents: dict[str, str]
    n_questions: int
    n_queries: int
    n_near: int
    n_far: int
    strategies: list[str]
    modes: list[str]
    skipped_modes: dict[str, str]
    chunk_stats: dict[str, ChunkStats]
    metrics: list[ModeMetrics]
    strategy_tests: list[PairTest]
    mode_tests: list[PairTest]
    sweeps: list[Sweep]
    distances: dict[str, list[float]]
    timings_s: dict[str, float]
    cache: dict[str, object]
    notes: list[str] = field(default_factory=list)
    machine: str | None = None  # where it ran (set by the CLI: rag.evaluation.bench.machine.machine_summary)
    # in memory only: hits per (strategy, mode) -> query key -> list[Hit]; the indexes by strategy
    runs: dict = field(default_factory=dict, repr=False)
    indexes: dict = field(default_factory=dict, repr=False)
    queries: list = field(default_factory=list, repr=False)
    ood: list = field(default_factory=list, repr=False)
    gate_run: object = field(default=None, repr=False)

    def metric(self, strategy: str, mode: str) -> ModeMetrics | None:
        return next((m for m in self.metrics if m.strategy == strategy and m.mode == mode), None)

    def to_dict(self) -> dict:
        """A JSON-ready dict (the ``--json`` output); the in-memory runs and indexes are left out."""
        d = {k: v for k, v in asdict(self).items() if k not in ("runs", "indexes", "queries", "ood", "gate_run")}
        for m in d["metrics"]:
            m["recall"] = {str(k): v for k, v in m["recall"].items()}
            for w in m["by_wording"].values():
                w["recall"] = {str(k): v for k, v in w["recall"].items()}
        return d
