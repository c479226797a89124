"""Retrieval evaluation: the design's method ("How retrieval is judged") as a library.

Ground truth is a JSONL file of questions, each with a NEEDLE (a short verbatim
sentence occurring once in the corpus) and two phrasings (``query_course``,
``query_ticket``), plus a JSONL file of out-of-domain (OOD) queries
(``id``, ``query``, ``kind`` in ``near``/``far``). A retrieval is correct only
if a returned chunk's ``content`` contains the whole needle.

What is computed, per chunking strategy (A-F of the design) and retrieval mode
(``dense``, ``bm25``, ``hybrid``, ``rerank``):

* Recall@1/4/8/20 over all queries (both phrasings), each with a 95 % Wilson
  interval, and MRR (reciprocal rank of the first correct chunk, 0 when none
  in the top 20);
* recall within the first 2000 characters delivered (equal context budget)
  and the mean characters in the top 4 (``ctx@4``);
* destroyed answers: needles no chunk's ``content`` contains;
* paired exact two-sided sign tests (wins / losses on discordant queries);
* chunk count, chunks over the 256 word-piece encoder window, and the
  header's share of embedded word-pieces;
* the refusal sweep: for each distance threshold, bluffs (OOD queries that
  still get a source, near and far apart) against answerable questions lost
  (in-domain queries whose ungated top 4 held the needle but whose gated
  sources do not, refusals included).

Ranks are 1-based; distances are cosine distances ``1 - cos`` on unit vectors;
character counts are Python code points. Nothing here imports streamlit: the
CLI (``rag/cli/eval.py``) and the app page (``pages/3_Evaluation.py``) only call
:func:`run_evaluation`, :func:`write_report` and :func:`write_plots`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from rag.answer import learned_gate as gm
from rag.answer.gate import apply_gate
from rag.errors import ExtractionError, RagError, StoreError
from rag.index.bm25 import BM25Index
from rag.index.dense import DenseIndex
from rag.index.embed import get_embedder
from rag.index.fusion import retrieve
from rag.ingest.chunk import STRATEGIES, chunk_document
from rag.ingest.extract import extract_bytes

#: The k of Recall@k reported everywhere (design: R@1/4/8/20).
RECALL_KS = (1, 4, 8, 20)
#: Depth of every ranked list kept per query (the largest k).
DEPTH = 20
#: Equal-context-budget comparison: recall within the first N characters delivered (BASELINES.md).
CONTEXT_BUDGET_CHARS = 2000
#: Retrieval modes the evaluation knows.
MODES = ("dense", "bm25", "hybrid", "rerank")
#: Default sweep: thresholds 0.400, 0.425, ..., 0.900 (cosine distance).
SWEEP_THRESHOLDS = tuple(round(0.40 + 0.025 * i, 3) for i in range(21))
#: z for a two-sided 95 % interval.
Z95 = 1.959963984540054


class EvalInputError(RagError):
    """A questions / out-of-domain file is missing or malformed; the message names the file and line."""


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Question:
    """One ground-truth question: a needle (verbatim, once in the corpus) and its two phrasings."""

    id: str
    doc: str
    needle: str
    query_course: str
    query_ticket: str


@dataclass(frozen=True)
class OODQuery:
    """An out-of-domain query; ``kind`` is ``"near"`` (near-topic) or ``"far"`` (unrelated)."""

    id: str
    query: str
    kind: str


@dataclass(frozen=True)
class EvalQuery:
    """One in-domain query as run: ``key`` is ``"<id>/<phrasing>"``, phrasing ``course`` or ``ticket``."""

    qid: str
    phrasing: str
    text: str
    needle: str

    @property
    def key(self) -> str:
        return f"{self.qid}/{self.phrasing}"


def _read_jsonl(path: Path, required: Sequence[str]) -> list[dict]:
    """Rows of a JSONL file, each checked for ``required`` string fields.

    Raises :class:`EvalInputError` naming ``path`` and the 1-based line for a
    missing file, bad JSON, a missing/empty field or a duplicate ``id``.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise EvalInputError(f"{path.name}: cannot read ({e.strerror or e})") from e
    except UnicodeDecodeError as e:
        raise EvalInputError(f"{path.name}: not UTF-8 text") from e
    rows, seen = [], set()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise EvalInputError(f"{path.name}:{n}: bad JSON ({e.msg})") from e
        if not isinstance(row, dict):
            raise EvalInputError(f"{path.name}:{n}: expected a JSON object")
        for f in required:
            if not isinstance(row.get(f), str) or not row[f].strip():
                raise EvalInputError(f"{path.name}:{n}: missing or empty field {f!r}")
        if row["id"] in seen:
            raise EvalInputError(f"{path.name}:{n}: duplicate id {row['id']!r}")
        seen.add(row["id"])
        rows.append(row)
    if not rows:
        raise EvalInputError(f"{path.name}: no rows")
    return rows


def load_questions(path) -> list[Question]:
    """Read a questions JSONL (``id``, ``doc``, ``needle``, ``query_course``, ``query_ticket``).

    Raises :class:`EvalInputError` naming the file and line on any defect.
    """
    fields = ("id", "doc", "needle", "query_course", "query_ticket")
    return [Question(**{f: r[f] for f in fields}) for r in _read_jsonl(Path(path), fields)]


def load_ood(path) -> list[OODQuery]:
    """Read an out-of-domain JSONL (``id``, ``query``, ``kind`` in ``near``/``far``).

    Raises :class:`EvalInputError` naming the file and line on any defect.
    """
    rows = _read_jsonl(Path(path), ("id", "query", "kind"))
    for r in rows:
        if r["kind"] not in ("near", "far"):
            raise EvalInputError(f"{Path(path).name}: id {r['id']!r}: kind must be 'near' or 'far', got {r['kind']!r}")
    return [OODQuery(r["id"], r["query"], r["kind"]) for r in rows]


def expand_queries(questions: Sequence[Question]) -> list[EvalQuery]:
    """Both phrasings of every question, course phrasing first: ``2 * len(questions)`` queries."""
    out = []
    for q in questions:
        out.append(EvalQuery(q.id, "course", q.query_course, q.needle))
        out.append(EvalQuery(q.id, "ticket", q.query_ticket, q.needle))
    return out


