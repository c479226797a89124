"""Every file of some folders through the product's whole indexing path, and how each ends (issue 35, item 6b):
``python -m rag bench files``.

Default folders: the shared ``cases/wild/files`` (172 real files from the public test suites of file-format
libraries) and ``corpus/real`` (real public documents in every format). Each file is queued in one fresh store
as an upload is (:meth:`rag.store.store.Store.enqueue_bytes`) and indexed by one :class:`rag.store.worker.Worker`
with the contained child (extraction and the text stages under their budgets, :mod:`rag.ingest.budget`), the
real encoder, one job after another, exactly as the app's worker does. Per file: the outcome (``ready``,
``failed``, ``duplicate``...), the reason, wall seconds from take to finish, the child's peak resident memory
(MiB; the reader and text stages) and the worker's, and the stage a failure stopped in.

:func:`run_files` prints the date, machine and load, the table (slowest first), the slowest ten with their
stage times, and the totals: outcomes, files over ``target_s`` (issue 35: 60 s) and over ``target_mb``
(1.5 GB), and hangs (a file whose job did not end: with the budgets there should be none). Reported, never
asserted.
"""

from __future__ import annotations

import resource
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rag.evaluation.bench.machine import header
from rag.ingest.contained import ContainedExtractor
from rag.store.jobs import Job, JobState
from rag.store.results import IngestResult

if TYPE_CHECKING:
    from rag.store.store import Store

Echo = Callable[[str], None]


@dataclass
class FileRun:
    """One file's end: ``file`` (relative to its folder's parent), ``outcome`` (the job's status word),
    ``reason`` (a failure's), ``seconds`` (wall, take to finish), ``child_mb`` (peak resident MiB of the
    contained child), ``worker_mb`` (the worker process's peak so far), ``stage`` (where a failure stopped;
    ``""`` when ready), ``stages`` (``stage -> seconds`` as the progress reports saw them)."""

    file: str
    outcome: str = "hung"
    reason: str = ""
    seconds: float = 0.0
    child_mb: float = 0.0
    worker_mb: float = 0.0
    stage: str = ""
    stages: dict[str, float] | None = None


def default_folders(shared: Path) -> list[Path]:
    """The shared folders the issue names: ``cases/wild/files`` and ``corpus/real`` (those that exist)."""
    return [p for p in (shared / "cases" / "wild" / "files", shared / "corpus" / "real") if p.is_dir()]


def files_of(folders: Iterable[Path]) -> list[tuple[str, Path]]:
    """``(label, path)`` of every regular file under ``folders`` (manifests and READMEs of the folders left out),
    sorted."""
    out = []
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if p.is_file() and p.name not in ("MANIFEST.jsonl", "README.md") and not p.name.startswith("."):
                out.append((f"{folder.parent.name}/{folder.name}/{p.relative_to(folder)}", p))
    return out


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_files(files: list[tuple[str, Path]], settings=None, echo: Echo = print,
                limit_s: float | None = None, embedder=None) -> list[FileRun]:
    """Index every file in one fresh temporary store (see the module doc); ``limit_s`` a ceiling per file
    (seconds, the setting ``extract_seconds``; default the settings'); ``embedder`` the encoder (default the
    real one: the times are the product's)."""
    from rag.settings import get_settings
    from rag.store.store import Store
    from rag.store.worker import Worker

    with tempfile.TemporaryDirectory(prefix="rag-bench-files-") as tmp:
        s = settings or get_settings(store=Path(tmp) / "store")
        if limit_s is not None:
            s.extract_seconds = int(limit_s)
        store = Store(Path(tmp) / "store", settings=s, embedder=embedder)
        try:
            runs = _enqueue_all(store, files)
            extractor = ContainedExtractor(s.extract_memory_mb, s.extract_seconds)
            timer = _StageTimer(runs, extractor, echo)
            worker = Worker(store, extractor=extractor, on_progress=timer.on_progress, on_result=timer.on_result)
            worker.run(until=lambda: not store.jobs.active())
            for jid, run in runs.items():
                job = store.jobs.get(jid) if jid > 0 else None
                if job is not None and job.state == JobState.FAILED:
                    run.stage = job.stage or ""
        finally:
            store.close()
    return list(runs.values())


