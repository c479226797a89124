"""rag.evaluation.bench: the benchmarks' header, percentiles, shared-corpus paths, JSONL rows and the corpus store;
and the per-wording tables of ``bench retrieval`` on fakes (no model)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from rag.evaluation.bench import corpora, machine
from rag.evaluation.bench.retrieval import (
    passage_in_sources,
    recall_lines,
    search_ranks,
    sign_test_lines,
    wording_lines,
)
from rag.evaluation.data import EvalInputError, Question, expand_queries, read_jsonl


def test_header_names_date_machine_and_load():
    line = machine.header("bench something")
    assert re.match(r"bench something  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d[+-]\d\d:\d\d  .+ cores usable, Python 3\.", line)
    assert re.search(r"; load (\d+\.\d\d ){2}\d+\.\d\d$", line)


def test_percentiles_interpolate_like_numpy():
    assert machine.percentile([1, 2, 3, 4], 50) == 2.5
    assert machine.percentile([10.0], 95) == 10.0
    assert machine.percentile([0, 100], 95) == pytest.approx(95.0)
    assert math.isnan(machine.percentile([], 50))
    assert machine.p50_p95([1, 2, 3, 4]) == "p50    2.500  p95    3.850"


def test_shared_corpus_paths(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_SHARED", str(tmp_path))
    assert corpora.shared_dir() == tmp_path and corpora.shared_dir("/x") == Path("/x")
    with pytest.raises(EvalInputError, match="shared corpus 'course' not found: no .*dev_questions.jsonl"):
        corpora.corpus("course")
    pdf = tmp_path / "corpus" / "pdf-dev"
    (pdf / "docs").mkdir(parents=True)
    (pdf / "questions.jsonl").write_text('{"id": "d01"}\n\n{"id": "d02"}\n')
    for name in ("b.pdf", "a.pdf", "notes.json"):
        (pdf / "docs" / name).write_bytes(b"")
    c = corpora.corpus("pdf-dev")
    assert (c.docs, c.ood) == (pdf / "docs", pdf / "ood.jsonl")
    assert [p.name for p in c.files()] == ["a.pdf", "b.pdf"]
    assert read_jsonl(c.questions) == [(1, {"id": "d01"}), (3, {"id": "d02"})]
    with pytest.raises(ValueError, match="unknown corpus 'web'; allowed: course, pdf-dev"):
        corpora.corpus("web")


@dataclass
class FakeDoc:
    name: str
    status: str


@dataclass
class FakeResult:
    status: str
    chunk_count: int


class FakeStore:
    def __init__(self):
        self.docs = [FakeDoc("a.md", "ready"), FakeDoc("b.md", "failed")]
        self.ingested = []

    def documents(self):
        return self.docs

    def ingest_path(self, p: Path):
        self.ingested.append(p.name)
        return FakeResult("ready", 3)


def test_ingest_missing_skips_ready_documents_only():
    store, log = FakeStore(), []
    done = corpora.ingest_missing(store, [Path("a.md"), Path("b.md"), Path("c.md")], log.append)
    assert store.ingested == ["b.md", "c.md"]  # a failed document is tried again
    assert [r.chunk_count for r in done] == [3, 3] and log == ["  ingest b.md: ready", "  ingest c.md: ready"]


# --------------------------------------------------------------------------- bench retrieval's figures, on fakes


@dataclass(frozen=True)
class FakeHit:
    chunk_id: int


@dataclass(frozen=True)
class FakeRow:
    content: str


class FakeSearchStore:
    """Finds a needle only in the documents' wording (rank 1), or at rank 3 in ``bm25`` mode for every query."""

    def search(self, text: str, k: int, mode: str):
        i = int(text.split()[-1])
        holder = 0 if (mode == "bm25" or text.startswith("doc")) else None
        at = 2 if mode == "bm25" else 0
        hits = [FakeHit(100 + j) for j in range(k)]
        if holder is not None:
            hits[at] = FakeHit(i)
        return hits

    def chunks(self, ids):
        return [FakeRow(f"chunk <{i}>\nends here") for i in ids]


def test_bench_retrieval_recall_and_sign_tests_by_wording():
    queries = expand_queries([Question(f"q{i}", "d", f"<{i}> ends", f"doc words {i}", f"user words {i}", ("doc", "user"))
                              for i in range(1, 7)])
    store = FakeSearchStore()
    ranks = {m: search_ranks(store, queries, m) for m in ("hybrid", "bm25")}
    assert ranks["hybrid"]["q1/doc"] == 1 and ranks["hybrid"]["q1/user"] is None and ranks["bm25"]["q1/user"] == 3
    lines = recall_lines(queries, ranks)
    assert lines[0].split() == ["mode", "wording", "n", "R@1", "R@4", "R@8", "R@20", "MRR"]
    assert lines[1].split() == ["hybrid", "all", "12", "0.500", "0.500", "0.500", "0.500", "0.500"]
    assert lines[2].split() == ["hybrid", "doc", "6", "1.000", "1.000", "1.000", "1.000", "1.000"]
    assert lines[3].split() == ["hybrid", "user", "6", "0.000", "0.000", "0.000", "0.000", "0.000"]
    assert lines[6].split()[:4] == ["bm25", "user", "6", "0.000"] and lines[6].split()[-1] == "0.333"
    (r4, r20) = sign_test_lines(queries, ranks)
    assert r4.startswith("hybrid vs bm25 R@4 ")
    assert "all +0 / -6, p = 0.0312;  doc +0 / -0, p = 1.0000;  user +0 / -6, p = 0.0312" in r4


@dataclass(frozen=True)
class FakeGate:
    refused: bool
    sources: tuple


def test_passage_in_sources_needs_an_unrefused_gate_and_a_source_holding_the_needle():
    store = FakeSearchStore()
    assert passage_in_sources(store, FakeGate(False, (FakeHit(100), FakeHit(7))), "<7> ends")
    assert not passage_in_sources(store, FakeGate(False, (FakeHit(100),)), "<7> ends")
    assert not passage_in_sources(store, FakeGate(True, (FakeHit(7),)), "<7> ends")  # a refusal shows the model nothing
    assert not passage_in_sources(store, FakeGate(False, ()), "<7> ends")


def test_wording_lines_put_both_wordings_side_by_side_with_the_share_in_sources():
    queries = expand_queries([Question(f"q{i}", "d", f"<{i}> ends", f"doc words {i}", f"user words {i}", ("doc", "user"))
                              for i in range(1, 5)])
    ranks = {q.key: (1 if q.phrasing == "doc" else (3 if q.qid in ("q1", "q2") else None)) for q in queries}
    held = {q.key: q.phrasing == "doc" or q.qid == "q1" for q in queries}
    head, doc, user = wording_lines(queries, ranks, held)
    assert head.split()[:8] == ["wording", "n", "R@1", "R@4", "R@8", "R@20", "MRR", "passage"]
    assert doc.split() == ["doc", "4", "1.000", "1.000", "1.000", "1.000", "1.000", "4", "of", "4", "1.000",
                           "[0.510,", "1.000]"]
    assert user.split()[:7] == ["user", "4", "0.000", "0.500", "0.500", "0.500", "0.167"]
    assert user.split()[7:11] == ["1", "of", "4", "0.250"]


def test_bench_retrieval_offers_every_dev_corpus():
    from rag.cli.bench_retrieval import bench_retrieval_cmd

    choice = next(p for p in bench_retrieval_cmd.params if p.name == "corpus_name").type
    assert list(choice.choices) == ["course", "pdf-dev", "real"]
