"""The evaluation run: every strategy x mode retrieved, measured, compared, and the refusal gate swept.

:func:`run_evaluation` is the orchestrator the CLI (``rag/cli/eval.py``) and
the app page (``app_pages/3_Evaluation.py``) call; the smaller functions compute
one part of its :class:`rag.evaluation.records.EvalResult` each.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from rag.evaluation.cache import EmbeddingCache
from rag.evaluation.data import EvalInputError, EvalQuery, OODQuery, Question, by_wording, expand_queries
from rag.evaluation.indexes import StrategyIndex, build_strategy_index
from rag.evaluation.metrics import (
    DEPTH,
    destroyed_needles,
    first_hit_rank,
    hit_within_chars,
    hits_at,
    holds_needle,
    sign_test,
    summarize_ranks,
)
from rag.evaluation.records import ChunkStats, EvalResult, ModeMetrics, PairTest
from rag.evaluation.sweeps import (
    SWEEP_THRESHOLDS,
    combined_gate_sweep,
    distance_sweep,
    learned_gate_sweep,
    pick_sweep_config,
)
from rag.index.embed import get_embedder
from rag.index.fusion import retrieve
from rag.ingest.chunk import STRATEGIES
from rag.types import Document

#: Retrieval modes the evaluation knows.
MODES = ("dense", "bm25", "hybrid", "rerank")
#: ``progress(fraction in [0, 1], message)``; the CLI draws a tqdm bar, the app an ``st.progress``.
Progress = Callable[[float, str], None]


def _no_progress(fraction: float, message: str) -> None:
    return None


def metrics_for(strategy: str, mode: str, queries: Sequence[EvalQuery], hits_by_key: dict[str, list],
                index: StrategyIndex) -> ModeMetrics:
    """Recall@k (+ Wilson), MRR, equal-budget recall and ctx@4 of one strategy x mode; recall and MRR per wording too."""
    ranks: dict[str, int | None] = {}
    budget = 0
    ctx4 = 0
    for q in queries:
        contents = [index.content(h.chunk_id) for h in hits_by_key[q.key][:DEPTH]]
        ranks[q.key] = first_hit_rank(contents, q.needle)
        budget += hit_within_chars(contents, q.needle)
        ctx4 += sum(len(c) for c in contents[:4])
    n = len(queries)
    every = summarize_ranks(list(ranks.values()))
    split = {str(w): summarize_ranks([ranks[q.key] for q in qs], str(w)) for w, qs in by_wording(queries).items()}
    return ModeMetrics(strategy, mode, n, every.recall, every.mrr, budget, budget / n if n else 0.0,
                       ctx4 / n if n else 0.0, ranks, split)


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
    """All paired sign tests: strategy pairs within each mode, and mode pairs within each strategy.

    Each :class:`PairTest` is over all ``queries`` and, in ``by_wording``, over each wording's queries.
    """
    groups = {"all": [q.key for q in queries]} | {str(w): [q.key for q in qs] for w, qs in by_wording(queries).items()}
    by = {(m.strategy, m.mode): m for m in metrics}
    strategies = list(dict.fromkeys(m.strategy for m in metrics))
    modes = list(dict.fromkeys(m.mode for m in metrics))

    def test(kind: str, within: str, a: str, b: str, ma: ModeMetrics, mb: ModeMetrics, k: int) -> PairTest:
        t = {g: sign_test(hits_at([ma.ranks[key] for key in keys], k), hits_at([mb.ranks[key] for key in keys], k))
             for g, keys in groups.items()}
        return PairTest(kind, within, a, b, k, t.pop("all"), t)

    s_tests: list[PairTest] = []
    m_tests: list[PairTest] = []
    for k in ks:
        s_tests += [test("strategy", mode, a, b, by[a, mode], by[b, mode], k)
                    for mode in modes for a, b in _pairs(strategies) if (a, mode) in by and (b, mode) in by]
        m_tests += [test("mode", s, a, b, by[s, a], by[s, b], k)
                    for s in strategies for a, b in _pairs(modes) if (s, a) in by and (s, b) in by]
    return s_tests, m_tests


def _pairs(names: Sequence[str]) -> list[tuple[str, str]]:
    """Each pair of ``names`` once, in their order: (a, b), (a, c), (b, c)."""
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]


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
            holders[q.needle] = [i for i, c in enumerate(index.chunks) if holds_needle(c.content, q.needle)]
        v = qvecs[q.text]
        out["in_domain"].append(float(1.0 - (index.vectors @ v).max()) if len(index.vectors) else float("nan"))
        if holders[q.needle]:
            out["in_domain_correct"].append(float(1.0 - (index.vectors[holders[q.needle]] @ v).max()))
    for o in ood:
        v = qvecs[o.query]
        out[o.kind].append(float(1.0 - (index.vectors @ v).max()) if len(index.vectors) else float("nan"))
    return out


def _check_inputs(documents: Sequence[Document], questions: Sequence[Question], strategies: Sequence[str],
                  modes: Sequence[str]) -> None:
    """``ValueError`` for an unknown strategy or mode, :class:`EvalInputError` for no document or question."""
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


def _modes_to_run(modes: Sequence[str], reranker) -> tuple[list[str], dict[str, str]]:
    """The modes that can run and why the others cannot: ``rerank`` needs a ``reranker``."""
    skipped = {}
    run_modes = list(modes)
    if "rerank" in run_modes and reranker is None:
        run_modes.remove("rerank")
        skipped["rerank"] = "no cross-encoder in models/ (see rag.models.find_cross_encoder)"
    return run_modes, skipped


def _retrieve_all(idx: StrategyIndex, mode: str, queries: Sequence[EvalQuery], ood: Sequence[OODQuery],
                  qvecs: dict[str, np.ndarray], texts: dict[int, str], rrf_k: int, reranker) -> dict[str, list]:
    """One strategy's ranking in ``mode`` for every query and OOD query (top :data:`DEPTH`), by key."""
    leg = "hybrid" if mode == "rerank" else mode
    run = {}
    for key, text in [(q.key, q.text) for q in queries] + [(o.id, o.query) for o in ood]:
        run[key] = retrieve(text, qvecs[text], idx.dense, idx.bm25, k=DEPTH, mode=leg, rrf_k=rrf_k,
                            reranker=reranker if mode == "rerank" else None, texts=texts if mode == "rerank" else None)
    return run