# --------------------------------------------------------------------------- statistics


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``successes / n``.

    Returns ``(low, high)`` in ``[0, 1]``; ``(0.0, 1.0)`` when ``n == 0``.
    E.g. ``wilson_interval(38, 64) == (0.4715, 0.7054)`` (the chapter's A at R@20).
    Raises ``ValueError`` unless ``0 <= successes <= n``.
    """
    if not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class SignTest:
    """Paired exact two-sided sign test: ``wins`` (a right, b wrong), ``losses`` (a wrong, b right), ``p``."""

    wins: int
    losses: int
    p: float

    def __str__(self) -> str:
        return f"+{self.wins} / -{self.losses}, p = {format_p(self.p)}"


def sign_test(a: Sequence[bool], b: Sequence[bool]) -> SignTest:
    """Exact two-sided sign test of ``a`` against ``b`` on paired outcomes (same queries, same order).

    Only discordant pairs count; ties are dropped. ``p`` is the two-sided
    binomial p-value of ``wins`` out of ``wins + losses`` at 1/2 (1.0 when no
    pair is discordant). E.g. +18 / -3 gives p = 0.0015 (the chapter's E vs A).
    Raises ``ValueError`` if the lengths differ.
    """
    if len(a) != len(b):
        raise ValueError(f"paired outcomes must have equal length, got {len(a)} and {len(b)}")
    wins = sum(1 for x, y in zip(a, b) if x and not y)
    losses = sum(1 for x, y in zip(a, b) if y and not x)
    if wins + losses == 0:
        return SignTest(0, 0, 1.0)
    from scipy.stats import binomtest

    return SignTest(wins, losses, float(binomtest(wins, wins + losses, 0.5, alternative="two-sided").pvalue))


def format_p(p: float) -> str:
    """A p-value for reports: 4 decimals, or ``< 0.0001``."""
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


# --------------------------------------------------------------------------- metrics


def first_hit_rank(contents: Sequence[str], needle: str) -> int | None:
    """1-based rank of the first chunk ``content`` containing the whole ``needle``; ``None`` if none does."""
    for i, c in enumerate(contents, 1):
        if needle in c:
            return i
    return None


def hits_at(ranks: Sequence[int | None], k: int) -> list[bool]:
    """Per query: was the first correct chunk at rank ``<= k``?"""
    return [r is not None and r <= k for r in ranks]


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    """Recall@k: share of queries with a correct chunk in the top ``k`` (0.0 for no queries)."""
    return sum(hits_at(ranks, k)) / len(ranks) if ranks else 0.0


def mean_reciprocal_rank(ranks: Sequence[int | None]) -> float:
    """MRR over queries: mean of ``1 / rank`` of the first correct chunk (0 for a miss)."""
    return sum(1.0 / r for r in ranks if r) / len(ranks) if ranks else 0.0


def hit_within_chars(contents: Sequence[str], needle: str, budget_chars: int = CONTEXT_BUDGET_CHARS) -> bool:
    """Equal-context-budget hit: does a chunk delivered within the first ``budget_chars`` characters hold the needle?

    Chunks are delivered in rank order and a chunk counts only if it fits
    entirely (cumulative ``len(content)`` ``<= budget_chars``): a chunker that
    makes one 4000-character chunk delivers nothing within 2000.
    """
    used = 0
    for c in contents:
        used += len(c)
        if used > budget_chars:
            return False
        if needle in c:
            return True
    return False


def destroyed_needles(questions: Sequence[Question], contents: Sequence[str]) -> list[str]:
    """Ids of questions whose needle no chunk ``content`` contains (a recall ceiling of zero)."""
    return [q.id for q in questions if not any(q.needle in c for c in contents)]


# --------------------------------------------------------------------------- embedding cache


def default_cache_path() -> Path:
    """``$XDG_CACHE_HOME/rag/embeddings.sqlite`` (``~/.cache/...`` by default), or ``$RAG_EMBED_CACHE``."""
    if os.environ.get("RAG_EMBED_CACHE"):
        return Path(os.environ["RAG_EMBED_CACHE"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "rag" / "embeddings.sqlite"


class EmbeddingCache:
    """Vectors keyed by ``sha256(model name + NUL + text)`` in one SQLite file.

    Six chunking strategies share most of their texts, so the evaluation
    embeds each distinct text once, ever. Rows are ``(384,)`` float32 unit
    vectors stored as raw bytes. Safe to delete at any time.
    """

    def __init__(self, path: Path | None = None):
        self.path = Path(path) if path else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB NOT NULL)")
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(model: str, text: str) -> str:
        return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()

    def encode(self, texts: Sequence[str], embedder, *, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Vectors for ``texts``: ``(len(texts), dim)`` float32, L2-normalised; only unseen texts reach ``embedder``.

        ``progress(done, total)`` is called after each batch of new texts.
        """
        dim = int(getattr(embedder, "dim", 384))
        model = str(getattr(embedder, "name", "embedder"))
        keys = [self.key(model, t) for t in texts]
        found: dict[str, np.ndarray] = {}
        uniq = list(dict.fromkeys(keys))
        for i in range(0, len(uniq), 500):
            part = uniq[i : i + 500]
            q = f"SELECT key, v FROM vec WHERE key IN ({','.join('?' * len(part))})"
            for k, v in self._db.execute(q, part):
                found[k] = np.frombuffer(v, dtype=np.float32)
        todo = {k: t for k, t in zip(keys, texts) if k not in found}
        self.hits += len(uniq) - len(todo)
        self.misses += len(todo)
        items = list(todo.items())
        batch = 256
        for i in range(0, len(items), batch):
            part = items[i : i + batch]
            vecs = embedder.encode([t for _, t in part])
            self._db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?)", [(k, v.tobytes()) for (k, _), v in zip(part, vecs)])
            self._db.commit()
            found.update({k: v for (k, _), v in zip(part, vecs)})
            if progress:
                progress(min(i + batch, len(items)), len(items))
        if not keys:
            return np.zeros((0, dim), dtype=np.float32)
        return np.ascontiguousarray(np.stack([found[k] for k in keys]), dtype=np.float32)

    def close(self) -> None:
        self._db.close()


# --------------------------------------------------------------------------- refusal sweep


def get_gate() -> tuple[Callable, str]:
    """``(gate(hits, threshold, max_sources) -> kept hits, name)``: ``rag.answer.gate.apply_gate`` when present."""
    def gate(hits, threshold, max_sources=4):
        return list(apply_gate("", hits, threshold, max_sources).sources)

    return gate, "rag.answer.gate.apply_gate"


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


def sweep_rows(in_domain: Sequence[tuple[Sequence, Sequence[str], str]], ood: Sequence[tuple[Sequence, str]],
               thresholds: Sequence[float], gate: Callable, contents: dict[int, str] | Callable[[int], str],
               max_sources: int = 4) -> list[SweepRow]:
    """Count bluffs and lost answers per threshold through ``gate(hits, threshold, max_sources)``.

    ``in_domain``: ``(hits, _, needle)`` per query, hits in final rank order;
    ``ood``: ``(hits, kind)``; ``contents`` maps a chunk id to its ``content``.
    An in-domain query is answerable when one of its ungated top
    ``max_sources`` hits holds the needle.
    """
    get = contents if callable(contents) else contents.__getitem__
    answerable = [any(needle in get(h.chunk_id) for h in hits[:max_sources]) for hits, _, needle in in_domain]
    rows = []
    for t in thresholds:
        near = far = lost = refused = 0
        for hits, kind in ood:
            if gate(hits, t, max_sources):
                near += kind == "near"
                far += kind == "far"
        for (hits, _, needle), ok in zip(in_domain, answerable):
            kept = gate(hits, t, max_sources)
            refused += not kept
            if ok and not any(needle in get(h.chunk_id) for h in kept):
                lost += 1
        rows.append(SweepRow(float(t), near, far, lost, refused))
    return rows


def recommend_threshold(rows: Sequence[SweepRow], n_answerable: int, n_ood: int,
                        max_lost_share: float = 0.05, *, answer_more: int = 1) -> tuple[float | None, str]:
    """Pick a threshold: fewest bluffs among those losing at most ``max_lost_share`` of answerable queries.

    Ties go to fewer lost answers, then to the knob value that answers more
    (``answer_more=1``: the larger threshold, as for a distance; ``-1``: the
    smaller, as for a probability cut).
    If no threshold keeps losses that low, the one minimising
    ``bluff share + lost share`` is taken. Returns ``(threshold, rule in words)``.
    """
    if not rows:
        return None, "no thresholds swept"
    cap = math.floor(max_lost_share * n_answerable + 1e-9)
    ok = [r for r in rows if r.lost <= cap]
    if ok:
        best = min(ok, key=lambda r: (r.bluffs, r.lost, -answer_more * r.threshold))
        return best.threshold, (f"fewest bluffs among values losing at most {max_lost_share:.0%} of answerable "
                                f"queries ({cap} of {n_answerable}); ties to fewer lost, then the value that answers more")
    best = min(rows, key=lambda r: (r.bluffs / max(1, n_ood) + r.lost / max(1, n_answerable), -answer_more * r.threshold))
    return best.threshold, (f"no value loses <= {max_lost_share:.0%} of answerable queries: "
                            "minimum of bluff share + lost share")


# --------------------------------------------------------------------------- documents


def store_documents(store) -> tuple[list, dict[str, str]]:
    """The ready documents of a ``rag.index.store.Store``, re-extracted from their stored original bytes.

    Returns ``(documents, failed)`` where ``failed`` maps a document label to
    the reason it is left out (not ready, original missing, extraction error);
    one bad document never stops the others. The evaluation re-chunks them
    with every strategy, so the store itself is not modified.
    """

    docs, failed = [], {}
    for row in store.documents():
        if row.status != "ready":
            failed[row.label] = f"status {row.status}" + (f" ({row.reason})" if row.reason else "")
            continue
        try:
            docs.append(extract_bytes(store.original_path(row.id).read_bytes(), row.name))
        except (OSError, StoreError) as e:
            failed[row.label] = f"original file unavailable ({e})"
        except ExtractionError as e:
            failed[row.label] = e.reason
    return docs, failed


# --------------------------------------------------------------------------- throwaway indexes

#: ``progress(fraction in [0, 1], message)``; the CLI draws a tqdm bar, the app an ``st.progress``.
Progress = Callable[[float, str], None]


def _no_progress(fraction: float, message: str) -> None:
    return None


@dataclass
class StrategyIndex:
    """Throwaway in-memory indexes over every document chunked with one strategy.

    Chunk ids are positions in ``chunks`` (int64 0..n-1); ``vectors`` is
    ``(n, 384)`` float32, L2-normalised, the embeddings of ``chunk.text``;
    BM25 indexes the same ``text``. ``text_tokens``/``content_tokens`` are the
    word-pieces (with [CLS]/[SEP]) of each chunk's ``text`` and ``content``.
    """

    strategy: str
    chunks: list
    vectors: np.ndarray
    dense: object
    bm25: object
    text_tokens: list[int]
    content_tokens: list[int]

    def content(self, chunk_id: int) -> str:
        return self.chunks[int(chunk_id)].content


def chunk_all(documents: Sequence, strategy: str, settings=None) -> list:
    """Every document cut with ``strategy`` (``rag.ingest.chunk.chunk_document``), in document order."""

    kw = {}
    if settings is not None:
        kw = dict(budget_chars=settings.chunk_budget_chars, overlap_chars=settings.overlap_chars,
                  window_tokens=settings.encoder_window_tokens)
    return [c for d in documents for c in chunk_document(d, strategy, **kw)]


def build_strategy_index(documents: Sequence, strategy: str, embedder, cache: EmbeddingCache, *, settings=None,
                         progress: Callable[[int, int], None] | None = None) -> StrategyIndex:
    """Chunk, embed (through ``cache``) and index ``documents`` with ``strategy`` (A-F of the design)."""

    chunks = chunk_all(documents, strategy, settings)
    texts = [c.text for c in chunks]
    vecs = cache.encode(texts, embedder, progress=progress)
    ids = np.arange(len(chunks), dtype=np.int64)
    k1, b = (settings.bm25_k1, settings.bm25_b) if settings is not None else (1.2, 0.75)
    return StrategyIndex(
        strategy=strategy, chunks=chunks, vectors=vecs,
        dense=DenseIndex.build(ids, vecs, dim=vecs.shape[1] if len(vecs) else 384),
        bm25=BM25Index.build(texts, ids, k1=k1, b=b),
        text_tokens=embedder.count_tokens_batch(texts),
        content_tokens=embedder.count_tokens_batch([c.content for c in chunks]),
    )


# --------------------------------------------------------------------------- result records


@dataclass(frozen=True)
class RecallCell:
    """Recall@k with its 95 % Wilson interval: ``hits`` of ``n`` queries."""

    k: int
    hits: int
    n: int
    value: float
    low: float
    high: float


@dataclass
class ModeMetrics:
    """Retrieval quality of one strategy x mode over all in-domain queries.

    ``recall`` by k (1, 4, 8, 20); ``mrr`` over the top 20; ``budget_recall``
    recall within the first 2000 characters delivered (``budget_hits`` of
    ``n_queries``); ``ctx4_chars`` mean characters of ``content`` in the top 4;
    ``ranks`` 1-based rank of the first correct chunk per query key (``None``
    = not in the top 20).
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
    """A paired sign test at Recall@k: ``a`` against ``b`` (strategies within ``within`` mode, or modes within a strategy)."""

    kind: str  # "strategy" or "mode"
    within: str
    a: str
    b: str
    k: int
    test: SignTest


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
        return d


# --------------------------------------------------------------------------- the run


def metrics_for(strategy: str, mode: str, queries: Sequence[EvalQuery], hits_by_key: dict[str, list],
                index: StrategyIndex) -> ModeMetrics:
    """Recall@k (+ Wilson), MRR, equal-budget recall and ctx@4 of one strategy x mode."""
    ranks: dict[str, int | None] = {}
    budget = 0
    ctx4 = 0
    for q in queries:
        contents = [index.content(h.chunk_id) for h in hits_by_key[q.key][:DEPTH]]
        ranks[q.key] = first_hit_rank(contents, q.needle)
        budget += hit_within_chars(contents, q.needle)
        ctx4 += sum(len(c) for c in contents[:4])
    n = len(queries)
    rl = list(ranks.values())
    recall = {}
    for k in RECALL_KS:
        h = sum(hits_at(rl, k))
        lo, hi = wilson_interval(h, n)
        recall[k] = RecallCell(k, h, n, h / n if n else 0.0, lo, hi)
    return ModeMetrics(strategy, mode, n, recall, mean_reciprocal_rank(rl), budget, budget / n if n else 0.0,
                       ctx4 / n if n else 0.0, ranks)


def chunk_stats(index: StrategyIndex, questions: Sequence[Question], window_tokens: int = 256) -> ChunkStats:
    """Chunk count, texts over the encoder window, the header's share of embedded word-pieces, destroyed needles."""
    total = sum(index.text_tokens)
    header = sum(t - c for t, c in zip(index.text_tokens, index.content_tokens))
    contents = [c.content for c in index.chunks]
    return ChunkStats(
        strategy=index.strategy, chunks=len(index.chunks),
        over_window=sum(1 for t in index.text_tokens if t > window_tokens),
        header_share=max(0.0, header / total) if total else 0.0,
        mean_content_chars=float(np.mean([len(c) for c in contents])) if contents else 0.0,
        destroyed=destroyed_needles(questions, contents),
    )


def pair_tests(metrics: Sequence[ModeMetrics], queries: Sequence[EvalQuery], ks: Sequence[int] = (1, 4, 20)) -> tuple[list[PairTest], list[PairTest]]:
    """All paired sign tests: strategy pairs within each mode, and mode pairs within each strategy."""
    keys = [q.key for q in queries]
    by = {(m.strategy, m.mode): m for m in metrics}
    strategies = list(dict.fromkeys(m.strategy for m in metrics))
    modes = list(dict.fromkeys(m.mode for m in metrics))

    def hits(m: ModeMetrics, k: int) -> list[bool]:
        return hits_at([m.ranks[key] for key in keys], k)

    s_tests, m_tests = [], []
    for k in ks:
        for mode in modes:
            for i, a in enumerate(strategies):
                for b in strategies[i + 1:]:
                    if (a, mode) in by and (b, mode) in by:
                        s_tests.append(PairTest("strategy", mode, a, b, k, sign_test(hits(by[a, mode], k), hits(by[b, mode], k))))
        for s in strategies:
            for i, a in enumerate(modes):
                for b in modes[i + 1:]:
                    if (s, a) in by and (s, b) in by:
                        m_tests.append(PairTest("mode", s, a, b, k, sign_test(hits(by[s, a], k), hits(by[s, b], k))))
    return s_tests, m_tests


def nearest_distances(index: StrategyIndex, queries: Sequence[EvalQuery], ood: Sequence[OODQuery],
                      qvecs: dict[str, np.ndarray]) -> dict[str, list[float]]:
    """Cosine distance of the nearest chunk (dense top 1) per query group.

    Keys: ``in_domain`` (nearest chunk), ``in_domain_correct`` (nearest chunk
    holding the needle; absent when the needle was destroyed), ``near``, ``far``.
    """
    out: dict[str, list[float]] = {"in_domain": [], "in_domain_correct": [], "near": [], "far": []}
    holders: dict[str, list[int]] = {}
    for q in queries:
        if q.needle not in holders:
            holders[q.needle] = [i for i, c in enumerate(index.chunks) if q.needle in c.content]
        v = qvecs[q.text]
        out["in_domain"].append(float(1.0 - (index.vectors @ v).max()) if len(index.vectors) else float("nan"))
        if holders[q.needle]:
            out["in_domain_correct"].append(float(1.0 - (index.vectors[holders[q.needle]] @ v).max()))
    for o in ood:
        v = qvecs[o.query]
        out[o.kind].append(float(1.0 - (index.vectors @ v).max()) if len(index.vectors) else float("nan"))
    return out


def git_commit(root: Path | None = None) -> str | None:
    """Short commit of the repository holding ``rag/`` (``+dirty`` appended when tracked files changed), or ``None``."""
    import subprocess

    root = root or Path(__file__).resolve().parent.parent
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if sha.returncode:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "rag"], cwd=root,
                               capture_output=True, text=True, timeout=10)
        return sha.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def pick_sweep_config(strategies: Sequence[str], modes: Sequence[str]) -> tuple[str, str]:
    """The product's configuration when evaluated (E, hybrid), else the first strategy / mode given."""
    return ("E" if "E" in strategies else strategies[0]), ("hybrid" if "hybrid" in modes else modes[0])


