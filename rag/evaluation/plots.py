"""The evaluation's plots (PNG, matplotlib's Agg backend): recall with intervals, nearest distances, sweeps.

matplotlib is imported inside each function so that importing the evaluation
stays quick when no plot is drawn.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rag.evaluation.metrics import RECALL_KS
from rag.evaluation.records import EvalResult


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
