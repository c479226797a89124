"""Issue 40: BM25 with identifier terms (:func:`rag.index.analyzer.identifier_terms`) against BM25 without them.

For each corpus's store (``--prefix``-<corpus>, built by ``bench retrieval --store``), rebuilds the BM25 leg from the
store's chunk texts three ways and ranks both wordings through the product's search and gate:
``plain`` (the index before identifiers), ``identifiers, full coverage`` (identifier terms in the coverage weight too)
and ``identifiers`` (what ships: the coverage weight reads the plain terms). Prints R@1/4/20, MRR, the passage in the
model's sources, sign tests against ``plain``, and every question whose rank moved.

    PYTHONPATH=. python scripts/issue40_identifiers.py --prefix /tmp/i40/store course pdf-dev real
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.answer.pipeline import search_and_gate  # noqa: E402
from rag.evaluation.bench.corpora import corpus as shared_corpus  # noqa: E402
from rag.evaluation.bench.retrieval import passage_in_sources, search_ranks  # noqa: E402
from rag.evaluation.data import by_wording, expand_queries, load_questions  # noqa: E402
from rag.evaluation.metrics import hits_at, sign_test, summarize_ranks  # noqa: E402
from rag.index.bm25 import BM25Index  # noqa: E402
from rag.settings import get_settings  # noqa: E402
from rag.store.store import Store  # noqa: E402


def full_coverage(idx: BM25Index) -> BM25Index:
    """``idx`` whose coverage weight reads the identifier terms too (the variant not shipped)."""
    plain_terms = idx.analyzer.query_terms

    def with_identifiers(query: str, *, identifiers: bool = True) -> list[str]:
        return plain_terms(query, identifiers=True)

    analyzer = dataclasses.replace(idx.analyzer)
    object.__setattr__(analyzer, "query_terms", types.MethodType(lambda self, q, **kw: with_identifiers(q), analyzer))
    idx.analyzer = analyzer
    return idx


def build(table, old: BM25Index, identifiers: bool) -> BM25Index:
    """The BM25 leg over ``table``'s chunk texts (a :class:`rag.store.backend.ChunkTable`), ``old``'s k1 and b."""
    return BM25Index.build(table.texts, table.ids, k1=old.k1, b=old.b, groups=table.doc_ids,
                           languages=table.languages, identifiers=identifiers)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", default="/tmp/i40/store")
    ap.add_argument("corpora", nargs="+")
    args = ap.parse_args()
    for cname in args.corpora:
        path = f"{args.prefix}-{cname}"
        store = Store(path, settings=get_settings(store=path))
        queries = expand_queries(load_questions(shared_corpus(cname).questions))
        table = store.index_cache.rows(vectors=False)
        idx = store.index_cache.current()
        old = idx.bm25

        legs = {"plain": build(table, old, False), "identifiers, full coverage": full_coverage(build(table, old, True)),
                "identifiers": build(table, old, True)}
        res = {}
        for name, bm in legs.items():
            idx.bm25 = bm
            ranks = search_ranks(store, queries, "hybrid")
            held = {q.key: passage_in_sources(store, search_and_gate(store, q.text), q.needle) for q in queries}
            res[name] = (ranks, held)
        idx.bm25 = old
        print(f"\n## {cname} ({store.chunk_count} chunks)\n")
        print("| BM25 | wording | R@1 | R@4 | R@20 | MRR | in sources | R@4 vs plain | R@20 vs plain | sources vs plain |")
        print("|---|---|---:|---:|---:|---:|---:|---|---|---|")
        base_r, base_h = res["plain"]
        for g, qs in by_wording(queries).items():
            for name, (ranks, held) in res.items():
                sm = summarize_ranks([ranks[q.key] for q in qs], str(g))
                r4 = sign_test(hits_at([ranks[q.key] for q in qs], 4), hits_at([base_r[q.key] for q in qs], 4))
                r20 = sign_test(hits_at([ranks[q.key] for q in qs], 20), hits_at([base_r[q.key] for q in qs], 20))
                src = sign_test([held[q.key] for q in qs], [base_h[q.key] for q in qs])
                print(f"| {name} | {g} | {sm.recall[1].value:.3f} | {sm.recall[4].value:.3f} | {sm.recall[20].value:.3f} "
                      f"| {sm.mrr:.3f} | {sum(held[q.key] for q in qs)}/{len(qs)} | {r4} | {r20} | {src} |")
        for q in queries:
            moved = [res[n][0][q.key] for n in res]
            if len(set(moved)) > 1:
                print(f"- {q.key} ({q.wording}): ranks {' / '.join(str(r) for r in moved)} - {q.text[:90]}")
        store.close()


if __name__ == "__main__":
    main()
