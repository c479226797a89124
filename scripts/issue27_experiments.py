"""Issue 27 experiment harness: unit (sentence) vectors, orphaned sentences, other-language questions.

Builds on ``scripts/retrieval_experiments.py`` (issue 19): the same two dev
corpora (13 course chapters, 8 pdf-dev PDFs), chunked with strategy E as the
product cuts them, both wordings, correct = a returned chunk's ``content``
holds the whole needle. The base is the product's retrieval of today
(stemmed BM25 weighted by coverage, RRF k 60, 20 per leg).

    nice -n 10 .venv/bin/python scripts/issue27_experiments.py [--only NAME ...] [--full] [--misses]
    nice -n 10 .venv/bin/python scripts/issue27_experiments.py --orphans
    nice -n 10 .venv/bin/python scripts/issue27_experiments.py --timing
    nice -n 10 .venv/bin/python scripts/issue27_experiments.py --doc2query [--gen-only] [--threads N]

Vectors come from the evaluation's embedding cache (every distinct text
embedded once, ever). This is a measurement script, not product code.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import retrieval_experiments as rx  # noqa: E402

from rag.index.bm25 import BM25Index  # noqa: E402
from rag.index.dense import DenseIndex  # noqa: E402
from rag.index.fusion import bm25_weight, rrf  # noqa: E402
from rag.text import (  # noqa: E402
    paragraphs,
    sentence_spans,  # noqa: E402
    units,
)

DEPTH = rx.DEPTH


def head_of(ch) -> str:
    """The embedded header of a chunk (``text`` minus ``content``)."""
    return ch.text[: len(ch.text) - len(ch.content)] if ch.text.endswith(ch.content) else ""


def product_bm25(c: rx.Corpus) -> BM25Index:
    return rx._cached(c, "product_bm25", lambda: BM25Index.build([ch.text for ch in c.chunks],
                                                                  np.arange(len(c.chunks)), groups=c.doc_of))


# --------------------------------------------------------------------------- unit vectors


def unit_texts(c: rx.Corpus, variant: str, min_words: int = 3, window: int = 1):
    """(owner chunk index per unit, the unit texts) for every chunk of more than one unit.

    ``variant``: ``bare`` (the unit alone) or ``head`` (the chunk's header + the unit, as the chunk is embedded).
    ``window``: consecutive units per vector (2 = sentence pairs, sliding).
    Units under ``min_words`` words are left out (a lone "Yes." or a page number matches anything).
    """
    owner, texts = [], []
    for i, ch in enumerate(c.chunks):
        us = [(a, b) for a, b in units(ch.content) if len(ch.content[a:b].split()) >= min_words]
        if not us or (len(us) <= 1 and window == 1):
            continue
        spans = us if window == 1 else [(us[j][0], us[min(j + window, len(us)) - 1][1])
                                          for j in range(max(1, len(us) - window + 1))]
        for a, b in spans:
            t = ch.content[a:b]
            texts.append((head_of(ch) + t) if variant == "head" else t)
            owner.append(i)
    return np.asarray(owner, np.int64), texts


def unit_index(c: rx.Corpus, variant: str, min_words: int = 3, window: int = 1):
    key = f"units-{variant}-{min_words}-{window}"

    def make():
        owner, texts = unit_texts(c, variant, min_words, window)
        t0 = time.perf_counter()
        vecs = rx.embed(texts) if texts else np.zeros((0, 384), np.float32)
        c.extra.setdefault("unit_embed_s", {})[key] = time.perf_counter() - t0
        idx = DenseIndex.build(np.arange(len(texts), dtype=np.int64), vecs)
        return owner, idx, vecs, texts
    return rx._cached(c, key, make)


def dense_with_units(c: rx.Corpus, q: rx.Query, variant: str, how: str, min_words: int = 3, window: int = 1,
                     unit_depth: int = 60, alpha: float = 0.5, margin: float = 0.0) -> list[int]:
    """The dense leg with unit vectors: chunks by ``max`` (best of own and units' cosine), ``mix``
    (``alpha`` * own + (1-alpha) * best unit, units absent -> own), best first, ``DEPTH`` long."""
    owner, uidx, _, _ = unit_index(c, variant, min_words, window)
    d_ids, d_sc = c.dense.search(q.vec, DEPTH * 3)
    u_ids, u_sc = uidx.search(q.vec, unit_depth)
    own = {int(i): 1.0 - float(d) for i, d in zip(d_ids, d_sc)}  # search gives cosine distances
    best_unit: dict[int, float] = {}
    for u, d in zip(u_ids, u_sc):
        ch = int(owner[int(u)])
        best_unit[ch] = max(best_unit.get(ch, -1.0), 1.0 - float(d))
    cand = set(own) | set(best_unit)
    missing = [i for i in cand if i not in own]
    if missing:
        sims = c.vecs[missing] @ q.vec
        own.update({i: float(s) for i, s in zip(missing, sims)})
    if how == "max":
        score = {i: max(own[i], best_unit.get(i, -1.0) - margin) for i in cand}
    else:
        score = {i: alpha * own[i] + (1 - alpha) * best_unit.get(i, own[i]) for i in cand}
    return [i for i, _ in sorted(score.items(), key=lambda kv: -kv[1])][:DEPTH]


def unit_list(c: rx.Corpus, q: rx.Query, variant: str, min_words: int = 3, window: int = 1) -> list[int]:
    """Chunks in the order their best unit ranks (first occurrence), ``DEPTH`` long."""
    owner, uidx, _, _ = unit_index(c, variant, min_words, window)
    u_ids, _ = uidx.search(q.vec, DEPTH * 4)
    return list(dict.fromkeys(int(owner[int(u)]) for u in u_ids))[:DEPTH]


def fused(c: rx.Corpus, q: rx.Query, dense_list: list[int], extra: list[list[int]] = (), extra_w=()) -> list[int]:
    bm = product_bm25(c)
    b = bm.search(q.text, DEPTH)[0].tolist()
    w = bm25_weight(q.text, bm, b[0] if b else None)
    lists, weights = [dense_list, b, *extra], [1.0, w, *extra_w]
    return [i for i, _ in rrf(lists, weights=weights)][:20]


def today(c, q):
    return fused(c, q, c.dense.search(q.vec, DEPTH)[0].tolist())


def units_max(variant="head", min_words=3, window=1):
    return lambda c, q: fused(c, q, dense_with_units(c, q, variant, "max", min_words, window))


def units_max_opts(variant="head", unit_depth=60, margin=0.0, chunk_list_w=0.0):
    def fn(c, q):
        d = dense_with_units(c, q, variant, "max", unit_depth=unit_depth, margin=margin)
        extra = [c.dense.search(q.vec, DEPTH)[0].tolist()] if chunk_list_w else []
        return fused(c, q, d, extra, [chunk_list_w] if chunk_list_w else [])
    return fn


def units_mix(variant="head", alpha=0.5, min_words=3, window=1):
    return lambda c, q: fused(c, q, dense_with_units(c, q, variant, "mix", min_words, window, alpha=alpha))


def units_rrf(variant="head", w=1.0, min_words=3, window=1):
    return lambda c, q: fused(c, q, c.dense.search(q.vec, DEPTH)[0].tolist(),
                              [unit_list(c, q, variant, min_words, window)], [w])


def units_only_dense(variant="head", min_words=3):
    return lambda c, q: dense_with_units(c, q, variant, "max", min_words)[:20]


def print_misses(runs) -> None:
    """Each run's queries whose first correct chunk is not in the top 4, as ``corpus:qid:wording=rank``."""
    for run in runs:
        miss = [k for k, r in run.ranks.items() if not r or r > 4]
        print(run.name, "misses@4:", " ".join(f"{k[0]}:{k[1]}:{k[2]}={run.ranks[k]}" for k in sorted(miss)))


CANDIDATES = {
    "today (product)": today,
    "dense only": lambda c, q: c.dense.search(q.vec, 20)[0].tolist(),
    "dense max(chunk, units) only": units_only_dense(),
    "units head, max": units_max("head"),
    "units bare, max": units_max("bare"),
    "units head, mix .5": units_mix("head", 0.5),
    "units bare, mix .5": units_mix("bare", 0.5),
    "units head, RRF 3rd list": units_rrf("head"),
    "units bare, RRF 3rd list": units_rrf("bare"),
    "units head, RRF 3rd list w.5": units_rrf("head", 0.5),
    "units head, max, unit depth 20": units_max_opts(unit_depth=20),
    "units head, max, unit depth 100": units_max_opts(unit_depth=100),
    "units head, max - .01": units_max_opts(margin=0.01),
    "units head, max - .02": units_max_opts(margin=0.02),
    "units head, max - .03": units_max_opts(margin=0.03),
    "units head, max - .05": units_max_opts(margin=0.05),
    "units head, max + chunk list w.5": units_max_opts(chunk_list_w=0.5),
    "units head, max + chunk list w1": units_max_opts(chunk_list_w=1.0),
    "units head min1, max": units_max("head", 1),
    "units head pairs, max": units_max("head", 3, 2),
}


# --------------------------------------------------------------------------- orphaned sentences (item 4)


def orphans(c: rx.Corpus) -> dict:
    """Chunks that begin inside a paragraph an earlier chunk started (a split paragraph's continuation), counted
    where that continuation is one sentence: ``alone`` = the chunk is nothing else, ``packed`` = the sentence was
    packed in front of the next paragraph's text."""
    out = {"split_paragraphs": 0, "continuations": 0, "one_sentence": 0, "alone": 0, "examples": []}
    by_doc: dict[str, list] = {}
    for ch, d in zip(c.chunks, c.doc_of):
        by_doc.setdefault(d, []).append(ch)
    for d, chs in by_doc.items():
        canon = c.extra["docs"][d]
        paras = paragraphs(canon, 0, len(canon))
        starts = [p[0] for p in paras]
        import bisect

        split = set()
        for ch in chs:
            j = bisect.bisect_right(starts, ch.start) - 1
            if j < 0:
                continue
            ps, pe, structured = paras[j]
            if ps < ch.start < pe and not structured:
                split.add(j)
                out["continuations"] += 1
                tail_end = min(pe, ch.end)
                n_sent = len(sentence_spans(canon, ch.start, tail_end))
                if n_sent <= 1:
                    out["one_sentence"] += 1
                    if ch.end <= pe:
                        out["alone"] += 1
                    if len(out["examples"]) < 3:
                        out["examples"].append(canon[ch.start:tail_end][:90])
        out["split_paragraphs"] += len(split)
    return out


# --------------------------------------------------------------------------- chunker variants (item 4)


def load_documents(name: str, docs_dir: Path) -> list:
    """The extracted documents of a corpus (pickled once: PDF extraction is the slow part)."""
    import pickle

    from rag.ingest.extract import extract_path

    pk = rx.CACHE / f"{name}.documents.pkl"
    if pk.exists():
        return pickle.loads(pk.read_bytes())
    docs = [(p.name, extract_path(p)) for p in sorted(docs_dir.iterdir())
            if p.suffix.lower() in (".md", ".pdf", ".txt")]
    pk.write_bytes(pickle.dumps(docs))
    return docs


def with_lead(doc, chunks: list, window: int = 256) -> list:
    """Each chunk that begins inside a paragraph an earlier chunk started carries that paragraph's first sentence
    in its embedded ``text`` (after the header), when it still fits the encoder window; ``content`` unchanged."""
    import bisect
    from dataclasses import replace

    from rag.tokens import count_tokens_batch

    canon = doc.canonical
    paras = paragraphs(canon, 0, len(canon))
    starts = [p[0] for p in paras]
    out, todo = list(chunks), []
    for i, ch in enumerate(chunks):
        j = bisect.bisect_right(starts, ch.start) - 1
        if j >= 0 and paras[j][0] < ch.start < paras[j][1]:
            lead = sentence_spans(canon, paras[j][0], ch.start)
            if lead:
                a, b = lead[0]
                todo.append((i, head_of(ch) + canon[a:b] + " \u2026 " + ch.content))
    counts = count_tokens_batch([t for _, t in todo]) if todo else []
    for (i, t), n in zip(todo, counts):
        if n <= window:
            out[i] = replace(out[i], text=t)
    return out


def load_variant(chunker: str) -> list[rx.Corpus]:
    """Both corpora re-chunked: ``greedy`` (before issue 27), ``balanced`` (item 4), ``lead`` (greedy + the
    paragraph's lead carried), ``balanced+lead``."""
    import json

    from rag.ingest import chunk as chunk_mod

    out = []
    for name, ddir, qfile, fields in (
            ("md", rx.SHARED / "docs", rx.SHARED / "dev_questions.jsonl", ("query_course", "query_ticket")),
            ("pdf", rx.SHARED / "pdf-dev" / "docs", rx.SHARED / "pdf-dev" / "questions.jsonl", ("query_doc", "query_user"))):
        chunk_mod.BALANCED_SPLIT = chunker.startswith("balanced")
        chunk_mod.CARRY_LEAD = chunker.endswith("lead")  # the product's carry_lead (" \u2026\n" after the lead)
        chunks, doc_of, canon = [], [], {}
        for fname, d in load_documents(name, ddir):
            cs = chunk_mod.chunk_document(d, "E")
            if chunker.endswith("lead (space)"):  # the first measurement's format: lead + " \u2026 " + content
                cs = with_lead(d, cs)
            chunks += cs
            doc_of += [fname] * len(cs)
            canon[fname] = d.canonical
        vecs = rx.embed([c.text for c in chunks])
        qs = []
        for line in qfile.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                qs.append(rx.Query(r["id"], "doc", r[fields[0]], r["needle"]))
                qs.append(rx.Query(r["id"], "user", r[fields[1]], r["needle"]))
        for q, v in zip(qs, rx.embed([q.text for q in qs])):
            q.vec = v
        c = rx.Corpus(name, chunks, doc_of, vecs, qs)
        c.dense = DenseIndex.build(np.arange(len(chunks), dtype=np.int64), vecs)
        c.contents = [rx.norm(ch.content) for ch in chunks]
        c.extra["docs"] = canon
        out.append(c)
    chunk_mod.BALANCED_SPLIT = chunk_mod.CARRY_LEAD = True
    return out


# --------------------------------------------------------------------------- runs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--misses", action="store_true")
    ap.add_argument("--orphans", action="store_true")
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--crosslang", action="store_true")
    ap.add_argument("--gen", action="store_true", help="with --crosslang: run the model for the translations")
    ap.add_argument("--doc2query", action="store_true", help="item 3: generate (cached) and measure")
    ap.add_argument("--gen-only", action="store_true", help="with --doc2query: only generate the questions")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--chunkers", nargs="*", help="compare chunkers (greedy balanced lead balanced+lead) with today's retrieval")
    a = ap.parse_args(argv)
    t0 = time.time()
    _, _, corpora = rx.load_all()
    if a.doc2query:
        doc2query(a.threads, a.gen_only)
        print(os.popen("uptime").read().strip())
        return 0
    if a.crosslang:
        crosslang(corpora, a.gen)
        print(os.popen("uptime").read().strip())
        return 0
    if a.chunkers:
        runs, by = [], {}
        for ck in a.chunkers:
            cs = load_variant(ck)
            by[ck] = cs
            print(ck, [(c.name, len(c.chunks), orphans(c)) for c in cs])
            runs.append(rx.run_candidate(ck, today, cs))
            if a.only:
                for n in a.only:
                    runs.append(rx.run_candidate(f"{ck} + {n}", CANDIDATES[n], cs))
        print(rx.summary(runs, runs[0], [c.name for c in corpora]))
        for r in runs[1:]:
            if r.name in a.chunkers:  # each chunker's own runs against it (what the units add to that chunker)
                print(f"\nagainst {r.name}:")
                print(rx.summary([x for x in runs if x.name.startswith(r.name)], r, [c.name for c in corpora]))
        if a.full:
            print(rx.report(runs, runs[0], [c.name for c in corpora]))
        if a.misses:
            print_misses(runs)
        print(os.popen("uptime").read().strip())
        return 0
    print(f"loaded {[(c.name, len(c.chunks), len(c.queries)) for c in corpora]} in {time.time() - t0:.1f} s; "
          f"{os.popen('uptime').read().strip()}", file=sys.stderr)
    if a.orphans:
        for c in corpora:
            print(c.name, len(c.chunks), "chunks", orphans(c))
        return 0
    names = [c.name for c in corpora]
    base = rx.run_candidate("today (product)", today, corpora)
    runs = [base]
    for n, fn in CANDIDATES.items():
        if n == "today (product)" or (a.only and n not in a.only):
            continue
        runs.append(rx.run_candidate(n, fn, corpora))
    print(rx.summary(runs, base, names))
    if a.full:
        print()
        print(rx.report(runs, base, names))
    if a.misses:
        print_misses(runs)
    for c in corpora:
        for k, v in c.extra.items():
            if k.startswith("units-"):
                owner, idx, vecs, texts = v
                print(f"{c.name} {k}: {len(texts)} unit vectors for {len(c.chunks)} chunks "
                      f"({len(texts) / len(c.chunks):.2f} per chunk, {vecs.nbytes / 2**20:.1f} MiB), "
                      f"embed {c.extra.get('unit_embed_s', {}).get(k, 0):.1f} s (cache hits count 0)")
    print("ms p50 per candidate: " + ", ".join(f"{r.name} {statistics.median(r.ms):.1f}" for r in runs))
    print(os.popen("uptime").read().strip())
    return 0



# --------------------------------------------------------------------------- doc2query (item 3)


def _words(q: str) -> set[str]:
    from rag.text import content_words

    return {w.lower() for w in content_words(q)}


_D2Q_EXAMPLE = [_words(x) for x in rx.LLM_PROMPTS["doc2query"][2].splitlines()]


def _echoes_example(q: str) -> bool:
    words = _words(q)
    return any(ex and len(words & ex) >= len(ex) / 2 for ex in _D2Q_EXAMPLE)

#: Characters of a chunk's content the model reads to write its questions (about 200 word-pieces).
D2Q_CHARS = 900


def d2q_questions(c: rx.Corpus, threads: int = 2) -> list[list[str]]:
    """The 0.5B's questions per chunk (generated once, cached by content; resumable)."""
    texts = [ch.content[:D2Q_CHARS] for ch in c.chunks]
    outs = rx.llm_outputs("doc2query", texts, threads=threads)
    qs = []
    for t in texts:
        lines = [re.sub(r"^\s*(?:[-*\u2022]|\d+[.)])\s*", "", x).strip() for x in outs[t]["out"].splitlines()]
        # the one-shot example's own questions, echoed (often reworded) for text the model cannot read (garbled PDF
        # math, another language), are none: half or more of an example question's words
        qs.append([x for x in lines if len(x.split()) >= 3 and not _echoes_example(x)][:3])
    return qs


def d2q_bm25(c: rx.Corpus) -> BM25Index:
    def make():
        qs = d2q_questions(c)
        return BM25Index.build([ch.text + "\n" + "\n".join(q) for ch, q in zip(c.chunks, qs)],
                               np.arange(len(c.chunks)), groups=c.doc_of)
    return rx._cached(c, "d2q_bm25", make)


def d2q_index(c: rx.Corpus):
    def make():
        owner, texts = [], []
        for i, q in enumerate(d2q_questions(c)):
            owner += [i] * len(q)
            texts += q
        vecs = rx.embed(texts) if texts else np.zeros((0, 384), np.float32)
        return np.asarray(owner, np.int64), DenseIndex.build(np.arange(len(texts), dtype=np.int64), vecs), len(texts)
    return rx._cached(c, "d2q_dense", make)


def d2q_candidate(bm25: bool, dense: bool, margin: float = 0.02, unit_margin: float = 0.02):
    """The chosen pipeline (units max - .02) with the generated questions in the BM25 text and/or as extra vectors
    (a chunk's dense score: the best of its own, its units' less ``unit_margin`` and its questions' less ``margin``)."""
    def fn(c, q):
        d = dense_with_units(c, q, "head", "max", margin=unit_margin)
        if dense:
            owner, qidx, _ = d2q_index(c)
            ids, dist = qidx.search(q.vec, 60)
            scores = dense_with_units_scores(c, q, unit_margin)
            for qi, dd in zip(ids, dist):
                ch = int(owner[int(qi)])
                scores[ch] = max(scores.get(ch, float(c.vecs[ch] @ q.vec)), 1.0 - float(dd) - margin)
            d = [i for i, _ in sorted(scores.items(), key=lambda kv: -kv[1])][:DEPTH]
        bm = d2q_bm25(c) if bm25 else product_bm25(c)
        b = bm.search(q.text, DEPTH)[0].tolist()
        w = bm25_weight(q.text, bm, b[0] if b else None)
        return [i for i, _ in rrf([d, b], weights=[1.0, w])][:20]
    return fn


def dense_with_units_scores(c: rx.Corpus, q: rx.Query, margin: float) -> dict[int, float]:
    """``{chunk: max(own cosine, best unit - margin)}`` over the candidates of :func:`dense_with_units`."""
    owner, uidx, _, _ = unit_index(c, "head", 3, 1)
    d_ids, d_sc = c.dense.search(q.vec, DEPTH * 3)
    u_ids, u_sc = uidx.search(q.vec, 60)
    own = {int(i): 1.0 - float(d) for i, d in zip(d_ids, d_sc)}
    best: dict[int, float] = {}
    for u, d in zip(u_ids, u_sc):
        ch = int(owner[int(u)])
        best[ch] = max(best.get(ch, -1.0), 1.0 - float(d))
    for i in set(best) - set(own):
        own[i] = float(c.vecs[i] @ q.vec)
    return {i: max(own[i], best.get(i, -1.0) - margin) for i in set(own) | set(best)}


def doc2query(threads: int, gen_only: bool) -> None:
    """Item 3 measured: the chosen chunks (even splits + lead), every chunk's questions from the 0.5B."""
    corpora = load_variant("balanced+lead")
    for c in corpora:
        t0 = time.time()
        qs = d2q_questions(c, threads)
        outs = rx.llm_outputs("doc2query", [ch.content[:D2Q_CHARS] for ch in c.chunks], threads=threads)
        ms = [outs[ch.content[:D2Q_CHARS]]["ms"] for ch in c.chunks]
        pt = [outs[ch.content[:D2Q_CHARS]]["prompt_tokens"] for ch in c.chunks]
        ct = [outs[ch.content[:D2Q_CHARS]]["completion_tokens"] for ch in c.chunks]
        print(f"{c.name}: {len(c.chunks)} chunks, {sum(map(len, qs))} questions; ms per chunk p50 "
              f"{statistics.median(ms):.0f} (as generated, load varies), prompt tokens p50 {statistics.median(pt)}, "
              f"written p50 {statistics.median(ct)}; {time.time() - t0:.0f} s this run")
        for ch, q in list(zip(c.chunks, qs))[:: max(1, len(qs) // 4)][:4]:
            print(f"   {ch.content[:70]!r} -> {q}")
    if gen_only:
        return
    names = [c.name for c in corpora]
    base = rx.run_candidate("chosen (units max - .02)", units_max_opts(margin=0.02), corpora)
    runs = [base,
            rx.run_candidate("+ doc2query in BM25", d2q_candidate(True, False), corpora),
            rx.run_candidate("+ doc2query vectors - .02", d2q_candidate(False, True), corpora),
            rx.run_candidate("+ doc2query vectors - .05", d2q_candidate(False, True, 0.05), corpora),
            rx.run_candidate("+ doc2query BM25 and vectors - .02", d2q_candidate(True, True), corpora)]
    print(rx.summary(runs, base, names))
    print()
    print(rx.report(runs, base, names))
    print_misses(runs)


# --------------------------------------------------------------------------- other-language questions (item 5)

rx.LLM_PROMPTS["translate"] = (
    "Translate the user's question into English. Keep names, code identifiers, abbreviations and numbers exactly "
    "as written. Reply with the English question only.",
    "Wie lange gilt die Garantie für das Gerät, und wer bezahlt die Reparatur?",
    "How long is the warranty for the device, and who pays for the repair?",
    48,
)


def crosslang(corpora, gen: bool) -> None:
    """German and French versions of course questions (tests/evaluation/fixtures/crosslang_course.jsonl) over the
    English course chapters: today's retrieval, and with the 0.5B model's English translation searched too."""
    import json

    md = next(c for c in corpora if c.name == "md")
    needles = {q.qid: q.needle for q in md.queries}
    rows = [json.loads(x) for x in (HERE.parent / "tests/evaluation/fixtures/crosslang_course.jsonl").read_text().splitlines()
            if x.strip()]
    if not gen:  # only the questions whose translation is cached (the model took 40-180 s each at load 17-22)
        import json as _json

        path = rx.CACHE / "llm-translate-qwen2.5-coder-0.5b-instruct-q4_k_m.json"
        done = _json.loads(path.read_text()) if path.exists() else {}
        rows = [r for r in rows if r["query"] in done]
    texts = [r["query"] for r in rows]
    outs = rx.llm_outputs("translate", texts) if texts else {}
    vecs = rx.embed(texts)
    tv = rx.embed([outs[t]["out"] for t in texts]) if outs else None
    bm = product_bm25(md)
    res = {"today": [], "translation": [], "both": [], "translation + units": []}
    for i, r in enumerate(rows):
        q = rx.Query(r["id"], r["lang"], r["query"], needles[r["id"]], vecs[i])
        res["today"].append(md.rank(today(md, q), q.needle))
        if tv is not None:
            tq = rx.Query(r["id"], r["lang"], outs[r["query"]]["out"], q.needle, tv[i])
            res["translation"].append(md.rank(today(md, tq), q.needle))
            res["translation + units"].append(md.rank(units_max("head")(md, tq), q.needle))
            d0 = md.dense.search(q.vec, DEPTH)[0].tolist()
            b0 = bm.search(q.text, DEPTH)[0].tolist()
            d1 = md.dense.search(tq.vec, DEPTH)[0].tolist()
            b1 = bm.search(tq.text, DEPTH)[0].tolist()
            res["both"].append(md.rank([c for c, _ in rrf([d1, b1, d0, b0])][:20], q.needle))
    for name, ranks in res.items():
        if ranks:
            m = rx.cell(ranks)
            t4 = rx.sign_test(rx.hits(ranks, 4), rx.hits(res["today"], 4))
            t20 = rx.sign_test(rx.hits(ranks, 20), rx.hits(res["today"], 20))
            print(f"crosslang {name}: n={len(ranks)} R@1 {m['R@1']:.3f} R@4 {m['R@4']:.3f} R@20 {m['R@20']:.3f} "
                  f"MRR {m['MRR']:.3f}; vs today R@4 +{t4.wins}/-{t4.losses} p={t4.p:.4f}, "
                  f"R@20 +{t20.wins}/-{t20.losses} p={t20.p:.4f}")
    if outs:
        ms = [outs[t]["ms"] for t in texts]
        print(f"translation ms p50 {statistics.median(ms):.0f}, max {max(ms):.0f}; prompt tokens p50 "
              f"{statistics.median(outs[t]['prompt_tokens'] for t in texts)}, generated p50 "
              f"{statistics.median(outs[t]['completion_tokens'] for t in texts)}")
        for t in texts[:6]:
            print(f"  {t!r} -> {outs[t]['out']!r}")


if __name__ == "__main__":
    raise SystemExit(main())
