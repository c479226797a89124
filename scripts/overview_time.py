"""What a document's overview and the chat page's suggested questions cost (issue 29; figures in docs/ui.md).

Usage: python scripts/overview_time.py STORE [STORE ...]

For each store (e.g. one holding ../shared/corpus/docs, one holding ../shared/corpus/pdf-dev/docs, built with
``rag ingest``): every ready document's overview computed afresh (:func:`rag.answer.overview.compute_overview`:
sections and summary, no model), with its chunk count, time, sections and summary sentences; then every
heading question (:func:`rag.answer.suggest.candidate_questions`) asked of the gate with the store's settings,
counting those answered from the document they were drawn from, and the time :func:`suggested_questions`
takes for the chat page (4 of at most 12 tried). The overviews are then kept in each store (derived/).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from rag.answer.overview import compute_overview
from rag.answer.pipeline import gated_sources
from rag.answer.suggest import candidate_questions, suggested_questions
from rag.evaluation.bench.machine import header
from rag.settings import get_settings
from rag.store.store import Store
from rag.types import DocStatus, Verdict


def main(paths: list[str]) -> None:
    print(header("overview_time"))
    for path in paths:
        store = Store(Path(path), get_settings(store=path))
        docs = [d for d in store.documents() if d.status == DocStatus.READY]
        print(f"\n## {path}: {len(docs)} documents, {store.chunk_count} chunks\n")
        print("| document | chunks | overview ms | sections | summary sentences |")
        print("|---|---:|---:|---:|---:|")
        times = []
        for d in docs:
            ov = compute_overview(store, d.id)
            times.append(ov.ms)
            print(f"| {d.name} | {d.chunk_count} | {ov.ms:.0f} | {len(ov.sections)} | {len(ov.summary)} |")
        print(f"\noverview: median {statistics.median(times):.0f} ms, max {max(times):.0f} ms, "
              f"all {sum(times):.0f} ms")
        cands = candidate_questions(store)
        t0, answered, mentions = time.perf_counter(), 0, 0
        for s in cands:
            gate, cites, _ = gated_sources(store, s.question)
            answered += gate.verdict == Verdict.ANSWERED and bool(cites) and cites[0].document_id == s.document_id
            mentions += gate.verdict == Verdict.MENTIONS
        per_q = (time.perf_counter() - t0) * 1000.0 / max(1, len(cands))
        print(f"heading questions: {len(cands)}, answered from their own document {answered}, "
              f"'may not answer' {mentions}; {per_q:.0f} ms each")
        picked, ms = suggested_questions(store)
        print(f"chat page suggestions ({len(picked)}) in {ms:.0f} ms: " + "; ".join(s.question for s in picked))
        store.close()


if __name__ == "__main__":
    main(sys.argv[1:])
