"""Issue 26, item 4 through the store and the CLI: a PDF's served copy is per collection and leaves with the
document whichever path removes it: ``Store.delete`` (the app's Delete), ``rag delete``, a replaced version
(``ingest`` of new bytes under the same name, ``--sync``), and the removal of a whole collection."""

from __future__ import annotations

import functools

import pytest
from click.testing import CliRunner

from rag.cli import store as cli_store
from rag.cli.main import main
from rag.collections import Collections
from rag.served import ServedCopies
from rag.settings import get_settings
from rag.store.store import Store


def _pdf(words: str) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), words, fontsize=11)
    return doc.tobytes(garbage=3, deflate=True)


VALVES = _pdf("The relief valve is checked every week by the shift engineer.")
VALVES_V2 = _pdf("The relief valve is checked every day by the shift engineer.")
PUMPS = _pdf("The feed pump bearings are greased every month.")


def _open(path, embedder) -> Store:
    return Store(path, settings=get_settings(store=path), embedder=embedder)


def _publish(store: Store, doc_id: str, static) -> str:
    """What the app does when it links a PDF citation (ui.services.publish_pdf)."""
    return ServedCopies(store.path).publish(doc_id, store.original_path(doc_id), static)


@pytest.fixture
def cli(monkeypatch, hash_embedder):
    monkeypatch.setattr(cli_store, "Store", functools.partial(Store, embedder=hash_embedder))
    return lambda *args: CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_store_delete_withdraws_the_copy_and_leaves_other_collections(tmp_path, hash_embedder):
    static, cols = tmp_path / "static", Collections(tmp_path / "data")
    cols.create("Plant B")
    a, b = _open(cols.path(None), hash_embedder), _open(cols.path("Plant B"), hash_embedder)
    ra, rb = a.ingest_bytes(VALVES, "valves.pdf"), b.ingest_bytes(VALVES, "valves.pdf")
    assert ra.status == rb.status == "ready" and ra.document_id == rb.document_id
    in_a, in_b = _publish(a, ra.document_id, static), _publish(b, rb.document_id, static)
    assert in_a != in_b and (static / in_a).is_file() and (static / in_b).is_file()  # one URL per collection
    assert a.delete(ra.document_id)
    assert not (static / in_a).exists() and (static / in_b).is_file()  # gone from A only
    assert ServedCopies(a.path).record().docs == {}
    a.close()
    b.close()


def test_cli_delete_withdraws_the_copy(tmp_path, hash_embedder, cli):
    static, data = tmp_path / "static", tmp_path / "data"
    s = _open(data, hash_embedder)
    r = s.ingest_bytes(VALVES, "valves.pdf")
    other = s.ingest_bytes(PUMPS, "pumps.pdf")
    served, kept = _publish(s, r.document_id, static), _publish(s, other.document_id, static)
    s.close()
    out = cli("delete", "--store", data, r.document_id[:8])
    assert out.exit_code == 0, out.output
    assert not (static / served).exists() and (static / kept).is_file()


def test_a_replaced_version_is_withdrawn(tmp_path, hash_embedder, cli):
    static, data, folder = tmp_path / "static", tmp_path / "data", tmp_path / "in"
    folder.mkdir()
    (folder / "valves.pdf").write_bytes(VALVES)
    assert cli("ingest", "--store", data, folder).exit_code == 0
    s = _open(data, hash_embedder)
    old = s.documents()[0].id
    served = _publish(s, old, static)
    # the app's upload path: new bytes under the same name replace the version (Store.ingest_bytes)
    r = s.ingest_bytes(VALVES_V2, "valves.pdf")
    assert r.status == "ready" and r.replaced_id == old
    assert not (static / served).exists() and old not in ServedCopies(s.path).record().docs
    # the CLI's: the file changes on disk and is ingested again
    served = _publish(s, r.document_id, static)
    s.close()
    (folder / "valves.pdf").write_bytes(VALVES)
    out = cli("ingest", "--store", data, folder)
    assert out.exit_code == 0 and "replaced" in out.output, out.output
    assert not (static / served).exists()


def test_sync_withdraws_the_copy_of_a_file_gone_from_the_folder(tmp_path, hash_embedder, cli):
    static, data, folder = tmp_path / "static", tmp_path / "data", tmp_path / "in"
    folder.mkdir()
    (folder / "valves.pdf").write_bytes(VALVES)
    (folder / "pumps.pdf").write_bytes(PUMPS)
    assert cli("ingest", "--store", data, folder).exit_code == 0
    s = _open(data, hash_embedder)
    ids = {d.name: d.id for d in s.documents()}
    served = {name: _publish(s, i, static) for name, i in ids.items()}
    s.close()
    (folder / "valves.pdf").unlink()
    out = cli("ingest", "--store", data, "--sync", folder)
    assert out.exit_code == 0 and "removed" in out.output, out.output
    assert not (static / served["valves.pdf"]).exists() and (static / served["pumps.pdf"]).is_file()


def test_removing_a_collection_withdraws_all_its_copies(tmp_path, hash_embedder, cli):
    static, data = tmp_path / "static", tmp_path / "data"
    cols = Collections(data)
    for name in ("Plant B", "Plant C"):
        cols.create(name)
        s = _open(cols.path(name), hash_embedder)
        for pdf, file in ((VALVES, "valves.pdf"), (PUMPS, "pumps.pdf")):
            _publish(s, s.ingest_bytes(pdf, file).document_id, static)
        s.close()
    key_b = ServedCopies(cols.path("Plant B")).record().key
    key_c = ServedCopies(cols.path("Plant C")).record().key
    assert len(list((static / key_b).iterdir())) == 2
    cols.delete("Plant B")  # the app's sidebar
    assert not (static / key_b).exists() and len(list((static / key_c).iterdir())) == 2
    out = cli("collections", "delete", "--store", data, "--yes", "Plant C")
    assert out.exit_code == 0, out.output
    assert not (static / key_c).exists()
