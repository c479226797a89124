"""The Markdown report of an evaluation run (with ``report.json`` and the plots beside it).

:func:`headline` gives the design's four answers in one sentence each (the app
shows them too); :func:`report_markdown` the whole report; :func:`write_report`
writes report, JSON and plots.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from rag.evaluation.metrics import CONTEXT_BUDGET_CHARS, RECALL_KS, RecallCell, format_p
from rag.evaluation.plots import write_plots
from rag.evaluation.records import EvalResult, PairTest, Sweep, SweepRow
from rag.evaluation.sweeps import pick_sweep_config
from rag.types import RetrievalMode

#: How the report names the wordings (issue 19).
WORDING_NAMES = {"doc": "documents' wording", "user": "users' wording"}


def _f(x: float) -> str:
    return f"{x:.3f}"


def _ci(c: RecallCell) -> str:
    return f"{c.value:.3f} [{c.low:.3f}, {c.high:.3f}]"


def headline(result: EvalResult) -> dict[str, str]:
    """The four answers the design asks of a run, each one sentence (used by the report and the app)."""
    out: dict[str, str] = {}
    mode = RetrievalMode.HYBRID if RetrievalMode.HYBRID in result.modes else (result.modes[0] if result.modes else None)
    if mode and {"A", "E"} <= set(result.strategies):
        out["E vs A"] = _e_vs_a(result, mode)
    for s in ("A", "B"):
        if s in result.chunk_stats:
            d = result.chunk_stats[s].destroyed
            out[f"destroyed {s}"] = (f"Strategy {s} destroys {len(d)} of {result.n_questions} needles "
                                     f"({2 * len(d)} of {result.n_queries} queries can never be answered)"
                                     + (f": {', '.join(d)}." if d else "."))
    if {RetrievalMode.DENSE, RetrievalMode.HYBRID} <= set(result.modes):
        out["hybrid vs dense"] = _hybrid_vs_dense(result)
    if result.modes:
        s, mode = pick_sweep_config(result.strategies, result.modes)
        split = result.metric(s, mode).by_wording
        if len(split) > 1:
            out["by wording"] = f"By wording ({s}, {mode}): " + "; ".join(
                f"{WORDING_NAMES.get(w, w)} R@4 {m.recall[4].value:.3f}, R@20 {m.recall[20].value:.3f}, "
                f"MRR {m.mrr:.3f} ({m.n_queries} queries)" for w, m in split.items()) + "."
    for sw in result.sweeps:
        r = sw.row(sw.recommended) if sw.recommended is not None else None
        if r:
            out[f"threshold {sw.knob}"] = _threshold(sw, r)
    return out


def _e_vs_a(result: EvalResult, mode: str) -> str:
    """Does strategy E beat A at R@20 in ``mode``: the recalls and the sign test."""
    t = next(p for p in result.strategy_tests if p.within == mode and p.k == 20 and {p.a, p.b} == {"A", "E"})
    w, l = (t.test.losses, t.test.wins) if t.a == "A" else (t.test.wins, t.test.losses)
    a, e = result.metric("A", mode).recall[20], result.metric("E", mode).recall[20]
    verdict = "yes" if w > l and t.test.p < 0.05 else ("not significantly" if w > l else "no")
    return (f"Does E beat A at R@20 ({mode})? {verdict}: {e.value:.3f} vs {a.value:.3f} "
            f"({e.value - a.value:+.3f}), sign test +{w} / -{l}, p = {format_p(t.test.p)}.")


def _hybrid_vs_dense(result: EvalResult) -> str:
    """Hybrid over dense for each strategy: R@1, R@20 with their sign tests, and MRR."""
    parts = []
    for s in result.strategies:
        hv = {}
        for k in (1, 20):
            t = next(p for p in result.mode_tests if p.within == s and p.k == k and {p.a, p.b} == {RetrievalMode.DENSE, RetrievalMode.HYBRID})
            w, l = (t.test.wins, t.test.losses) if t.a == RetrievalMode.HYBRID else (t.test.losses, t.test.wins)
            hv[k] = f"+{w}/-{l}, p = {format_p(t.test.p)}"
        d, h = result.metric(s, RetrievalMode.DENSE), result.metric(s, RetrievalMode.HYBRID)
        parts.append(f"{s}: R@1 {d.recall[1].value:.3f} -> {h.recall[1].value:.3f} ({hv[1]}), "
                     f"R@20 {d.recall[20].value:.3f} -> {h.recall[20].value:.3f} ({hv[20]}), MRR {d.mrr:.3f} -> {h.mrr:.3f}")
    return "Hybrid over dense: " + "; ".join(parts) + "."


def _threshold(sw: Sweep, r: SweepRow) -> str:
    """A sweep's recommended value with what it costs at that row ``r``."""
    return (f"Recommended {sw.knob} {sw.recommended:g} ({sw.strategy}, {sw.mode}, {sw.gate}): "
            f"{r.bluffs} of {sw.n_near + sw.n_far} out-of-domain queries bluff ({r.bluffs_near} of {sw.n_near} near, "
            f"{r.bluffs_far} of {sw.n_far} far) and {r.lost} of {sw.n_answerable} answerable queries are lost "
            f"({r.refused} of {sw.n_in_domain} in-domain queries refused outright). Rule: {sw.rule}.")


