"""Issue 26, item 1 through the store and the CLI: a file over a limit fails its own document, with the limit and
the figure as its reason, shown by ``ingest`` and ``status``; a file too large on disk is never read; the other
documents are untouched."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import hostile_files as hf
import pytest
import samples
from click.testing import CliRunner

from rag.cli import store as cli_store
from rag.cli.main import main
from rag.settings import get_settings
from rag.store.store import Store
from rag.types import DocStatus

GiB = 1024 ** 3


@pytest.fixture
def store(tmp_path, hash_embedder):
    s = Store(tmp_path / "store", settings=get_settings(store=tmp_path / "store"), embedder=hash_embedder)
    yield s
    s.close()


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as fh:
        fh.truncate(size)
    return path


def test_a_file_too_large_on_disk_fails_without_being_read(store, tmp_path, monkeypatch):
    ok = store.ingest_bytes(b"# Valves\n\nThe valve is checked weekly.", "valves.md")
    big = _sparse(tmp_path / "huge.txt", 3 * GiB)
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail(f"read {self} into memory"))
    monkeypatch.setattr(hashlib, "file_digest", lambda *a, **k: pytest.fail("hashed the whole file to refuse it"))
    r = store.ingest_path(big)
    assert store.ingest_path(big).document_id == r.document_id  # the same file, refused again: the same row
    assert r.status == "failed"
    assert r.reason == "the file is 3 GB, over the limit of 50 MB (setting max_upload_mb)"
    doc = store.get_document(r.document_id)
    assert doc.status == DocStatus.FAILED and doc.reason == r.reason and not doc.has_file
    assert store.get_document(ok.document_id).status == DocStatus.READY


def test_a_bomb_fails_its_own_document_with_the_limit_as_reason(store):
    ok = store.ingest_bytes(b"# Valves\n\nThe valve is checked weekly.", "valves.md")
    r = store.ingest_bytes(hf.inflate_member(samples.docx_bytes(), "word/document.xml", 120), "bomb.docx")
    assert r.status == "failed"
    assert "member word/document.xml inflates to 120 MB, over the limit of 100 MB (setting max_zip_member_mb)" in r.reason
    assert store.get_document(r.document_id).reason == r.reason
    assert {c.document_id for c in store.chunks([h.chunk_id for h in store.search("valve weekly", k=3)])} == {ok.document_id}


def test_cli_ingest_and_status_show_the_limit(tmp_path, hash_embedder, monkeypatch):
    monkeypatch.setattr(cli_store, "Store", functools.partial(Store, embedder=hash_embedder))
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "frames.tiff").write_bytes(hf.tiff_frames(200, 7000, 7000))
    (folder / "notes.md").write_text("# Notes\n\nThe boiler is serviced in May.")
    _sparse(folder / "huge.csv", 3 * GiB)
    r = CliRunner().invoke(main, ["ingest", "--store", str(tmp_path / "s"), str(folder)], catch_exceptions=False)
    assert r.exit_code == 1
    lines = r.output.splitlines()
    assert any(x.startswith("ready") and "notes.md" in x for x in lines)
    assert any(x.startswith("failed") and "frames.tiff" in x and "200 frames hold 9,800 megapixels, over the limit of "
               "1,000 megapixels (setting max_image_total_megapixels)" in x for x in lines)
    assert any(x.startswith("failed") and "huge.csv" in x and "the file is 3 GB" in x for x in lines)
    r = CliRunner().invoke(main, ["status", "--store", str(tmp_path / "s")], catch_exceptions=False)
    assert "max_image_total_megapixels" in r.output and "max_upload_mb" in r.output
