"""What the benchmark commands and ``rag eval`` share (issue 12): one header line naming the date, the machine
and its load; percentiles; the shared corpora's paths (``--shared``, ``$RAG_SHARED``, else ``../shared``) and
their JSONL rows; and a store holding a corpus.

Timings printed under this header are only comparable on a quiet machine: the
header gives the 1-, 5- and 15-minute load averages so a reader can tell.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import click
import numpy as np

from rag.settings import ROOT
from rag.store.store import Store

#: The shared corpora (``<shared>/corpus``): the 13 Markdown course chapters and the 8 real PDFs of ``pdf-dev``.
CORPORA = ("course", "pdf-dev")

shared_option = click.option("--shared", "shared", type=click.Path(file_okay=False, path_type=Path), default=None,
                             help="The shared folder holding corpus/ (default: $RAG_SHARED, else ../shared).")


# --------------------------------------------------------------------------- header


def machine_summary() -> str:
    """One line naming this machine for benchmark output: host, OS, CPU model, usable cores, Python."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"{platform.node()} {platform.system()} {platform.machine()}, {cpu}, {n} cores usable, "
            f"Python {platform.python_version()}")


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, e.g. ``"load 1.52 0.98 0.60"`` (``"load n/a"`` where unknown)."""
    try:
        return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return "load n/a"


def header(title: str) -> str:
    """The first line of every benchmark: ``"<title>  <local date and time>  <machine>; <load>"``."""
    now = datetime.now().astimezone().isoformat(sep=" ", timespec="seconds")
    return f"{title}  {now}  {machine_summary()}; {load_average()}"


def _proc_status_mib(key: str) -> float:
    """A ``/proc/self/status`` size field (kB) in MiB; NaN where there is no such file (not Linux)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def rss_mib() -> float:
    """Resident set size of this process now, MiB (VmRSS); NaN where unknown."""
    return _proc_status_mib("VmRSS")


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, MiB (VmHWM); NaN where unknown."""
    return _proc_status_mib("VmHWM")


# --------------------------------------------------------------------------- percentiles


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (``q`` in 0-100, linear interpolation as ``numpy.percentile``); NaN when empty."""
    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else float("nan")


def p50_p95(values: Sequence[float], width: int = 8, decimals: int = 3) -> str:
    """``"p50 <x>  p95 <y>"`` of ``values`` (e.g. milliseconds), each right-aligned in ``width`` characters."""
    return f"p50 {percentile(values, 50):{width}.{decimals}f}  p95 {percentile(values, 95):{width}.{decimals}f}"


# --------------------------------------------------------------------------- the shared corpora


@dataclass(frozen=True)
class Corpus:
    """One shared corpus: its documents folder, questions and out-of-domain JSONL files."""

    name: str
    docs: Path
    questions: Path
    ood: Path

    def files(self) -> list[Path]:
        """The corpus's documents (``.md``, ``.txt``, ``.pdf``), sorted by name."""
        return sorted(p for p in self.docs.iterdir() if p.is_file() and p.suffix.lower() in (".md", ".txt", ".pdf"))


def shared_dir(shared: str | Path | None = None) -> Path:
    """The shared folder: ``shared`` if given, else ``$RAG_SHARED``, else ``../shared`` beside the repository."""
    return Path(shared or os.environ.get("RAG_SHARED") or ROOT.parent / "shared")


def corpus(name: str = "course", shared: str | Path | None = None) -> Corpus:
    """The shared corpus ``name`` (one of :data:`CORPORA`).

    Raises ``click.ClickException`` naming the path when its questions file
    is missing, ``ValueError`` for an unknown name.
    """
    root = shared_dir(shared) / "corpus"
    if name == "course":
        c = Corpus(name, root / "docs", root / "dev_questions.jsonl", root / "dev_ood.jsonl")
    elif name == "pdf-dev":
        c = Corpus(name, root / "pdf-dev" / "docs", root / "pdf-dev" / "questions.jsonl", root / "pdf-dev" / "ood.jsonl")
    else:
        raise ValueError(f"unknown corpus {name!r}; allowed: {', '.join(CORPORA)}")
    if not c.questions.is_file():
        raise click.ClickException(f"shared corpus {name!r} not found: no {c.questions} (set --shared or RAG_SHARED)")
    return c


def read_jsonl(path: Path) -> list[dict]:
    """The JSON object of every non-blank line of ``path`` (no checks: see ``rag.evaluation.data`` for those)."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


# --------------------------------------------------------------------------- a store holding a corpus


def ingest_missing(store: Store, files: Iterable[Path], log: Callable[[str], None] | None = None) -> list:
    """Ingest every file of ``files`` whose name is not already a ready document of ``store``.

    Returns the ingest results (``status``, ``chunk_count``, ...) of the files
    ingested now; ``log`` gets one line per file.
    """
    have = {d.name for d in store.documents() if getattr(d, "status", "ready") == "ready"}
    results = []
    for p in files:
        if p.name not in have:
            r = store.ingest_path(p)
            results.append(r)
            if log:
                log(f"  ingest {p.name}: {getattr(r, 'status', r)}")
    return results


def ensure_corpus_store(store_dir: Path, files: Iterable[Path], settings, log: Callable[[str], None] | None = None) -> Store:
    """The store at ``store_dir`` (created if missing) holding every file of ``files`` (:func:`ingest_missing`).

    A second run reuses the store. The caller closes it.
    """
    store = Store(store_dir, settings=settings)
    ingest_missing(store, files, log)
    return store
