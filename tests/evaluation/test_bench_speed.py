"""``bench speed`` (issue 41, Deliver 6) runs end to end on the tiny corpus with the fakes: every row is printed and
the table is written; its figures are not checked (timings are never asserted)."""

from __future__ import annotations

from pathlib import Path

from rag.evaluation.bench.corpora import Corpus
from rag.evaluation.bench.speed import SpeedTable, bench_speed, write_performance
from rag.settings import get_settings

TINY = Path(__file__).resolve().parent / "fixtures" / "tiny"


def _pdf(path: Path, pages: int) -> Path:
    import pymupdf

    doc = pymupdf.open()
    for n in range(pages):
        doc.new_page().insert_text((72, 72), f"Page {n + 1}: the boiler is serviced every spring by the landlord.")
    doc.save(path)
    return path


def test_bench_speed_prints_every_part_and_writes_the_table(tmp_path, fake_embedder, fake_generator):
    corpus = Corpus("tiny", TINY / "docs", TINY / "questions.jsonl", TINY / "ood.jsonl")
    lines: list[str] = []
    table = bench_speed(corpus, questions=2, echo=lines.append, embedder=fake_embedder,
                        settings=get_settings(threshold=2.0, store=tmp_path / "unused"),
                        pdfs=[_pdf(tmp_path / "two.pdf", 2)], worker_nices=())  # a worker process has no fakes
    what = [w for w, _, _ in table.rows]
    queue = next(r for r in table.rows if r[0].startswith("through the worker's queue"))
    assert queue[1].startswith("last searchable after") and "nan" not in queue[2]  # every file was timed
    assert "a PDF dropped alone (2 pages)" in what
    assert what[0] == "documents" and "bare encoder, chunk texts, batch 1" in what
    assert {"product ingest, units off", "product ingest, units on", "searchable after (units on; sentence units follow)",
            "search (search_and_gate), idle",
            "search while a document is indexed", "first words from asking, prefix cached",
            "first words from asking, prefix not cached"} <= set(what)
    assert "bare llama.cpp prefill, whole prompt" not in what  # a fake model has no llama.cpp to time
    assert lines[0].startswith("bench speed --corpus tiny") and "load " in lines[0]
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\n## bench speed (issue 41)\n\nold table\n\n## other\n\nkept\n")
    write_performance(table, doc)
    text = doc.read_text()
    assert "old table" not in text and "kept" in text and text.count("## bench speed (issue 41)") == 1
    assert "| first words from asking, prefix cached |" in text


def test_a_table_is_markdown_under_its_header():
    t = SpeedTable("bench speed  2026-12-03  vm; load 1.00 1.00 1.00")
    t.add("search", "p50 4.9 ms", "1k chunks")
    assert t.markdown().splitlines()[2:] == ["| measure | value | note |", "|---|---|---|",
                                             "| search | p50 4.9 ms | 1k chunks |"]
