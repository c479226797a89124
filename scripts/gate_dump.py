"""Dump what the refusal gate sees for every dev query of one corpus (issue 15), for offline gate experiments.

Usage: python scripts/gate_dump.py STORE QUESTIONS OOD OUT.pkl

STORE a store with the corpus ingested (``rag ingest``); QUESTIONS either corpus's
question file (``query_course``/``query_ticket`` or ``query_doc``/``query_user``);
OOD its out-of-domain file. Writes a pickle with the store's chunks and vectors,
and per query its text, wording, kind, needle, query vector and hits.
"""

from __future__ import annotations

import json
import pickle
import sqlite3
import sys
from pathlib import Path

import numpy as np

from rag.store.store import Store


def main(store_dir: str, questions: str, ood: str, out: str) -> None:
    store = Store(store_dir)
    db = sqlite3.connect(Path(store_dir) / "store.sqlite3")
    rows = db.execute("SELECT c.id, c.doc_id, c.text, c.content, d.name FROM chunks c JOIN documents d "
                      "ON d.id = c.doc_id ORDER BY c.id").fetchall()
    vecs = np.frombuffer(b"".join(r[0] for r in db.execute("SELECT vector FROM chunks ORDER BY id")),
                         dtype=np.float32).reshape(len(rows), -1)
    queries = []
    for line in Path(questions).read_text().splitlines():
        q = json.loads(line)
        for w in ("query_course", "query_ticket", "query_doc", "query_user"):
            if w in q:
                queries.append(dict(id=q["id"], wording=w.split("_")[1], text=q[w], kind="in", needle=q["needle"],
                                    doc=q["doc"]))
    for line in Path(ood).read_text().splitlines():
        o = json.loads(line)
        queries.append(dict(id=o["id"], wording="ood", text=o["query"], kind=o["kind"], needle=None, doc=None))
    for q in queries:
        q["qvec"] = store.embedder.encode_query(q["text"])
        q["hits"] = store.search(q["text"], k=store.settings.candidates_k)
    pickle.dump(dict(chunks=rows, vectors=vecs, queries=queries), open(out, "wb"))
    print(f"{len(rows)} chunks, {len(queries)} queries -> {out}")


if __name__ == "__main__":
    main(*sys.argv[1:5])