def git_commit(root: Path | None = None) -> str | None:
    """Short commit of the repository holding ``rag/`` (``+dirty`` appended when tracked files changed), or ``None``."""
    root = root or Path(__file__).resolve().parents[2]
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if sha.returncode:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "rag"], cwd=root,
                               capture_output=True, text=True, timeout=10)
        return sha.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def run_evaluation(documents: Sequence[Document], questions: Sequence[Question], ood: Sequence[OODQuery], *,
                   strategies: Sequence[str] = ("A", "B", "C", "D", "E", "F"),
                   modes: Sequence[str] = ("dense", "bm25", "hybrid"),
                   embedder=None, cache: EmbeddingCache | None = None, settings=None,
                   thresholds: Sequence[float] = SWEEP_THRESHOLDS, reranker=None,
                   failed_documents: dict[str, str] | None = None, learned_gate: bool = True,
                   progress: Progress | None = None) -> EvalResult:
    """Evaluate retrieval over ``documents`` (extracted ``rag.ingest.extract.Document`` records).

    Builds throwaway indexes per strategy (embeddings cached by text), runs
    both wordings of every question and every OOD query through
    ``rag.index.fusion.retrieve`` (top 20) in each mode, and computes the metrics,
    sign tests and the refusal sweep (strategy E, hybrid, through the real
    gate; with ``learned_gate`` also the cross-validated sweep of
    ``rag.answer.gate.learned_gate``, kept in ``result.gate_run``). Mode ``rerank`` runs only with a ``reranker`` (else it is listed in
    ``skipped_modes``). Recall, MRR and the sign tests are also split by
    wording (issue 19). Raises ``ValueError`` for an unknown strategy or mode,
    :class:`EvalInputError` when no document or question is given.
    """
    progress = progress or _no_progress
    _check_inputs(documents, questions, strategies, modes)
    if embedder is None:
        embedder = get_embedder()
    own_cache = cache is None
    cache = cache or EmbeddingCache()
    run_modes, skipped = _modes_to_run(modes, reranker)
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
            runs[s, m] = run = _retrieve_all(idx, m, queries, ood, qvecs, texts, rrf_k, reranker)
            timings[f"retrieve_{s}_{m}"] = time.perf_counter() - t
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
        documents=[d.name for d in documents], failed_documents=dict(failed_documents or {}),
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