def run_evaluation(documents: Sequence, questions: Sequence[Question], ood: Sequence[OODQuery], *,
                   strategies: Sequence[str] = ("A", "B", "C", "D", "E", "F"),
                   modes: Sequence[str] = ("dense", "bm25", "hybrid"),
                   embedder=None, cache: EmbeddingCache | None = None, settings=None,
                   thresholds: Sequence[float] = SWEEP_THRESHOLDS, reranker=None,
                   failed_documents: dict[str, str] | None = None, learned_gate: bool = True,
                   progress: Progress | None = None) -> EvalResult:
    """Evaluate retrieval over ``documents`` (extracted ``rag.ingest.extract.Document`` records).

    Builds throwaway indexes per strategy (embeddings cached by text), runs
    both phrasings of every question and every OOD query through
    ``rag.index.fusion.retrieve`` (top 20) in each mode, and computes the metrics,
    sign tests and the refusal sweep (strategy E, hybrid, through the real
    gate; with ``learned_gate`` also the cross-validated sweep of
    ``rag.answer.learned_gate``, kept in ``result.gate_run``). Mode ``rerank`` runs only with a ``reranker`` (else it is listed in
    ``skipped_modes``). Raises ``ValueError`` for an unknown strategy or mode,
    :class:`EvalInputError` when no document or question is given.
    """

    progress = progress or _no_progress
    bad = [s for s in strategies if s not in STRATEGIES]
    if bad:
        raise ValueError(f"unknown strategy {bad[0]!r}; allowed: {', '.join(STRATEGIES)}")
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise ValueError(f"unknown mode {bad[0]!r}; allowed: {', '.join(MODES)}")
    if not documents:
        raise EvalInputError("no documents to evaluate")
    if not questions:
        raise EvalInputError("no questions to evaluate")
    if embedder is None:

        embedder = get_embedder()
    own_cache = cache is None
    cache = cache or EmbeddingCache()
    skipped = {}
    run_modes = list(modes)
    if "rerank" in run_modes and reranker is None:
        run_modes.remove("rerank")
        skipped["rerank"] = "no cross-encoder in models/ (see rag.models.find_cross_encoder)"
    queries = expand_queries(questions)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    qtexts = list(dict.fromkeys([q.text for q in queries] + [o.query for o in ood]))
    qvecs = dict(zip(qtexts, cache.encode(qtexts, embedder)))
    timings["embed_queries"] = time.perf_counter() - t0

    indexes: dict[str, StrategyIndex] = {}
    runs: dict[tuple[str, str], dict[str, list]] = {}
    metrics: list[ModeMetrics] = []
    stats: dict[str, ChunkStats] = {}
    rrf_k = settings.rrf_k if settings is not None else 60
    window = settings.encoder_window_tokens if settings is not None else 256
    n_s = len(strategies)
    for si, s in enumerate(strategies):
        base = si / n_s
        progress(base, f"strategy {s}: chunking and embedding")
        t = time.perf_counter()
        idx = build_strategy_index(documents, s, embedder, cache, settings=settings,
                                   progress=lambda d, n, s=s, base=base: progress(base + 0.8 * d / max(1, n) / n_s,
                                                                                  f"strategy {s}: embedded {d}/{n} new chunks"))
        timings[f"index_{s}"] = time.perf_counter() - t
        indexes[s] = idx
        stats[s] = chunk_stats(idx, questions, window)
        texts = {i: c.text for i, c in enumerate(idx.chunks)}
        for m in run_modes:
            progress(base + 0.8 / n_s, f"strategy {s}: retrieving ({m})")
            t = time.perf_counter()
            leg = "hybrid" if m == "rerank" else m
            run = {}
            for key, text in [(q.key, q.text) for q in queries] + [(o.id, o.query) for o in ood]:
                run[key] = retrieve(text, qvecs[text], idx.dense, idx.bm25, k=DEPTH, mode=leg, rrf_k=rrf_k,
                                    reranker=reranker if m == "rerank" else None, texts=texts if m == "rerank" else None)
            timings[f"retrieve_{s}_{m}"] = time.perf_counter() - t
            runs[s, m] = run
            metrics.append(metrics_for(s, m, queries, run, idx))
    progress(0.97, "sign tests and refusal sweep")
    s_tests, m_tests = pair_tests(metrics, queries)
    sweeps, distances = [], {}
    if run_modes:
        ss, sm = pick_sweep_config(list(strategies), run_modes)
        sweeps.append(distance_sweep(indexes[ss], runs[ss, sm], queries, ood, ss, sm, thresholds,
                                     settings.max_sources if settings is not None else 4))
        distances = nearest_distances(indexes[ss], queries, ood, qvecs)
    timings["total"] = time.perf_counter() - t0
    cache_info = {"path": str(cache.path), "hits": cache.hits, "misses": cache.misses}
    if own_cache:
        cache.close()
    result = EvalResult(
        created=time.strftime("%Y-%m-%d %H:%M %Z"), commit=git_commit(),
        documents=[getattr(d, "name", str(d)) for d in documents], failed_documents=dict(failed_documents or {}),
        n_questions=len(questions), n_queries=len(queries),
        n_near=sum(o.kind == "near" for o in ood), n_far=sum(o.kind == "far" for o in ood),
        strategies=list(strategies), modes=run_modes, skipped_modes=skipped, chunk_stats=stats, metrics=metrics,
        strategy_tests=s_tests, mode_tests=m_tests, sweeps=sweeps, distances=distances, timings_s=timings,
        cache=cache_info, runs=runs, indexes=indexes, queries=queries, ood=list(ood),
    )
    if learned_gate and sweeps and result.n_near + result.n_far >= 2 and sweeps[0].n_answerable >= 2:
        t = time.perf_counter()
        result.gate_run = learned_gate_sweep(result, sweeps[0].strategy, sweeps[0].mode,
                                             max_sources=settings.max_sources if settings is not None else 4)
        result.sweeps.append(result.gate_run.sweep)
        result.sweeps.append(combined_gate_sweep(result, thresholds=thresholds,
                                                 max_sources=settings.max_sources if settings is not None else 4))
        timings["learned_gate_cv"] = time.perf_counter() - t
        timings["total"] = time.perf_counter() - t0
    progress(1.0, "done")
    return result