def sweep_table(sw: Sweep) -> list[str]:
    """Markdown rows of one sweep (threshold, bluffs near / far / total, lost, refused)."""
    lines = [f"| {sw.knob} | bluffs near (of {sw.n_near}) | bluffs far (of {sw.n_far}) | bluffs total | "
             f"answerable lost (of {sw.n_answerable}) | in-domain refused (of {sw.n_in_domain}) |",
             "|---:|---:|---:|---:|---:|---:|"]
    for r in sw.rows:
        mark = " **<- recommended**" if sw.recommended is not None and abs(r.threshold - sw.recommended) < 1e-9 else ""
        lines.append(f"| {r.threshold:g}{mark} | {r.bluffs_near} | {r.bluffs_far} | {r.bluffs} | {r.lost} | {r.refused} |")
    return lines


def _cell(t: PairTest, wording: str, first: str) -> str:
    """``+wins / -losses, p`` of ``first`` (``t.a`` or ``t.b``) over one wording's queries."""
    st = t.by_wording[wording]
    w, l = (st.wins, st.losses) if t.a == first else (st.losses, st.wins)
    return f"+{w} / -{l}, p = {format_p(st.p)}"


def wording_sections(result: EvalResult) -> list[str]:
    """Markdown: recall and MRR per wording for every strategy x mode, and the sign tests split by wording (issue 19).

    Empty when the queries hold a single wording.
    """
    wordings = list(dict.fromkeys(w for m in result.metrics for w in m.by_wording))
    if len(wordings) < 2:
        return []
    L = ["## Recall by wording", "",
         "The same questions asked twice: " + " and ".join(f"`{w}` = {WORDING_NAMES.get(w, w)}" for w in wordings)
         + ". The tables above count both.", ""]
    for mode in result.modes:
        L += [f"Mode `{mode}`:", "", "| strategy | wording | n | R@1 | R@4 | R@8 | R@20 | MRR |", "|---|---|---:|---|---|---|---|---:|"]
        for s in result.strategies:
            for w, m in result.metric(s, mode).by_wording.items():
                L.append(f"| {s} | {w} | {m.n_queries} | " + " | ".join(_ci(m.recall[k]) for k in RECALL_KS) + f" | {m.mrr:.3f} |")
        L += [""]
    ks = [k for k in (4, 20) if any(p.k == k for p in result.strategy_tests + result.mode_tests)]
    head = " | ".join(f"R@{k} {w}" for k in ks for w in wordings)
    ref = "E" if "E" in result.strategies else result.strategies[0]
    L += ["## Comparisons by wording (paired sign tests)", "",
          f"Strategies: {ref} against each other strategy (+{ref} wins / -{ref} losses, p); modes: the first named "
          "against the second, over the queries of one wording.", "",
          f"| within | a vs b | {head} |", "|---|---|" + "---|" * len(ks) * len(wordings)]
    for tests, first_is_ref in ((result.strategy_tests, True), (result.mode_tests, False)):
        pairs = list(dict.fromkeys((p.within, p.a, p.b) for p in tests if not first_is_ref or ref in (p.a, p.b)))
        for within, a, b in pairs:
            first, other = (ref, b if a == ref else a) if first_is_ref else (a, b)
            cells = [_cell(next(p for p in tests if (p.within, p.a, p.b, p.k) == (within, a, b, k)), w, first)
                     for k in ks for w in wordings]
            L.append(f"| {within} | {first} vs {other} | " + " | ".join(cells) + " |")
    return L + [""]


def _intro(result: EvalResult, title: str) -> list[str]:
    """The title, what was run on what, the documents that failed and the modes skipped."""
    L = [f"# {title}", "",
         f"Run {result.created}{' on ' + result.machine if result.machine else ''}, commit `{result.commit or 'unknown'}`. "
         f"{len(result.documents)} documents, "
         f"{result.n_questions} questions x 2 phrasings = {result.n_queries} in-domain queries, "
         f"{result.n_near + result.n_far} out-of-domain ({result.n_near} near-topic, {result.n_far} unrelated). "
         f"Correct = a returned chunk's `content` holds the whole needle. Intervals are 95 % Wilson; comparisons are "
         f"paired exact two-sided sign tests on discordant queries (+wins / -losses of the first named).", ""]
    if result.failed_documents:
        L += ["Documents that failed extraction (left out): " + "; ".join(f"{k}: {v}" for k, v in result.failed_documents.items()), ""]
    for m, why in result.skipped_modes.items():
        L += [f"Mode `{m}` skipped: {why}.", ""]
    return L


