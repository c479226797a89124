"""Issue 27, items 2 and 3: what a model re-rank and doc2query would cost on this machine (prompt sizes and timings).

Item 2 (FIRST-style listwise re-rank: one prompt holding the question and the top candidates, each as its best
two units, read at the first generated token) and item 3 (doc2query: the model writes questions for a chunk at
indexing time). This script builds the prompts from a real store and times the 0.5B GGUF on 2 threads; it is not
the re-ranker itself (``rag/answer/listwise.py`` of issue 24, removed in issue 36; see a0f7dcb).

    PYTHONPATH=. nice -n 10 .venv/bin/python scripts/issue27_costs.py STORE QUESTIONS [--n 8] [--time 3] [--d2q 4]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

from rag.settings import DEFAULT_MODEL_FILE
from rag.store.store import Store

ROOT = Path(__file__).resolve().parent.parent
LISTWISE = ("Rank the passages by how well they answer the question. Reply with the number of the best passage only.")
D2Q = ("Write three short questions a user might ask that this passage answers, in plain everyday words, one per "
       "line.")


def best_units(store: Store, chunk_id: int, q_vec: np.ndarray, n: int = 2) -> str:
    """The chunk's ``n`` units closest to the question, in document order (the whole content when it has none)."""
    ch = store.chunk(chunk_id)
    with store._locks.thread:
        rows = store._db.execute('SELECT start, "end", vector FROM chunk_units WHERE chunk_id=? ORDER BY start',
                                 (chunk_id,)).fetchall()
    if not rows:
        return ch.content
    sims = [float(np.frombuffer(r[2], np.float32) @ q_vec) for r in rows]
    keep = sorted(np.argsort(sims)[::-1][:n].tolist())
    return " ".join(ch.content[rows[i][0] - ch.start:rows[i][1] - ch.start] for i in keep)


def ingest_cost(store_dir: str, sample: int = 200) -> int:
    """What unit vectors add to indexing: texts and word-pieces embedded, and embedding time for a sample of
    chunk texts and unit texts, alternated batch by batch so both see the same machine load."""
    from rag.ingest.chunk import unit_text
    from rag.tokens import count_tokens_batch
    from rag.types import Chunk

    store = Store(store_dir)
    with store._locks.thread:
        chunks = store._db.execute('SELECT id, text, content, start, "end" FROM chunks ORDER BY id').fetchall()
        units = store._db.execute('SELECT chunk_id, start, "end" FROM chunk_units ORDER BY id').fetchall()
    by_id = {r[0]: Chunk(doc_id="", index=0, text=r[1], content=r[2], section=(), start=r[3], end=r[4], page=None,
                         page_end=None) for r in chunks}
    c_texts = [r[1] for r in chunks]
    u_texts = [unit_text(by_id[c], a, b) for c, a, b in units]
    c_wp, u_wp = sum(count_tokens_batch(c_texts)), sum(count_tokens_batch(u_texts))
    print(f"{len(c_texts)} chunks ({c_wp} word-pieces), {len(u_texts)} units ({u_wp} word-pieces): "
          f"{len(u_texts) / len(c_texts):.2f} units per chunk, word-pieces x{(c_wp + u_wp) / c_wp:.2f}")
    emb = store.embedder
    rng = np.random.default_rng(0)
    cs = [c_texts[i] for i in rng.choice(len(c_texts), min(sample, len(c_texts)), replace=False)]
    us = [u_texts[i] for i in rng.choice(len(u_texts), min(sample, len(u_texts)), replace=False)]
    emb.encode(cs[:4])
    tc = tu = 0.0
    for i in range(0, sample, 20):
        t0 = time.perf_counter()
        emb.encode(cs[i:i + 20])
        tc += time.perf_counter() - t0
        t0 = time.perf_counter()
        emb.encode(us[i:i + 20])
        tu += time.perf_counter() - t0
    per_c, per_u = tc / len(cs) * 1000, tu / len(us) * 1000
    extra = per_u * len(u_texts) / (per_c * len(c_texts))
    print(f"embedding ({emb.name}): {per_c:.1f} ms per chunk text, {per_u:.1f} ms per unit text; the units add "
          f"{extra:.0%} to the chunks' embedding time; {os.popen('uptime').read().strip()}")
    return 0


