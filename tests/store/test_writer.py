"""The ingest path (rag.store.writer): a failure is one line for the user and a traceback in the log."""

from __future__ import annotations

import logging

import numpy as np

from rag.store.store import Store


class _Broken:
    """The hash embedder until a text mentions 'explode', then an internal error."""

    def __init__(self, inner):
        self.inner, self.name, self.dim, self.batch_size = inner, inner.name, inner.dim, inner.batch_size
        self.count_tokens = inner.count_tokens

    def encode(self, texts):
        if any("explode" in t for t in texts):
            raise RuntimeError("the embedder fell over")
        return self.inner.encode(texts)

    def encode_query(self, q):
        return self.inner.encode_query(q)


def test_internal_error_fails_one_document_logs_traceback_and_reports_one_line(tmp_path, hash_embedder, caplog):
    s = Store(tmp_path / "s", embedder=_Broken(hash_embedder))
    good = s.ingest_bytes(b"# Fine\n\nA fine note about lichens.", "fine.md")
    with caplog.at_level(logging.INFO, logger="rag.store.writer"):
        bad = s.ingest_bytes(b"# Boom\n\nThis note will explode.", "boom.md")
    assert good.status == "ready" and bad.status == "failed"
    assert bad.reason == "internal error while indexing: RuntimeError: the embedder fell over"
    assert "\n" not in bad.message
    [rec] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "boom.md" in rec.getMessage() and rec.exc_info and "RuntimeError" in caplog.text
    row = s.get_document(bad.document_id)
    assert row.status == "failed" and row.reason == bad.reason and s.check().ok
    s.close()


def test_bad_file_is_logged_without_traceback(tmp_path, hash_embedder, caplog):
    s = Store(tmp_path / "s", embedder=hash_embedder)
    with caplog.at_level(logging.INFO, logger="rag.store.writer"):
        r = s.ingest_bytes(b"%PDF-1.7 not really a pdf", "broken.pdf")
    assert r.status == "failed" and r.reason
    assert [rec.levelno for rec in caplog.records] == [logging.INFO] and not caplog.records[0].exc_info
    s.close()


def test_wrong_embedding_shape_fails_the_document(tmp_path, hash_embedder):
    class Short(type(hash_embedder)):
        def encode(self, texts):
            return np.zeros((len(texts), 3), np.float32)

    s = Store(tmp_path / "s", embedder=Short())
    r = s.ingest_bytes(b"# T\n\nSome words here.", "t.md")
    assert r.status == "failed" and "embedder returned" in r.reason and s.chunk_count == 0
    s.close()