def distance_sweep(index: StrategyIndex, run: dict[str, list], queries: Sequence[EvalQuery], ood: Sequence[OODQuery],
                   strategy: str, mode: str, thresholds: Sequence[float] = SWEEP_THRESHOLDS, max_sources: int = 4) -> Sweep:
    """The refusal sweep of the distance gate over one strategy x mode's retrieved hits (see :func:`sweep_rows`)."""
    gate, name = get_gate()
    ind = [(run[q.key], q.key, q.needle) for q in queries]
    oo = [(run[o.id], o.kind) for o in ood]
    rows = sweep_rows(ind, oo, thresholds, gate, index.content, max_sources)
    n_ans = sum(any(q.needle in index.content(h.chunk_id) for h in run[q.key][:max_sources]) for q in queries)
    rec, rule = recommend_threshold(rows, n_ans, len(ood)) if ood else (None, "no out-of-domain queries given")
    return Sweep(strategy, mode, name, sum(o.kind == "near" for o in ood), sum(o.kind == "far" for o in ood),
                 n_ans, len(queries), rows, rec, rule)


# --------------------------------------------------------------------------- report and plots


def _f(x: float) -> str:
    return f"{x:.3f}"


def _ci(c: RecallCell) -> str:
    return f"{c.value:.3f} [{c.low:.3f}, {c.high:.3f}]"