def search_timing(store_dir: str, questions: str, repeat: int = 3) -> int:
    """p50 / p95 of ``Store.search`` (k 20, the query embedding cached, so the search alone) with and without units."""
    from rag.settings import get_settings

    rows = [json.loads(x) for x in Path(questions).read_text().splitlines() if x.strip()]
    qs = [r[f] for r in rows for f in ("query_course", "query_ticket", "query_doc", "query_user") if f in r]
    for on in (False, True, False, True):
        store = Store(store_dir, settings=get_settings(unit_vectors=on))
        cache = {q: store.embedder.encode_query(q) for q in qs}
        store.embedder.encode_query = cache.__getitem__
        store.search(qs[0], k=20)  # load the indexes (and the units) first
        ms = []
        for _ in range(repeat):
            for q in qs:
                t0 = time.perf_counter()
                store.search(q, k=20)
                ms.append((time.perf_counter() - t0) * 1000)
        print(f"units {'on ' if on else 'off'}: search p50 {np.percentile(ms, 50):.1f} ms, p95 {np.percentile(ms, 95):.1f} ms "
              f"over {len(ms)}; {os.popen('uptime').read().strip()}")
        store.close()
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("questions")
    ap.add_argument("--n", type=int, default=8, help="candidates in the listwise prompt")
    ap.add_argument("--time", type=int, default=3, help="prompts to time (prefill to the first token)")
    ap.add_argument("--d2q", type=int, default=4, help="chunks to run doc2query on (timed)")
    ap.add_argument("--search-timing", action="store_true", help="only time Store.search with and without units")
    ap.add_argument("--ingest-cost", action="store_true", help="only: word-pieces and embedding time, chunks vs units")
    a = ap.parse_args()
    if a.ingest_cost:
        return ingest_cost(a.store)
    if a.search_timing:
        return search_timing(a.store, a.questions)
    from llama_cpp import Llama

    llm = Llama(model_path=str(ROOT / "models" / DEFAULT_MODEL_FILE), n_ctx=2048, n_threads=2, n_threads_batch=2,
                verbose=False)
    store = Store(a.store)
    rows = [json.loads(x) for x in Path(a.questions).read_text().splitlines() if x.strip()]
    field = "query_ticket" if "query_ticket" in rows[0] else "query_user"
    prompts = []
    for r in rows:
        q = r[field]
        qv = store.embedder.encode_query(q)
        hits = store.search(q, k=a.n)
        items = "\n".join(f"[{i}] {best_units(store, h.chunk_id, qv)}" for i, h in enumerate(hits, 1))
        msgs = [{"role": "system", "content": LISTWISE},
                {"role": "user", "content": f"Question: {q}\n\nPassages:\n{items}\n\nBest passage number:"}]
        prompts.append(msgs)
    # the chat template adds about 20 tokens (role markers) to the two messages' own
    toks = [len(llm.tokenize((m[0]["content"] + m[1]["content"]).encode())) + 20 for m in prompts]
    print(f"listwise prompt, {a.n} candidates x best 2 units: tokens p50 {statistics.median(toks):.0f}, "
          f"max {max(toks)} over {len(toks)} user questions")
    ms = []
    for m in prompts[: a.time]:
        llm.reset()
        t0 = time.perf_counter()
        llm.create_chat_completion(m, max_tokens=1, temperature=0.0)
        ms.append((time.perf_counter() - t0) * 1000)
    print(f"first token (prefill + 1 token), {len(ms)} prompts: {', '.join(f'{x:.0f}' for x in ms)} ms; "
          f"{os.popen('uptime').read().strip()}")
    d2q = []
    for h in store.search(rows[0][field], k=a.d2q):
        ch = store.chunk(h.chunk_id)
        llm.reset()
        t0 = time.perf_counter()
        out = llm.create_chat_completion([{"role": "system", "content": D2Q}, {"role": "user", "content": ch.content}],
                                         max_tokens=80, temperature=0.0, top_k=1)
        d2q.append(((time.perf_counter() - t0) * 1000, out["usage"]["prompt_tokens"], out["usage"]["completion_tokens"],
                    out["choices"][0]["message"]["content"].strip()))
    for ms_, pt, ct, text in d2q:
        print(f"doc2query: {ms_:.0f} ms, prompt {pt} tokens, generated {ct}: {text[:160]!r}")
    print(os.popen("uptime").read().strip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
