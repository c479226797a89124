"""The store's promises checked against its files (issue 12): ``rag status --check``, :meth:`Store.check`.

Never repairs anything: it reads SQLite and the indexes of one generation and lists every broken promise
(:class:`rag.store.records.ConsistencyReport`).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

from rag.store.cache import IndexCache
from rag.store.locks import StoreLocks
from rag.store.records import ConsistencyReport
from rag.store.schema import schema_version
from rag.types import DocStatus


def _id_diff(what: str, rows: set[int], held: set[int]) -> list[str]:
    out = []
    if rows - held:
        out.append(f"{len(rows - held)} chunk row(s) missing from the {what} index, e.g. {sorted(rows - held)[:5]}")
    if held - rows:
        out.append(f"{len(held - rows)} {what} id(s) with no chunk row, e.g. {sorted(held - rows)[:5]}")
    return out


def _document_problems(docs: list, per_doc: dict[str, int], files: set[str]) -> list[str]:
    """What is wrong with each document row ``(id, name, status, chunk_count, has_file)``: an unknown status, a
    chunk count its chunk rows (``per_doc``) do not match, chunks of a document that is not ready, a kept original
    missing from ``files``."""
    problems = []
    for doc_id, name, status, count, has_file in docs:
        n = per_doc.get(doc_id, 0)
        if status not in {s.value for s in DocStatus}:
            problems.append(f"{name} ({doc_id[:8]}): unknown status {status!r}")
        if n != count:
            problems.append(f"{name} ({doc_id[:8]}): chunk_count {count} but {n} chunk row(s)")
        if n and status != DocStatus.READY:
            problems.append(f"{name} ({doc_id[:8]}): {status} but holds {n} chunk row(s)")
        if has_file and doc_id not in files:
            problems.append(f"{name} ({doc_id[:8]}): the kept original files/{doc_id} is missing")
    return problems


def check(conn: sqlite3.Connection, locks: StoreLocks, cache: IndexCache, dim: int, files_dir: Path) -> ConsistencyReport:
    """SQLite (``conn``) against the indexes of ``cache`` (of the same generation, retried when another writer moves
    it meanwhile) and the kept originals in ``files_dir``; ``dim`` the vector dimension every chunk row must have.
    Loads or rebuilds the indexes like a search does; costs one pass over the chunk rows."""
    for _ in range(5):
        idx = cache.current()
        with locks.thread:
            conn.execute("BEGIN")
            try:
                gen = cache.generation()
                docs = conn.execute("SELECT id, name, status, chunk_count, has_file FROM documents").fetchall()
                per_doc = dict(conn.execute("SELECT doc_id, COUNT(*) FROM chunks GROUP BY doc_id").fetchall())
                rows = {r[0] for r in conn.execute("SELECT id FROM chunks")}
                bad_vectors = conn.execute("SELECT COUNT(*) FROM chunks WHERE length(vector) != ?",
                                               (4 * dim,)).fetchone()[0]
                version = schema_version(conn)
            finally:
                conn.execute("COMMIT")
        if gen == idx.generation:
            break
    problems = _id_diff("dense", rows, set(idx.dense.ids().tolist()))
    problems += _id_diff("BM25", rows, set(idx.bm25.ids().tolist()))
    if bad_vectors:
        problems.append(f"{bad_vectors} chunk vector(s) are not {dim} float32 values")
    if gen != idx.generation:
        problems.append(f"the indexes are at generation {idx.generation}, SQLite at {gen} (a writer kept moving it)")
    known = {d[0] for d in docs}
    if set(per_doc) - known:
        problems.append(f"chunk rows of unknown document(s): {sorted(set(per_doc) - known)[:5]}")
    files = {p.name for p in files_dir.iterdir() if p.is_file()}
    problems += _document_problems(docs, per_doc, files)
    present = cache.files_present(idx.generation)
    if not present:
        problems.append(f"the index files of generation {idx.generation} are missing")
    return ConsistencyReport(
        generation=idx.generation, schema_version=version,
        documents=dict(Counter(d[2] for d in docs)), chunks=len(rows), dense_ids=len(idx.dense),
        bm25_ids=len(idx.bm25), index_files=present,
        orphan_files=tuple(sorted(f for f in files if f not in known and len(f) == 64)),
        problems=tuple(problems))