def headline(result: EvalResult) -> dict[str, str]:
    """The four answers the design asks of a run, each one sentence (used by the report and the app)."""
    out: dict[str, str] = {}
    mode = "hybrid" if "hybrid" in result.modes else (result.modes[0] if result.modes else None)
    if mode and {"A", "E"} <= set(result.strategies):
        t = next(p for p in result.strategy_tests if p.within == mode and p.k == 20 and {p.a, p.b} == {"A", "E"})
        w, l = (t.test.losses, t.test.wins) if t.a == "A" else (t.test.wins, t.test.losses)
        a, e = result.metric("A", mode).recall[20], result.metric("E", mode).recall[20]
        verdict = "yes" if w > l and t.test.p < 0.05 else ("not significantly" if w > l else "no")
        out["E vs A"] = (f"Does E beat A at R@20 ({mode})? {verdict}: {e.value:.3f} vs {a.value:.3f} "
                         f"({e.value - a.value:+.3f}), sign test +{w} / -{l}, p = {format_p(t.test.p)}.")
    for s in ("A", "B"):
        if s in result.chunk_stats:
            d = result.chunk_stats[s].destroyed
            out[f"destroyed {s}"] = (f"Strategy {s} destroys {len(d)} of {result.n_questions} needles "
                                     f"({2 * len(d)} of {result.n_queries} queries can never be answered)"
                                     + (f": {', '.join(d)}." if d else "."))
    if {"dense", "hybrid"} <= set(result.modes):
        parts = []
        for s in result.strategies:
            hv = {}
            for k in (1, 20):
                t = next(p for p in result.mode_tests if p.within == s and p.k == k and {p.a, p.b} == {"dense", "hybrid"})
                w, l = (t.test.wins, t.test.losses) if t.a == "hybrid" else (t.test.losses, t.test.wins)
                hv[k] = f"+{w}/-{l}, p = {format_p(t.test.p)}"
            d, h = result.metric(s, "dense"), result.metric(s, "hybrid")
            parts.append(f"{s}: R@1 {d.recall[1].value:.3f} -> {h.recall[1].value:.3f} ({hv[1]}), "
                         f"R@20 {d.recall[20].value:.3f} -> {h.recall[20].value:.3f} ({hv[20]}), MRR {d.mrr:.3f} -> {h.mrr:.3f}")
        out["hybrid vs dense"] = "Hybrid over dense: " + "; ".join(parts) + "."
    for sw in result.sweeps:
        r = sw.row(sw.recommended) if sw.recommended is not None else None
        if r:
            out[f"threshold {sw.knob}"] = (
                f"Recommended {sw.knob} {sw.recommended:g} ({sw.strategy}, {sw.mode}, {sw.gate}): "
                f"{r.bluffs} of {sw.n_near + sw.n_far} out-of-domain queries bluff ({r.bluffs_near} of {sw.n_near} near, "
                f"{r.bluffs_far} of {sw.n_far} far) and {r.lost} of {sw.n_answerable} answerable queries are lost "
                f"({r.refused} of {sw.n_in_domain} in-domain queries refused outright). Rule: {sw.rule}.")
    return out


