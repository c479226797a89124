"""Issue 27, item 1 in the store: unit vectors written with their chunks, gone with them, searched beside them."""

from __future__ import annotations

import numpy as np

from rag.settings import get_settings
from rag.store.store import Store

# One paragraph of four sentences, each about something else: the chunk's vector is the mean of all four.
DOC = (b"# Office guide\n\n## Facilities\n\n"
       b"The cafeteria serves lunch from noon until two every weekday. "
       b"Visitors sign the register at the front desk before entering. "
       b"Bicycles may be left in the locked shed behind building C overnight. "
       b"The printers on every floor need a badge to release a job.\n\n"
       b"## Parking\n\nCar parking permits are renewed every January at reception.\n")


def _units(s: Store) -> list[tuple]:
    with s._locks.thread:
        return s._db.execute('SELECT u.chunk_id, u.start, u."end" FROM chunk_units u ORDER BY u.id').fetchall()


def test_units_are_written_with_their_chunk_as_canonical_spans(tmp_path, hash_embedder):
    s = Store(tmp_path / "s", embedder=hash_embedder)
    r = s.ingest_bytes(DOC, "guide.md")
    rows = _units(s)
    assert len(rows) == 4  # the four sentences of the one multi-unit chunk; the parking chunk has one unit
    canon = s.canonical_text(r.document_id)
    assert canon[rows[2][1]:rows[2][2]] == "Bicycles may be left in the locked shed behind building C overnight."
    [chunk_id] = {c for c, _, _ in rows}
    ch = s.chunk(chunk_id)
    assert all(ch.start <= a < b <= ch.end for _, a, b in rows)
    ui = s.index_cache.units()
    assert len(ui) == 4
    hits = s.search("where can I leave my bicycle overnight", k=3)
    assert hits and hits[0].chunk_id == chunk_id
    assert abs(hits[0].cosine_distance - float(s.index_cache.current().dense.distances(
        hash_embedder.encode_query("where can I leave my bicycle overnight"), [chunk_id])[0])) < 1e-6
    s.close()


def test_units_leave_with_their_document_and_a_new_generation_rereads_them(tmp_path, hash_embedder):
    s = Store(tmp_path / "s", embedder=hash_embedder)
    r = s.ingest_bytes(DOC, "guide.md")
    assert len(s.index_cache.units()) == 4
    assert s.delete(r.document_id)
    assert _units(s) == [] and len(s.index_cache.units()) == 0
    assert s.check().ok
    s.close()


def test_setting_off_writes_and_reads_no_units(tmp_path, hash_embedder):
    s = Store(tmp_path / "s", settings=get_settings(unit_vectors=False), embedder=hash_embedder)
    s.ingest_bytes(DOC, "guide.md")
    assert _units(s) == []
    assert s.search("bicycle shed", k=2)
    s.close()


def test_a_store_reopened_reads_its_units_from_sqlite(tmp_path, hash_embedder):
    s = Store(tmp_path / "s", embedder=hash_embedder)
    s.ingest_bytes(DOC, "guide.md")
    s.close()
    s2 = Store(tmp_path / "s", embedder=hash_embedder)
    ui = s2.index_cache.units()
    assert len(ui) == 4
    q = hash_embedder.encode_query("badge printers release job")
    best = ui.best(q)
    assert max(best.values()) > 0.5 and np.isfinite(list(best.values())).all()
    s2.close()