def _chunking(result: EvalResult) -> list[str]:
    """The chunking table: one row a strategy."""
    L = ["## Chunking", "", "| strategy | chunks | over 256 word-pieces | header share of embedded word-pieces | mean content chars | needles destroyed |",
         "|---|---:|---:|---:|---:|---|"]
    for s in result.strategies:
        c = result.chunk_stats[s]
        L.append(f"| {s} | {c.chunks} | {c.over_window} | {c.header_share:.1%} | {c.mean_content_chars:.0f} | "
                 f"{len(c.destroyed)}{' (' + ', '.join(c.destroyed) + ')' if c.destroyed else ''} |")
    return L + [""]


def _recall(result: EvalResult, plots: dict[str, str]) -> list[str]:
    """A recall table a mode, one row a strategy, then the recall plot."""
    L: list[str] = []
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
    return L


def _strategies_compared(result: EvalResult) -> list[str]:
    """The reference strategy (``E`` when run) against each other one, per mode, at R@1/4/20."""
    ref = "E" if "E" in result.strategies else result.strategies[0]
    L = ["## Strategies compared (paired sign tests)", "",
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
    return L


def _modes_compared(result: EvalResult) -> list[str]:
    """Each strategy's pairs of modes at R@1/4/20."""
    L = ["", "## Modes compared (paired sign tests)", "", "| strategy | a vs b | R@1 | R@4 | R@20 |", "|---|---|---|---|---|"]
    for s in result.strategies:
        pairs = list(dict.fromkeys((p.a, p.b) for p in result.mode_tests if p.within == s))
        for a, b in pairs:
            cells = [str(next(p.test for p in result.mode_tests if p.within == s and p.k == k and (p.a, p.b) == (a, b)))
                     for k in (1, 4, 20)]
            L.append(f"| {s} | {a} vs {b} | " + " | ".join(cells) + " |")
    return L + [""]


def _sweeps(result: EvalResult) -> list[str]:
    """One section a refusal sweep: its table and the recommended value."""
    L: list[str] = []
    for sw in result.sweeps:
        L += [f"## Refusal sweep: {sw.knob} ({sw.strategy}, {sw.mode}, gate `{sw.gate}`)", "",
              "Bluff = an out-of-domain query that still gets at least one source. Answerable = the needle was in the "
              "ungated top 4; lost = its gated sources no longer hold the needle (refusals included).", ""]
        L += sweep_table(sw) + [""]
        if sw.recommended is not None:
            r = sw.row(sw.recommended)
            L += [f"Recommended: **{sw.recommended:g}**, costing {r.bluffs} bluffs ({r.bluffs_near} near, {r.bluffs_far} far) "
                  f"and {r.lost} lost answers. Rule: {sw.rule}.", ""]
    return L


def _distances(result: EvalResult, plots: dict[str, str]) -> list[str]:
    """The nearest cosine distances per group, then the sweep and distance plots."""
    L: list[str] = []
    if result.distances:
        L += ["## Nearest cosine distances", "", "| group | n | min | median | max |", "|---|---:|---:|---:|---:|"]
        for g, v in result.distances.items():
            if v:
                L.append(f"| {g} | {len(v)} | {min(v):.3f} | {float(np.median(v)):.3f} | {max(v):.3f} |")
        L += [""]
    for name, alt in (("sweep", "Refusal sweep"), ("distances", "Nearest-distance distributions")):
        if name in plots:
            L += [f"![{alt}]({plots[name]})", ""]
    return L


def _cost(result: EvalResult) -> list[str]:
    """Time taken, the embedding cache's hits and misses, and the run's notes."""
    t = result.timings_s
    L = ["## Cost", "", f"Total {t.get('total', 0):.1f} s; embedding cache `{result.cache.get('path')}`: "
         f"{result.cache.get('hits')} cached, {result.cache.get('misses')} newly embedded texts. "
         + ", ".join(f"index {s} {t[f'index_{s}']:.1f} s" for s in result.strategies if f"index_{s}" in t) + ".", ""]
    if result.notes:
        L += ["## Notes", ""] + [f"- {n}" for n in result.notes] + [""]
    return L


def report_markdown(result: EvalResult, plots: dict[str, str] | None = None, title: str = "Retrieval evaluation") -> str:
    """The Markdown report of a run: headline answers, tables, sign tests, the sweep, links to ``plots``.

    ``plots`` maps a plot name (``recall``, ``distances``, ``sweep``) to a path relative to the report.
    """
    plots = plots or {}
    answers = ["## Answers", ""] + [f"- {v}" for v in headline(result).values()] + [""]
    sections = (_intro(result, title), answers, _chunking(result), _recall(result, plots), _strategies_compared(result),
                _modes_compared(result), wording_sections(result), _sweeps(result), _distances(result, plots),
                _cost(result))
    return "\n".join(line for section in sections for line in section)


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