def sweep_table(sw: Sweep) -> list[str]:
    """Markdown rows of one sweep (threshold, bluffs near / far / total, lost, refused)."""
    lines = [f"| {sw.knob} | bluffs near (of {sw.n_near}) | bluffs far (of {sw.n_far}) | bluffs total | "
             f"answerable lost (of {sw.n_answerable}) | in-domain refused (of {sw.n_in_domain}) |",
             "|---:|---:|---:|---:|---:|---:|"]
    for r in sw.rows:
        mark = " **<- recommended**" if sw.recommended is not None and abs(r.threshold - sw.recommended) < 1e-9 else ""
        lines.append(f"| {r.threshold:g}{mark} | {r.bluffs_near} | {r.bluffs_far} | {r.bluffs} | {r.lost} | {r.refused} |")
    return lines


def report_markdown(result: EvalResult, plots: dict[str, str] | None = None, title: str = "Retrieval evaluation") -> str:
    """The Markdown report of a run: headline answers, tables, sign tests, the sweep, links to ``plots``.

    ``plots`` maps a plot name (``recall``, ``distances``, ``sweep``) to a path relative to the report.
    """
    plots = plots or {}
    L = [f"# {title}", "",
         f"Run {result.created}, commit `{result.commit or 'unknown'}`. {len(result.documents)} documents, "
         f"{result.n_questions} questions x 2 phrasings = {result.n_queries} in-domain queries, "
         f"{result.n_near + result.n_far} out-of-domain ({result.n_near} near-topic, {result.n_far} unrelated). "
         f"Correct = a returned chunk's `content` holds the whole needle. Intervals are 95 % Wilson; comparisons are "
         f"paired exact two-sided sign tests on discordant queries (+wins / -losses of the first named).", ""]
    if result.failed_documents:
        L += ["Documents that failed extraction (left out): " + "; ".join(f"{k}: {v}" for k, v in result.failed_documents.items()), ""]
    for m, why in result.skipped_modes.items():
        L += [f"Mode `{m}` skipped: {why}.", ""]
    L += ["## Answers", ""] + [f"- {v}" for v in headline(result).values()] + [""]
    L += ["## Chunking", "", "| strategy | chunks | over 256 word-pieces | header share of embedded word-pieces | mean content chars | needles destroyed |",
          "|---|---:|---:|---:|---:|---|"]
    for s in result.strategies:
        c = result.chunk_stats[s]
        L.append(f"| {s} | {c.chunks} | {c.over_window} | {c.header_share:.1%} | {c.mean_content_chars:.0f} | "
                 f"{len(c.destroyed)}{' (' + ', '.join(c.destroyed) + ')' if c.destroyed else ''} |")
    L += [""]
    for mode in result.modes:
        L += [f"## Recall, mode `{mode}`", "",
              f"| strategy | R@1 | R@4 | R@8 | R@20 | MRR | R@<={CONTEXT_BUDGET_CHARS}ch | ctx@4 chars |", "|---|---|---|---|---|---:|---:|---:|"]
        for s in result.strategies:
            m = result.metric(s, mode)
            L.append(f"| {s} | " + " | ".join(_ci(m.recall[k]) for k in RECALL_KS)
                     + f" | {m.mrr:.3f} | {m.budget_recall:.3f} | {m.ctx4_chars:.0f} |")
        L += [""]
    if "recall" in plots:
        L += [f"![Recall@k with 95 % Wilson intervals]({plots['recall']})", ""]
    ref = "E" if "E" in result.strategies else result.strategies[0]
    L += ["## Strategies compared (paired sign tests)", "",
          f"Each row: {ref} against another strategy on the same queries (+{ref} wins / -{ref} losses, p).", "",
          "| mode | vs | R@1 | R@4 | R@20 |", "|---|---|---|---|---|"]
    for mode in result.modes:
        for s in result.strategies:
            if s == ref:
                continue
            cells = []
            for k in (1, 4, 20):
                t = next(p for p in result.strategy_tests if p.within == mode and p.k == k and {p.a, p.b} == {ref, s})
                w, l = (t.test.wins, t.test.losses) if t.a == ref else (t.test.losses, t.test.wins)
                cells.append(f"+{w} / -{l}, p = {format_p(t.test.p)}")
            L.append(f"| {mode} | {s} | " + " | ".join(cells) + " |")
    L += ["", "## Modes compared (paired sign tests)", "", "| strategy | a vs b | R@1 | R@4 | R@20 |", "|---|---|---|---|---|"]
    for s in result.strategies:
        pairs = list(dict.fromkeys((p.a, p.b) for p in result.mode_tests if p.within == s))
        for a, b in pairs:
            cells = [str(next(p.test for p in result.mode_tests if p.within == s and p.k == k and (p.a, p.b) == (a, b)))
                     for k in (1, 4, 20)]
            L.append(f"| {s} | {a} vs {b} | " + " | ".join(cells) + " |")
    L += [""]
    for sw in result.sweeps:
        L += [f"## Refusal sweep: {sw.knob} ({sw.strategy}, {sw.mode}, gate `{sw.gate}`)", "",
              "Bluff = an out-of-domain query that still gets at least one source. Answerable = the needle was in the "
              "ungated top 4; lost = its gated sources no longer hold the needle (refusals included).", ""]
        L += sweep_table(sw) + [""]
        if sw.recommended is not None:
            r = sw.row(sw.recommended)
            L += [f"Recommended: **{sw.recommended:g}**, costing {r.bluffs} bluffs ({r.bluffs_near} near, {r.bluffs_far} far) "
                  f"and {r.lost} lost answers. Rule: {sw.rule}.", ""]
    if result.distances:
        L += ["## Nearest cosine distances", "", "| group | n | min | median | max |", "|---|---:|---:|---:|---:|"]
        for g, v in result.distances.items():
            if v:
                L.append(f"| {g} | {len(v)} | {min(v):.3f} | {float(np.median(v)):.3f} | {max(v):.3f} |")
        L += [""]
    for name, alt in (("sweep", "Refusal sweep"), ("distances", "Nearest-distance distributions")):
        if name in plots:
            L += [f"![{alt}]({plots[name]})", ""]
    t = result.timings_s
    L += ["## Cost", "", f"Total {t.get('total', 0):.1f} s; embedding cache `{result.cache.get('path')}`: "
          f"{result.cache.get('hits')} cached, {result.cache.get('misses')} newly embedded texts. "
          + ", ".join(f"index {s} {t[f'index_{s}']:.1f} s" for s in result.strategies if f"index_{s}" in t) + ".", ""]
    if result.notes:
        L += ["## Notes", ""] + [f"- {n}" for n in result.notes] + [""]
    return "\n".join(L)


