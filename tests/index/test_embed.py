"""The encoders (design stage 3, issue 18): the float model and its int8 ONNX build, selection and stamps."""

from __future__ import annotations

import numpy as np
import pytest

from rag.index.embed import ENCODERS, OnnxEmbedder, encoder_spec, get_embedder, load_embedder
from rag.settings import get_settings


def test_every_encoder_has_its_own_stamp():
    names = [s.name for s in ENCODERS.values()]
    assert len(set(names)) == len(names)
    assert encoder_spec("minilm").name == "sentence-transformers/all-MiniLM-L6-v2"
    with pytest.raises(ValueError, match="unknown encoder 'bert'"):
        encoder_spec("bert")


def test_encoder_setting_picks_the_encoder(monkeypatch):
    monkeypatch.setenv("RAG_ENCODER", "minilm-int8")
    assert get_settings().encoder == "minilm-int8"
    assert encoder_spec().key == "minilm-int8"
    monkeypatch.setenv("RAG_ENCODER", "float16")
    with pytest.raises(Exception, match="encoder"):
        get_settings()


@pytest.fixture(scope="module")
def int8():
    return get_embedder(encoder="minilm-int8")


@pytest.mark.slow
def test_int8_vectors_are_unit_norm_in_input_order_and_batch_independent(int8):
    texts = ["a b c " * 200, "short", "", "Time to first token is set by the prefill phase.", "short"]
    v = int8.encode(texts)
    assert v.shape == (5, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(v[1], v[4], atol=1e-6)  # same text, same vector wherever it sits
    one = np.stack([int8.encode([t])[0] for t in texts])  # batch of one: no padding at all
    assert np.min(np.sum(one * v, axis=1)) > 0.9999  # padding and sorting change nothing
    assert int8.encode([]).shape == (0, 384)
    assert int8.encode_query("short").shape == (384,)


@pytest.mark.slow
def test_int8_truncates_at_the_window_like_the_float_model(int8):
    long = "attention " * 1000
    ids = int8._tok.encode(long).ids
    assert len(ids) == 256 and ids[0] == 101 and ids[-1] == 102
    assert int8.count_tokens(long) > 256  # counting is not truncated: the chunker splits on it


def test_int8_refuses_a_file_that_is_not_a_model(tmp_path):
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not an onnx graph")
    from rag.errors import ModelError

    with pytest.raises(ModelError, match="cannot load the int8 encoder"):
        OnnxEmbedder(bad)


@pytest.mark.slow
def test_int8_is_the_float_model_within_rounding(int8, embedder, corpus_dir):
    """Real texts from the shared corpus: the two encoders agree to cosine > 0.99 on every one."""
    text = (corpus_dir / "docs" / "02-llm-inference.md").read_text(encoding="utf-8")
    paras = [p for p in text.split("\n\n") if len(p) > 80][:64]
    cos = np.sum(int8.encode(paras) * embedder.encode(paras), axis=1)
    assert cos.min() > 0.99 and float(np.mean(cos)) > 0.998
    assert load_embedder("minilm").name != int8.name


def test_a_store_keeps_the_encoder_its_stamp_names():
    from rag.errors import ModelMismatchError
    from rag.index.embed import DEFAULT_ENCODER, encoder_for_store

    float_name, int8_name = ENCODERS["minilm"].name, ENCODERS["minilm-int8"].name
    assert encoder_for_store(None, None).key == DEFAULT_ENCODER
    assert encoder_for_store("minilm", None).key == "minilm"
    assert encoder_for_store(None, float_name).key == "minilm"  # an old store keeps working after the default moved
    assert encoder_for_store(None, int8_name).key == "minilm-int8"
    assert encoder_for_store("minilm-int8", int8_name).key == "minilm-int8"
    with pytest.raises(ModelMismatchError, match="indexed with minilm .*not minilm-int8"):
        encoder_for_store("minilm-int8", float_name)
    with pytest.raises(ModelMismatchError, match="cannot load"):
        encoder_for_store(None, "some/other-model")


def test_the_last_query_is_embedded_once_and_handed_out_as_copies():
    """The search and the key passage's unit cosines embed the same question: the second is the first's vector."""
    from rag.index.embed import LastQuery

    class Counting(LastQuery):
        calls = 0

        def encode(self, texts):
            Counting.calls += 1
            return np.array([[float(len(t)), 1.0] for t in texts], np.float32)

    enc = Counting()
    a = enc.encode_query("how do I reset it?")
    a[0] = -1.0  # a caller changing its array changes no other's
    b = enc.encode_query("how do I reset it?")
    assert Counting.calls == 1 and b[0] == len("how do I reset it?")
    enc.encode_query("another question")
    assert Counting.calls == 2
