"""The speed benchmark (``python -m rag bench speed``, issue 41, Deliver 6): in one run, on the same texts, the bare
encoder against the product's ingest, search alone and while a document is indexed, and the first words against a
bare llama.cpp prefill of the same prompt.

Rows (milliseconds, wall clock, one run; printed under :func:`rag.evaluation.bench.machine.header`, whose load
average says how far to trust them on a shared machine):

* **bare encoder**: the encoder alone (:meth:`rag.index.embed.OnnxEmbedder.encode`, length-sorted) on the texts the
  product embeds for the corpus (its chunks' texts; then chunks + sentence units, each distinct text once, as
  ``prepare`` embeds them), at batch 1 and at each of :data:`BATCHES` on the chunk texts, each the best of two
  runs; the best batch is the reference of the ratios: units off against the chunk texts, units on against the
  chunk + unit texts (issue 41: "the bare encoder's time for the same texts").
* **product ingest**: ``Store.ingest_path`` of every file into a new store, sentence units off and on (read,
  chunk, embed, write, index), with the embedding stage's own share (from the ingest's progress events); then
  the same files dropped at once into a worker's queue (each file's time from the drop to searchable), and each
  ``pdfs`` file dropped alone (issue 41's "a 40-page PDF answerable within 15 s").
* **search**: :func:`rag.answer.pipeline.search_and_gate` over the corpus questions, idle and while another
  document is ingested into the same store by a second thread (the app's case).
* **first words**: :attr:`rag.answer.record.Answer.first_words_ms` (from asking to the first words, the one
  definition of issue 41) over ``questions`` questions with the GGUF, with the instruction prefix kept in the KV
  cache and without it (:attr:`rag.answer.generate.Generator.keep_prefix`), paired on the same questions; and the
  bare llama.cpp prefill of the same prompt tokens (whole prompt from an empty cache, and the part after the
  cached prefix), timed as ``llm.eval``.

Nothing here is enforced; the figures are written to ``docs/performance.md`` only when asked (``--write``).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rag.evaluation.bench.corpora import Corpus
from rag.evaluation.bench.machine import header, load_average, percentile
from rag.evaluation.data import expand_queries, load_questions
from rag.ingest.chunk import unit_text
from rag.ingest.limits import Limits
from rag.ingest.read import read_bytes
from rag.settings import Settings, get_settings
from rag.store.jobs import JobState
from rag.store.results import IngestStatus
from rag.store.store import Store

Echo = Callable[[str], None]

#: Answer tokens generated per timed answer (the first words come before them; the prompt is fitted as usual).
ANSWER_CAP = 32

#: Batch sizes the bare encoder is timed at on the chunk texts (1 first: the product's default for the int8 encoder).
BATCHES = (1, 4, 16, 32)


@dataclass
class SpeedTable:
    """The figures of one run: ``rows`` ``(what, value, note)`` in print order; ``title`` the header line."""

    title: str
    rows: list[tuple[str, str, str]] = field(default_factory=list)

    def add(self, what: str, value: str, note: str = "") -> None:
        self.rows.append((what, value, note))

    def markdown(self) -> str:
        """The table as Markdown, under its header line."""
        out = [self.title, "", "| measure | value | note |", "|---|---|---|"]
        out += [f"| {w} | {v} | {n} |" for w, v, n in self.rows]
        return "\n".join(out) + "\n"


def _ms(values: Sequence[float]) -> str:
    return f"p50 {percentile(values, 50):.1f} ms, p95 {percentile(values, 95):.1f} ms (n={len(values)})"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "n/a"


def corpus_texts(files: Sequence[Path], settings: Settings) -> tuple[list[str], list[str]]:
    """``(chunk texts, chunk + unit texts)`` of ``files`` as the product embeds them (each distinct text once per
    document, as ``prepare``'s embed_once), read in this process with the settings' chunking."""
    chunks_only: list[str] = []
    everything: list[str] = []
    params = settings.chunking
    for p in files:
        got = read_bytes(p.read_bytes(), p.name, limits=Limits.from_settings(settings), params=params)
        cs = list(got.chunks)
        texts = [c.text for c in cs]
        chunks_only += texts
        everything += list(dict.fromkeys(texts + [unit_text(cs[i], a, b) for i, a, b in got.units]))
    return chunks_only, everything


def _encode_s(embedder, texts: Sequence[str], batch: int, repeat: int = 2) -> float:
    """Seconds the encoder takes for ``texts`` at ``batch``, the best of ``repeat`` runs (a shared VM's first run
    was once 2.4x its second), its own batch size restored after."""
    before = embedder.batch_size
    embedder.batch_size = batch
    try:
        best = float("inf")
        for _ in range(max(1, repeat)):
            t0 = time.perf_counter()
            embedder.encode(list(texts))
            best = min(best, time.perf_counter() - t0)
        return best
    finally:
        embedder.batch_size = before


@dataclass(frozen=True)
class Ingested:
    """One product ingest of the documents: ``seconds`` in all, ``searchable_s`` summed over the documents from
    the start of each to its chunks' commit (issue 41: it is answerable from then on; its sentence units follow),
    ``embed_s`` the chunks' and ``sentences_s`` the units' embedding, ``chunks`` stored."""

    seconds: float
    searchable_s: float
    embed_s: float
    sentences_s: float
    chunks: int


def _ingest(files: Sequence[Path], settings: Settings, embedder, root: Path) -> tuple[Store, Ingested]:
    """Ingest ``files`` into a new store under ``root`` with ``Store.ingest_path``, timed from its progress."""
    store = Store(root, settings=settings, embedder=embedder)
    spent = {"embed": 0.0, "sentences": 0.0, "searchable": 0.0}
    mark: dict[str, float] = {}
    start = [0.0]

    def progress(stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if stage in ("embed", "sentences") and done == 0:
            mark[stage] = now
        elif stage in ("embed", "sentences") and done >= total and stage in mark:
            spent[stage] += now - mark.pop(stage)
        elif stage == "index" and done >= total:
            spent["searchable"] += now - start[0]

    t0 = time.perf_counter()
    n = 0
    for p in files:
        start[0] = time.perf_counter()
        r = store.ingest_path(p, progress)
        n += r.chunk_count if r.status == IngestStatus.READY else 0
    return store, Ingested(time.perf_counter() - t0, spent["searchable"], spent["embed"], spent["sentences"], n)


def through_queue(files: Sequence[Path], settings: Settings, embedder, root: Path) -> tuple[list[float], float]:
    """Drop ``files`` at once into a new store under ``root`` and let one worker (extraction contained, as the
    app's) index them: seconds from the drop to each file's being searchable (its chunks committed), in file
    order, and until the queue is drained (every file's sentence units too)."""
    from rag.store.worker import Worker

    store = Store(root, settings=settings.with_overrides(store=root), embedder=embedder)
    t0 = time.perf_counter()
    jobs = {store.enqueue_path(p).job_id: i for i, p in enumerate(files)}
    ready: dict[int, float] = {}

    def progress(job, stage: str, done: int, total: int) -> None:
        if stage == "index" and done >= total and job.id in jobs:
            ready.setdefault(jobs[job.id], time.perf_counter() - t0)

    worker = Worker(store, on_progress=progress)
    worker.run(until=lambda: not store.jobs.active())
    drained = time.perf_counter() - t0
    store.close()
    return [ready.get(i, float("nan")) for i in range(len(files))], drained


def _pages(pdf: Path) -> int:
    import pymupdf

    with pymupdf.open(pdf) as d:
        return d.page_count


def _search_ms(store: Store, queries: Sequence[str], settings: Settings) -> list[float]:
    from rag.answer.pipeline import search_and_gate

    out = []
    for q in queries:
        t0 = time.perf_counter()
        search_and_gate(store, q, settings)
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def _search_while_indexing(store: Store, queries: Sequence[str], settings: Settings, extra: Path) -> list[float]:
    """Search ms while a second thread ingests ``extra`` into ``store`` (passes over ``queries`` until it is done,
    at least one)."""
    done = threading.Event()

    def work() -> None:
        try:
            store.ingest_path(extra)
        finally:
            done.set()

    t = threading.Thread(target=work, name="bench-speed-ingest", daemon=True)
    t.start()
    out: list[float] = []
    while not done.is_set() or not out:
        out += _search_ms(store, queries, settings)
        if len(out) > 50 * len(queries):
            break
    t.join()
    return out


#: The Unix nice values a worker process is timed at beside the app's searches: as the app, and the default.
WORKER_NICES = (0, 10)


def _search_while_worker(store: Store, queries: Sequence[str], settings: Settings, extra: Path, nice: int,
                         tmp: Path) -> list[float]:
    """Search ms in this process while the app's kind of worker (``rag worker``, a process of its own at nice value
    ``nice``: settings ``worker_nice``) indexes a copy of ``extra`` (its bytes and a blank line per nice value, so
    each run is a new document). Only searches made while the job runs count (the worker's start-up is left out)."""
    copy = tmp / f"{extra.stem}-nice{nice}{extra.suffix}"
    copy.write_bytes(extra.read_bytes() + b"\n" * (nice + 2))
    job_id = store.enqueue_path(copy).job_id
    env = {**os.environ, "RAG_WORKER_NICE": str(nice), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-m", "rag", "worker", "--store", str(store.path), "--idle-exit", "1",
                             "--exit-if-busy"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    out: list[float] = []
    started = False
    try:
        while proc.poll() is None and job_id is not None:
            job = store.jobs.get(job_id)
            if job is None or job.state in (JobState.DONE, JobState.FAILED, JobState.CANCELLED):
                break
            started = started or job.state == JobState.RUNNING
            if not started:
                time.sleep(0.05)
                continue
            out += _search_ms(store, queries[:8], settings)
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=120)
    return out


@dataclass(frozen=True)
class FirstWords:
    """One question's first words with the prefix cached (``on``) and not (``off``), ms from asking; the model's
    first token after retrieval (``ttft_on``); the bare prefill of the same prompt, whole (``bare_whole``) and
    after the cached prefix (``bare_rest``), ms; ``prompt_tokens`` / ``prefix_tokens`` counted."""

    on: float
    off: float
    ttft_on: float
    bare_whole: float | None
    bare_rest: float | None
    prompt_tokens: int
    prefix_tokens: int


def _bare_prefill(gen, tokens: Sequence[int]) -> tuple[float, float]:
    """``(whole, rest)`` ms: ``tokens`` evaluated from an empty cache, and what follows the generator's instruction
    prefix once that is evaluated (untimed). Leaves the cache empty (the next answer evaluates the prefix again)."""
    llm, prefix = gen.llm, list(gen._prefix)
    with gen._lock:
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(list(tokens))
        whole = (time.perf_counter() - t0) * 1000.0
        llm.reset()
        rest = float("nan")
        if prefix and list(tokens[:len(prefix)]) == prefix:
            llm.eval(prefix)
            t0 = time.perf_counter()
            llm.eval(list(tokens[len(prefix):]))
            rest = (time.perf_counter() - t0) * 1000.0
        llm.reset()
        gen._prefix_cached = False
    return whole, rest


def first_words(store: Store, questions: Sequence[str], settings: Settings,
                get_generator: Callable[[Settings], object] | None = None) -> list[FirstWords]:
    """:class:`FirstWords` of each question the gate passes (a refusal has no first words), prefix cache on and
    off in turn on the same question (the first answer loads the model and is not counted; before each cached run
    the prefix is evaluated untimed, as it stays between two answers)."""
    from rag.answer import pipeline
    from rag.answer.generate import Generator
    from rag.answer.pipeline import ask

    get = get_generator or pipeline.get_default_generator  # the one generator seam (tests replace it)
    gen = get(settings)
    real = isinstance(gen, Generator)
    out = []
    warmed = False
    for q in questions:
        if not warmed:
            ask(store, q, settings, get_generator=lambda s: gen).run()  # loads and warms; not counted
            warmed = True
        runs = {}
        for keep in (True, False):
            if real:
                gen.keep_prefix = keep
                if keep:
                    gen.warm()  # as between two answers: the prefix's cache is there (the last run emptied it)
            s = ask(store, q, settings, get_generator=lambda s: gen)
            a = s.run()
            runs[keep] = a
        if real:
            gen.keep_prefix = True
        on, off = runs[True], runs[False]
        if on.first_words_ms is None or off.first_words_ms is None:
            continue
        bare_whole = bare_rest = None
        n_prompt = n_prefix = 0
        if real:
            prompt = gen.fit(on.query, s.prompt_sources(gen.count_tokens), settings.generation.max_answer_tokens)
            bare_whole, bare_rest = _bare_prefill(gen, prompt.tokens)
            n_prompt, n_prefix = len(prompt.tokens), len(gen._prefix)
        out.append(FirstWords(on.first_words_ms, off.first_words_ms, on.ttft_ms or 0.0, bare_whole, bare_rest,
                              n_prompt, n_prefix))
    return out


def _queue_rows(used: Sequence[Path], pdfs: Sequence[Path], s: Settings, emb, tmp: Path, got: Ingested,
                bare_best: float, row: Callable[[str, str, str], None]) -> None:
    """The rows after the units-on ingest: when it was searchable, then the same files through the worker's
    queue, then each of ``pdfs`` dropped alone."""
    row("searchable after (units on; sentence units follow)",
        f"{got.searchable_s:.1f} s for the {len(used)} documents", f"{_ratio(got.searchable_s, bare_best)} "
        "the bare encoder on the chunk texts")
    ready, drained = through_queue(used, s, emb, tmp / "queue")
    row(f"through the worker's queue, {len(used)} files dropped at once",
        f"last searchable after {max(ready):.1f} s; all sentence units after {drained:.1f} s",
        "each file from the drop: " + ", ".join(f"{r:.1f}" for r in ready) + f" s; {load_average()}")
    for pdf in pdfs:
        ready, drained = through_queue([pdf], s, emb, tmp / f"pdf-{pdf.stem}")
        row(f"a PDF dropped alone ({_pages(pdf)} pages)", f"searchable after {ready[0]:.1f} s; "
            f"sentence search after {drained:.1f} s", f"{pdf.name}; {load_average()}")


def bench_speed(corpus: Corpus, *, questions: int = 8, files: int | None = None, echo: Echo = print,
                settings: Settings | None = None, embedder=None,
                get_generator: Callable[[Settings], object] | None = None, generate: bool = True,
                pdfs: Sequence[Path] = (), worker_nices: Sequence[int] = WORKER_NICES) -> SpeedTable:
    """Run every part on ``corpus`` (its first ``files`` documents; the next one is the document indexed during
    the search), print each figure as it comes, and return the :class:`SpeedTable`. ``pdfs``: files each timed
    alone through the worker's queue, from the drop to searchable (issue 41's 40-page PDF). ``worker_nices``: the
    nice values of the worker processes timed beside the search (:func:`_search_while_worker`; a worker process
    loads the real encoder, whatever ``embedder`` is)."""
    from rag.index.embed import get_embedder

    base = settings or get_settings()
    emb = embedder or get_embedder(base.embed_batch_size, encoder=base.encoder)
    all_files = corpus.files()
    used = all_files[:files] if files else all_files[:-1] if len(all_files) > 1 else all_files
    extra = next((p for p in all_files if p not in used), None)
    table = SpeedTable(header(f"bench speed --corpus {corpus.name}"))
    echo(table.title)

    def row(what: str, value: str, note: str = "") -> None:
        table.add(what, value, note)
        echo(f"{what:<46} {value}{'   ' + note if note else ''}")

    row("documents", f"{len(used)} of {corpus.name}", f"then {extra.name if extra else 'none'} during the search")
    chunk_texts, all_texts = corpus_texts(used, base.with_overrides(unit_vectors=True))
    emb.encode(chunk_texts[:8])  # load and warm the session
    bare = {b: _encode_s(emb, chunk_texts, b) for b in BATCHES}
    best = min(bare, key=bare.get)
    n = len(chunk_texts)
    for b, s in bare.items():
        row(f"bare encoder, chunk texts, batch {b}", f"{s * 1000 / n:.1f} ms per chunk ({n} chunks, {s:.1f} s)",
            "best" if b == best else "")
    bare_all = _encode_s(emb, all_texts, best)
    row(f"bare encoder, chunk + unit texts, batch {best}", f"{bare_all:.1f} s ({len(all_texts)} distinct texts)",
        load_average())
    with tempfile.TemporaryDirectory(prefix="rag-bench-speed-") as tmp:
        for units in (False, True):
            s = base.with_overrides(unit_vectors=units, store=Path(tmp) / f"units-{units}")
            store, got = _ingest(used, s, emb, Path(tmp) / f"units-{units}")
            secs, chunks = got.seconds, got.chunks
            row(f"product ingest, units {'on' if units else 'off'}",
                f"{secs:.1f} s, {secs * 1000 / max(chunks, 1):.1f} ms per chunk ({chunks} chunks); embedding "
                f"{got.embed_s:.1f} s" + (f" + sentences {got.sentences_s:.1f} s" if units else ""),
                f"{_ratio(secs, bare_all if units else bare[best])} the bare encoder on the same texts"
                f"{' (chunks + units)' if units else ''}; {load_average()}")
            if units:
                _queue_rows(used, pdfs, s, emb, Path(tmp), got, bare[best], row)
            if not units:
                store.close()
        queries = [q.text for q in expand_queries(load_questions(corpus.questions))]
        idle = _search_ms(store, queries, s)
        row("search (search_and_gate), idle", _ms(idle), f"{store.chunk_count} chunks")
        if extra is not None:
            busy = _search_while_indexing(store, queries, s, extra)
            row("search while a document is indexed", _ms(busy), f"{extra.name}; {load_average()}")
            for nice in worker_nices:
                got_ms = _search_while_worker(store, queries, s, extra, nice, Path(tmp))
                row(f"search while the app's worker indexes, nice {nice}", _ms(got_ms) if got_ms else "n/a",
                    f"{extra.name}, in a worker process{' (the default)' if nice == base.worker_nice else ''}; "
                    f"{load_average()}")
        if generate:
            # the first words do not depend on how long the answer runs: a short cap keeps the run short
            fw = first_words(store, queries[:questions], s.with_overrides(max_answer_tokens=ANSWER_CAP), get_generator)
            if fw:
                on, off = [f.on for f in fw], [f.off for f in fw]
                row("first words from asking, prefix cached", _ms(on), f"{len(fw)} questions; {load_average()}")
                row("first words from asking, prefix not cached", _ms(off),
                    f"same questions; paired: cached faster on {sum(a < b for a, b in zip(on, off))} of {len(fw)}")
                row("model's first token after retrieval, cached", _ms([f.ttft_on for f in fw]))
                whole = [f.bare_whole for f in fw if f.bare_whole is not None]
                rest = [f.bare_rest for f in fw if f.bare_rest is not None]
                if whole:
                    row("bare llama.cpp prefill, whole prompt", _ms(whole),
                        f"{statistics.median(f.prompt_tokens for f in fw):.0f} tokens p50")
                    row("bare llama.cpp prefill after the cached prefix", _ms(rest),
                        f"prefix {fw[0].prefix_tokens} tokens; first words cached / this: "
                        f"{_ratio(percentile(on, 50), percentile(rest, 50))}")
            else:
                row("first words", "n/a", "the gate refused every question")
        store.close()
    echo(load_average())
    return table


def write_performance(table: SpeedTable, path: Path) -> None:
    """Put ``table`` under the ``## bench speed`` section of ``path`` (created; an earlier table replaced)."""
    head = "## bench speed (issue 41)\n\n"
    old = path.read_text(encoding="utf-8") if path.exists() else "# Performance\n\n"
    if head in old:
        before, _, after = old.partition(head)
        rest = after.split("\n## ", 1)
        old = before + ("\n## " + rest[1] if len(rest) > 1 else "")
    path.write_text(old.rstrip("\n") + "\n\n" + head + table.markdown(), encoding="utf-8")