def plot_recall(result: EvalResult, path: Path) -> Path:
    """PNG: Recall@k (k = 1, 4, 8, 20) per strategy with 95 % Wilson intervals, one panel per mode."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modes = result.modes or ["dense"]
    fig, axes = plt.subplots(1, len(modes), figsize=(4.2 * len(modes), 3.6), sharey=True, squeeze=False)
    n = len(result.strategies)
    for ax, mode in zip(axes[0], modes):
        for i, s in enumerate(result.strategies):
            m = result.metric(s, mode)
            if m is None:
                continue
            x = np.arange(len(RECALL_KS)) + (i - (n - 1) / 2) * 0.11
            y = np.array([m.recall[k].value for k in RECALL_KS])
            err = np.array([[m.recall[k].value - m.recall[k].low for k in RECALL_KS],
                            [m.recall[k].high - m.recall[k].value for k in RECALL_KS]])
            ax.errorbar(x, y, yerr=err, fmt="o-", ms=3, lw=1, capsize=2, label=s)
        ax.set_xticks(range(len(RECALL_KS)), [f"R@{k}" for k in RECALL_KS])
        ax.set_title(mode)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"recall over {result.n_queries} queries")
    axes[0][-1].legend(title="strategy", fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_distances(result: EvalResult, path: Path) -> Path:
    """PNG: nearest cosine distance per query, in-domain (nearest / nearest correct) vs near and far out-of-domain."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [(g, v) for g, v in result.distances.items() if v]
    fig, ax = plt.subplots(figsize=(7, 3.4))
    rng = np.random.default_rng(0)
    for i, (_g, v) in enumerate(groups):
        ax.scatter(v, i + rng.uniform(-0.15, 0.15, len(v)), s=14, alpha=0.7)
        ax.plot([np.median(v)] * 2, [i - 0.3, i + 0.3], color="k", lw=1.5)
    for sw in result.sweeps[:1]:
        if sw.recommended is not None:
            ax.axvline(sw.recommended, color="tab:red", ls="--", lw=1, label=f"recommended {sw.recommended:g}")
            ax.legend(fontsize=8, loc="lower right")
    ax.set_yticks(range(len(groups)), [f"{g} ({len(v)})" for g, v in groups])
    ax.set_xlabel("cosine distance of the nearest chunk (bar = median)")
    ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_sweeps(result: EvalResult, path: Path) -> Path:
    """PNG: per sweep, bluffs (near, far) and answerable queries lost against the gate's knob."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweeps = result.sweeps or []
    fig, axes = plt.subplots(1, max(1, len(sweeps)), figsize=(5.2 * max(1, len(sweeps)), 3.6), squeeze=False)
    for ax, sw in zip(axes[0], sweeps):
        t = [r.threshold for r in sw.rows]
        ax.plot(t, [r.bluffs_near for r in sw.rows], "o-", ms=3, label=f"bluffs near (of {sw.n_near})")
        ax.plot(t, [r.bluffs_far for r in sw.rows], "s-", ms=3, label=f"bluffs far (of {sw.n_far})")
        ax.plot(t, [r.lost for r in sw.rows], "^-", ms=3, label=f"answerable lost (of {sw.n_answerable})")
        if sw.recommended is not None:
            ax.axvline(sw.recommended, color="tab:red", ls="--", lw=1)
        ax.set_xlabel(sw.knob)
        ax.set_ylabel("queries")
        ax.set_title(f"{sw.gate.split(' ')[0]} ({sw.strategy}, {sw.mode})", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_plots(result: EvalResult, out_dir: Path) -> dict[str, Path]:
    """Write ``recall.png``, ``distances.png`` and ``sweep.png`` into ``out_dir`` (created); returns name -> path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = {"recall": plot_recall(result, out_dir / "recall.png")}
    if result.distances:
        out["distances"] = plot_distances(result, out_dir / "distances.png")
    if result.sweeps:
        out["sweep"] = plot_sweeps(result, out_dir / "sweep.png")
    return out


def write_report(result: EvalResult, out_dir: Path, *, report_path: Path | None = None) -> Path:
    """Write the plots, ``report.json`` and the Markdown report into ``out_dir``; returns the Markdown path.

    The Markdown goes to ``out_dir/report.md`` or, if given, to ``report_path``
    (plots linked relative to its folder, e.g. ``docs/evaluation.md`` with its
    plots in ``docs/evaluation/``).
    """
    out_dir = Path(out_dir)
    plots = write_plots(result, out_dir)
    md = Path(report_path) if report_path else out_dir / "report.md"
    md.parent.mkdir(parents=True, exist_ok=True)
    rel = {k: Path(os.path.relpath(v, md.parent)).as_posix() for k, v in plots.items()}
    md.write_text(report_markdown(result, rel), encoding="utf-8")
    (out_dir / "report.json").write_text(json.dumps(result.to_dict(), indent=1), encoding="utf-8")
    return md