def _enqueue_all(store: Store, files: list[tuple[str, Path]]) -> dict[int, FileRun]:
    """Queue every file; each one's run by its job id (a file refused at once, with no job, by a negative key)."""
    runs: dict[int, FileRun] = {}
    for label, path in files:
        r = store.enqueue_bytes(path.read_bytes(), path.name, on_conflict="keep-both")
        if r.job_id is None:
            runs[-len(runs) - 1] = FileRun(label, outcome=str(r.status), reason=r.reason or "")
            continue
        runs[r.job_id] = FileRun(label)
    return runs


class _StageTimer:
    """The worker's callbacks: each job's seconds per stage, and its outcome, time and memory when it ends."""

    def __init__(self, runs: dict[int, FileRun], extractor: ContainedExtractor, echo: Echo):
        self.runs, self.extractor, self.echo = runs, extractor, echo
        self.seen: dict[int, tuple[str, float]] = {}

    def on_progress(self, job: Job, stage: str, done: int, total: int) -> None:
        run = self.runs.get(job.id)
        if run is None:
            return
        last = self.seen.get(job.id)
        now = time.monotonic()
        if last is None or last[0] != stage:
            if last is not None:
                run.stages = {**(run.stages or {}), last[0]: round(now - last[1], 2)}
            self.seen[job.id] = (stage, now)

    def on_result(self, job: Job, result: IngestResult) -> None:
        run = self.runs.get(job.id)
        if run is None:
            return
        last = self.seen.pop(job.id, None)
        if last is not None:
            run.stages = {**(run.stages or {}), last[0]: round(time.monotonic() - last[1], 2)}
        run.outcome, run.reason = str(result.status), result.reason or ""
        run.seconds = round(result.elapsed_ms / 1000, 2)
        run.child_mb, run.worker_mb = round(self.extractor.last_peak_mb, 1), round(_peak_mb(), 1)
        self.echo(f"  {run.outcome:<9} {run.seconds:7.1f} s  {run.file}" + (f": {run.reason}" if run.reason else ""))


def run_files(folders: list[Path], echo: Echo = print, *, target_s: float = 60.0, target_mb: float = 1536.0,
              limit_s: float | None = None, embedder=None) -> dict:
    """Run :func:`bench_files` over ``folders``, print the report (see the module doc) and return it as JSON-ready
    figures."""
    files = files_of(folders)
    echo(header(f"bench files: {len(files)} files from {', '.join(str(f) for f in folders)}"))
    t0 = time.monotonic()
    runs = bench_files(files, echo=echo, limit_s=limit_s, embedder=embedder)
    wall = time.monotonic() - t0
    runs.sort(key=lambda r: -r.seconds)
    outcomes: dict[str, int] = {}
    for r in runs:
        outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
    slow = [r for r in runs if r.seconds > target_s]
    big = [r for r in runs if r.child_mb > target_mb]
    hung = [r for r in runs if r.outcome == "hung"]
    echo("")
    echo("| file | outcome | seconds | child MiB | stage | reason |")
    echo("|---|---|---|---|---|---|")
    for r in runs:
        echo(f"| {r.file} | {r.outcome} | {r.seconds:.1f} | {r.child_mb:.0f} | {r.stage} | {r.reason[:120]} |")
    echo("")
    echo("Slowest ten, seconds per stage:")
    for r in runs[:10]:
        stages = ", ".join(f"{k} {v:.1f}" for k, v in (r.stages or {}).items())
        echo(f"- {r.file}: {r.seconds:.1f} s ({stages})")
    echo("")
    echo(f"{len(runs)} files in {wall:.0f} s: " + ", ".join(f"{v} {k}" for k, v in sorted(outcomes.items()))
         + f"; over {target_s:.0f} s: {len(slow)}; child over {target_mb:.0f} MiB: {len(big)}; hung: {len(hung)}; "
         f"worker peak {max((r.worker_mb for r in runs), default=0):.0f} MiB")
    return {"files": [asdict(r) for r in runs], "outcomes": outcomes, "wall_s": round(wall, 1),
            "over_target_s": len(slow), "over_target_mb": len(big), "hung": len(hung)}
