"""Issue 37: a document's text coverage is stored with its extraction facts (migration 9) and shown by
``rag status`` and ``rag status --json``; a loss is a warning, the document is still indexed."""

from __future__ import annotations

import dataclasses
import json

import ooxml_samples as S
import pytest
from click.testing import CliRunner
from ooxml_samples import p

from rag.cli.main import main
from rag.ingest import extract
from rag.settings import get_settings
from rag.store.schema import connect, migrate
from rag.store.store import Store
from rag.types import MediaType


@pytest.fixture()
def store(tmp_path, fake_embedder):
    s = Store(tmp_path / "s", settings=get_settings(store=tmp_path / "s"))
    yield s
    s.close()


def _guide(word: str = "Cover") -> bytes:
    body = ("<w:sdt><w:sdtContent>" + "".join(p(f"{word} paragraph {i} on charging the forklift battery overnight.")
                                               for i in range(30)) + "</w:sdtContent></w:sdt>"
            + p("References") + p("The last section."))
    return S.save(S.docx_with_body(body))


def test_coverage_is_stored_and_a_loss_is_a_warning_in_status(store, tmp_path, monkeypatch):
    ok = store.ingest_bytes(_guide(), "guide.docx")
    assert store.get_document(ok.document_id).coverage == 1.0
    reader = extract.READERS[MediaType.DOCX.value]

    def lossy(data, name, limits=None):  # the reader of before issue 37: the content control skipped
        doc = reader(data, name, limits=limits)
        return dataclasses.replace(doc, canonical=doc.canonical[doc.canonical.index("References"):], parts=(),
                                   headings=())

    monkeypatch.setitem(extract.READERS, MediaType.DOCX.value, lossy)
    lost = store.ingest_bytes(_guide("Front"), "lossy.docx")
    row = store.get_document(lost.document_id)
    assert row.status == "ready" and row.coverage < 0.2
    assert any("inside a content control were not read" in w for w in lost.warnings)
    out = CliRunner().invoke(main, ["status", "--store", str(tmp_path / "s"), "--json"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    docs = {d["name"]: d for d in json.loads(out.output)["documents"]}
    assert docs["guide.docx"]["coverage"] == 1.0 and docs["lossy.docx"]["coverage"] < 0.2
    assert any("content control" in w for w in docs["lossy.docx"]["warnings"])
    text = CliRunner().invoke(main, ["status", "--store", str(tmp_path / "s")], catch_exceptions=False).output
    assert "coverage 100.0 %" in text


def test_migration_9_adds_the_column_once(tmp_path):
    conn = connect(tmp_path / "db.sqlite")
    migrate(conn)
    assert "coverage" in {r[1] for r in conn.execute("PRAGMA table_info(documents)")}
    assert migrate(conn) == []


def test_ingest_json_carries_the_coverage(tmp_path, fake_embedder):
    path = tmp_path / "guide.docx"
    path.write_bytes(_guide())
    out = CliRunner().invoke(main, ["ingest", "--store", str(tmp_path / "s2"), "--json", str(path)],
                             catch_exceptions=False)
    line = json.loads(out.output.strip().splitlines()[-1])
    assert line["status"] == "ready" and line["coverage"] == 1.0
