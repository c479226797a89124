"""Issue 40, candidate (c): doc2query on today's stores of all three corpora (measurement code, not product code).

Issue 27 measured doc2query on the course chapters and pdf-dev only, on its own harness, before the real corpus and
today's ingest. This runs the same prompt (the 0.5B writes, for each chunk's first :data:`D2Q_CHARS` characters of
content, three questions "a person who has not read this passage might type into a search box", one worked
example, greedy, at most 72 tokens; the example's own questions and questions under 3 words dropped) over the
chunks of the stores ``bench retrieval --store PREFIX-<corpus>`` left, then measures, through the product's search
and gate (``scripts/issue40_experiments.py``'s :func:`retrieve_variant`), two candidates against the shipped
pipeline, both wordings, with sign tests:

* ``d2q vectors`` -- each question embedded and added to the chunk's unit vectors (a chunk's dense score is the best
  of its own cosine and its units' and questions' less the units' margin, issue 27's "one vector per question");
* ``d2q bm25`` -- the questions appended to the chunk's BM25 text.

No parameter is fitted (the margin is the units' shipped one), so every corpus is held out.

    PYTHONPATH=. nice -n 10 .venv/bin/python scripts/issue40_doc2query.py --gen real course pdf-dev   # cached
    PYTHONPATH=. .venv/bin/python scripts/issue40_doc2query.py real course pdf-dev
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import issue40_experiments as x40  # noqa: E402
import retrieval_experiments as rx  # noqa: E402

from rag.evaluation.bench.corpora import corpus as shared_corpus  # noqa: E402
from rag.evaluation.data import expand_queries, load_questions  # noqa: E402
from rag.index.bm25 import BM25Index  # noqa: E402
from rag.index.units import UnitIndex  # noqa: E402
from rag.settings import get_settings  # noqa: E402
from rag.store.store import Store  # noqa: E402
from rag.text import content_words  # noqa: E402

#: Characters of a chunk's content the model reads to write its questions (about 200 word-pieces).
D2Q_CHARS = 900
_EXAMPLE = [{w.lower() for w in content_words(q)} for q in rx.LLM_PROMPTS["doc2query"][2].splitlines()]
#: The prompt is issue 27's (``retrieval_experiments.LLM_PROMPTS["doc2query"]``), unchanged so the figures compare.
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d{1,3}[.)])\s*")


def questions_of(out: str) -> list[str]:
    """The model's lines as questions: bullets stripped, under 3 words or echoing the example (half its words) dropped."""
    keep = []
    for line in out.splitlines():
        q = _BULLET.sub("", line).strip()
        words = {w.lower() for w in content_words(q)}
        if len(q.split()) >= 3 and not any(ex and len(words & ex) >= len(ex) / 2 for ex in _EXAMPLE):
            keep.append(q)
    return keep[:3]


def store_of(prefix: str, cname: str) -> Store:
    path = f"{prefix}-{cname}"
    return Store(path, settings=get_settings(store=path))


#: The question writers: the default 0.5B, and the 1.5B the product offers (about three times its time per chunk).
WRITERS = {"0.5b": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "1.5b": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"}


def generate(store: Store, threads: int, writer: str = "0.5b") -> dict[str, dict]:
    """The ``writer`` model's output per chunk content (cached by ``rx.llm_outputs`` per model, resumable)."""
    table = store.index_cache.rows(vectors=False, contents=True)
    return rx.llm_outputs("doc2query", [c[:D2Q_CHARS] for c in table.contents], model_file=WRITERS[writer],
                          threads=threads)


def with_questions(store: Store, outs: dict[str, dict]) -> tuple[UnitIndex, BM25Index, int, list[float]]:
    """The store's unit vectors plus one per question, its BM25 leg over text + questions, the question count and the
    generation ms per chunk."""
    cache = store.index_cache
    table = cache.rows(vectors=False, contents=True)
    qs = [questions_of(outs[c[:D2Q_CHARS]]["out"]) for c in table.contents]
    owners = [cid for cid, q in zip(table.ids, qs) for _ in q]
    texts = [x for q in qs for x in q]
    vecs = store.embedder.encode(texts) if texts else np.zeros((0, store.embedder.dim), np.float32)
    units = cache.units()
    rows = cache.conn.execute("SELECT id, chunk_id, vector FROM chunk_units ORDER BY id").fetchall()
    dim = units.dim
    base = np.frombuffer(b"".join(r[2] for r in rows), np.float32).reshape(len(rows), dim)
    start = (max(r[0] for r in rows) if rows else 0) + 1
    combined = UnitIndex([r[0] for r in rows] + list(range(start, start + len(texts))),
                         [r[1] for r in rows] + owners, np.vstack([base, np.asarray(vecs, np.float32)]), dim=dim)
    old = cache.current().bm25
    bm = BM25Index.build([t + "\n" + "\n".join(q) for t, q in zip(table.texts, qs)], table.ids, k1=old.k1, b=old.b,
                         groups=table.doc_ids, languages=table.languages, identifiers=old.analyzer.identifiers)
    ms = [outs[c[:D2Q_CHARS]]["ms"] for c in table.contents]
    return combined, bm, len(texts), ms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", default="/tmp/i40/store")
    ap.add_argument("--gen", action="store_true", help="only generate the questions (cached)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--writer", choices=sorted(WRITERS), default="0.5b", help="the model that writes the questions")
    ap.add_argument("corpora", nargs="+")
    args = ap.parse_args()
    for cname in args.corpora:
        store = store_of(args.prefix, cname)
        outs = generate(store, args.threads, args.writer)
        if args.gen:
            store.close()
            continue
        units, bm, n_q, ms = with_questions(store, outs)
        queries = expand_queries(load_questions(shared_corpus(cname).questions))
        runner = x40.Runner(store)
        shipped_bm = store.index_cache.current().bm25
        res = {}
        for name, spec in (("shipped", {}), ("d2q vectors", {"units_override": units}), ("d2q bm25", {"bm25": bm}),
                           ("d2q both", {"units_override": units, "bm25": bm})):
            store.index_cache.current().bm25 = spec.get("bm25", shipped_bm)
            res[name] = x40.measure(store, queries, {k: v for k, v in spec.items() if k != "bm25"}, runner)
        store.index_cache.current().bm25 = shipped_bm
        print(f"\n## {cname}, questions by the {args.writer} ({store.chunk_count} chunks, {n_q} questions kept, {n_q / max(1, store.chunk_count):.2f} "
              f"per chunk; generation {statistics.median(ms):.0f} ms p50 per chunk)\n")
        print("| candidate | wording | R@1 | R@4 | R@20 | MRR | in sources | R@4 vs shipped | R@20 vs shipped "
              "| sources vs shipped | search_and_gate ms p50 |")
        print("|---|---|---:|---:|---:|---:|---:|---|---|---|---:|")
        x40.print_table(res, queries, "shipped", extra=lambda name, rest, qs: f"| {rest[2]:.0f} ")
        sample = [(c[:80], questions_of(outs[c[:D2Q_CHARS]]["out"]))
                  for c in store.index_cache.rows(vectors=False, contents=True).contents[:: max(1, store.chunk_count // 5)]]
        print("\nsample:", json.dumps(sample, ensure_ascii=False, indent=1))
        store.close()


if __name__ == "__main__":
    main()