# --------------------------------------------------------------------------- the learned gate (issue 8)

#: Probability cuts swept for the learned gate (``min_probability``; higher refuses more).
CUT_THRESHOLDS = tuple(round(0.05 + 0.025 * i, 3) for i in range(37))
#: Regularisation of the learned gate's logistic regression (chosen on dev among 0.03 / 0.1 / 0.3: all alike).
GATE_C = 0.1


@dataclass
class LearnedGateRun:
    """Cross-validated scores of the learned gate on one strategy x mode (see :func:`learned_gate_sweep`).

    ``keys``/``labels``/``groups``/``probability`` per query (in-domain keys
    ``q01/course``, OOD ids); ``label`` 1 = answerable in-domain, 0 = OOD,
    -1 = in-domain but not answerable (not trained on, still scored);
    ``model`` fitted on every labelled query, ``default_cut`` = the recommended cut.
    """

    keys: list[str]
    labels: list[int]
    groups: list[str]
    probability: list[float]
    features: list[dict]
    model: object
    sweep: Sweep


def learned_gate_sweep(result: EvalResult, strategy: str | None = None, mode: str | None = None, *,
                       cuts: Sequence[float] = CUT_THRESHOLDS, max_sources: int = 4, C: float = GATE_C) -> LearnedGateRun:
    """Sweep the learned gate (``rag.answer.learned_gate``) with leave-one-question-out probabilities.

    Every query is scored by a logistic regression fitted without its own
    question (both phrasings held out together; each OOD query alone), so the
    figures are not fitted to themselves. A query passes when its probability
    is ``>= cut``; its sources are then its first ``max_sources`` hits.
    Returns the per-query scores, the model fitted on everything (with the
    recommended cut as ``default_cut``) and the sweep.
    """

    ss, sm = pick_sweep_config(result.strategies, result.modes)
    strategy, mode = strategy or ss, mode or sm
    idx, run = result.indexes[strategy], result.runs[strategy, mode]
    stats = gm.TermStats.from_texts([c.text for c in idx.chunks])
    text = lambda cid: idx.chunks[int(cid)].text  # noqa: E731
    keys, labels, groups, feats, texts = [], [], [], [], []
    for q in result.queries:
        hits = run[q.key]
        ok = any(q.needle in idx.content(h.chunk_id) for h in hits[:max_sources])
        keys.append(q.key), labels.append(1 if ok else -1), groups.append(q.qid), texts.append(q.text)
    for o in result.ood:
        keys.append(o.id), labels.append(0), groups.append(o.id), texts.append(o.query)
    for k, t in zip(keys, texts):
        feats.append(gm.gate_features(t, run[k], text, stats, top=max_sources))
    X = gm.feature_matrix(feats)
    y = np.array(labels)
    train = y >= 0
    prob = np.zeros(len(y))
    g = np.array(groups)
    for grp in dict.fromkeys(groups):
        test = g == grp
        fit = train & ~test
        if len(set(y[fit].tolist())) < 2:  # too few labelled queries left to fit: undecided
            prob[test] = 0.5
            continue
        prob[test] = gm.fit_gate_model(X[fit], y[fit], C=C).probability(X[test])
    kinds = {o.id: o.kind for o in result.ood}
    rows = []
    n_ans = int((y == 1).sum())
    for c in cuts:
        passed = prob >= c
        near = sum(1 for k, p in zip(keys, passed) if p and kinds.get(k) == "near")
        far = sum(1 for k, p in zip(keys, passed) if p and kinds.get(k) == "far")
        lost = int(((y == 1) & ~passed).sum())
        refused = int(((y != 0) & ~passed).sum())
        rows.append(SweepRow(float(c), near, far, lost, refused))
    rec, rule = recommend_threshold(rows, n_ans, len(result.ood), answer_more=-1)
    model = gm.fit_gate_model(X[train], y[train], C=C)
    model.default_cut = rec if rec is not None else 0.5
    model.info = {"fitted_on": f"{len(result.documents)} documents, {int(train.sum())} labelled queries "
                                f"({n_ans} answerable, {len(result.ood)} out-of-domain)",
                  "strategy": strategy, "mode": mode, "C": C, "commit": result.commit, "created": result.created,
                  "cv": "leave-one-question-out (both phrasings together; each out-of-domain query alone)",
                  "cv_at_default_cut": asdict(next(r for r in rows if r.threshold == model.default_cut)) if rec is not None else None}
    sweep = Sweep(strategy, mode, "rag.answer.learned_gate (logistic regression, leave-one-question-out)",
                  sum(o.kind == "near" for o in result.ood), sum(o.kind == "far" for o in result.ood), n_ans,
                  len(result.queries), rows, rec, rule, knob="probability cut")
    return LearnedGateRun(keys, labels, groups, prob.tolist(), feats, model, sweep)


def combined_gate_sweep(result: EvalResult, *, thresholds: Sequence[float] = SWEEP_THRESHOLDS,
                        max_sources: int = 4, cut: float | None = None) -> Sweep:
    """Sweep the DEFAULT gate (:func:`rag.answer.learned_gate.apply_learned_gate`) over the distance threshold.

    A query keeps the distance gate's sources only when its answerability
    score is at least ``cut`` (default: the recommended cut of
    ``result.gate_run``). Scores are the leave-one-question-out probabilities
    of :func:`learned_gate_sweep`, so these figures are cross-validated too.
    Requires ``result.gate_run``; raises ``ValueError`` without it.
    """
    run_ = result.gate_run
    if run_ is None:
        raise ValueError("combined_gate_sweep needs the learned gate's cross-validated run (learned_gate=True)")
    cut = run_.model.default_cut if cut is None else cut
    strategy, mode = run_.sweep.strategy, run_.sweep.mode
    idx, run = result.indexes[strategy], result.runs[strategy, mode]
    prob = dict(zip(run_.keys, run_.probability))
    by_list = {id(run[k]): prob[k] for k in run_.keys}
    dist_gate, _ = get_gate()

    def gate(hits, threshold, ms=max_sources):
        return dist_gate(hits, threshold, ms) if by_list.get(id(hits), 1.0) >= cut else []

    ind = [(run[q.key], q.key, q.needle) for q in result.queries]
    oo = [(run[o.id], o.kind) for o in result.ood]
    rows = sweep_rows(ind, oo, thresholds, gate, idx.content, max_sources)
    n_ans = run_.sweep.n_answerable
    rec, rule = recommend_threshold(rows, n_ans, len(result.ood))
    return Sweep(strategy, mode, f"rag.answer.learned_gate.apply_learned_gate (distance AND cross-validated score >= {cut:g})",
                 run_.sweep.n_near, run_.sweep.n_far, n_ans, len(result.queries), rows, rec, rule,
                 knob="cosine distance threshold, default gate")
