"""Offline model provisioning: joining byte parts, size/hash checks, GGUF metadata, clear errors."""

from __future__ import annotations

import hashlib
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from rag import models as m
from rag.errors import ModelError


def _fake_spec(tmp_path: Path, monkeypatch, parts: list[bytes], *, sha: str | None = None) -> m.GGUFSpec:
    """A spec whose part 'packages' are tiny real modules exposing get_part_path(), like the PyPI ones."""
    prefix = f"fakeparts_{tmp_path.name}_"
    for i, data in enumerate(parts, 1):
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(data)
        mod = types.ModuleType(f"{prefix}{i}")
        mod.get_part_path = (lambda p=p: p)
        monkeypatch.setitem(sys.modules, f"{prefix}{i}", mod)
    whole = b"".join(parts)
    return m.GGUFSpec("tiny.gguf", prefix, "fake-parts-", "0", len(parts), len(whole),
                      sha or hashlib.sha256(whole).hexdigest())


def test_join_parts_in_order_verifies_and_is_idempotent(tmp_path, monkeypatch):
    parts = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]
    spec = _fake_spec(tmp_path, monkeypatch, parts)
    out_dir = tmp_path / "models"
    path = m.join_parts(spec, out_dir)
    assert path.read_bytes() == b"".join(parts)
    assert m.is_valid(path, spec)
    assert m.is_valid(path, spec, full_hash=True)
    assert [p.name for p in out_dir.iterdir() if p.name.startswith(".")] == []  # no temp file left


def test_join_refuses_wrong_hash_and_leaves_nothing(tmp_path, monkeypatch):
    spec = _fake_spec(tmp_path, monkeypatch, [b"GGUF1234", b"5678"], sha="0" * 64)
    out_dir = tmp_path / "models"
    with pytest.raises(ModelError, match="expected 12 bytes"):
        m.join_parts(spec, out_dir)
    assert list(out_dir.iterdir()) == []


def test_corrupt_file_detected_by_size(tmp_path, monkeypatch):
    spec = _fake_spec(tmp_path, monkeypatch, [b"GGUF" + b"x" * 100])
    path = m.join_parts(spec, tmp_path)
    with open(path, "ab") as f:
        f.write(b"!")
    assert not m.is_valid(path, spec)


def test_missing_part_package_names_the_fix(tmp_path):
    spec = m.GGUFSpec("x.gguf", "no_such_part_pkg_", "no-such-part-pkg-", "0", 2, 10, "0" * 64)
    with pytest.raises(ModelError, match="make models"):
        m.join_parts(spec, tmp_path)


def test_require_model_missing_names_command(tmp_path):
    with pytest.raises(ModelError, match=r"missing; run: make models"):
        m.require_model(tmp_path / m.QWEN_05B.file_name)


def test_require_model_rejects_non_gguf(tmp_path):
    p = tmp_path / "fake.gguf"
    p.write_bytes(b"not a model at all")
    with pytest.raises(ModelError, match="not a GGUF"):
        m.require_model(p)
    with pytest.raises(ModelError, match="not a readable GGUF"):
        m.gguf_info(p)


@pytest.mark.slow  # reads the real 491 MB GGUF
def test_shipped_default_model_is_valid_and_has_metadata(gguf_path):
    assert gguf_path.stat().st_size == m.QWEN_05B.size_bytes
    info = m.gguf_info(gguf_path)
    assert info.architecture == "qwen2"
    assert info.has_chat_template
    assert info.context_length and info.context_length >= 4096
    assert "0.5B" in info.name or "0.5b" in info.name.lower()


def test_list_gguf_ignores_temp_files(tmp_path):
    (tmp_path / "a.gguf").write_bytes(b"GGUF")
    (tmp_path / ".b.gguf.part-1").write_bytes(b"GGUF")
    (tmp_path / ".c.gguf").write_bytes(b"GGUF")
    assert [p.name for p in m.list_gguf(tmp_path)] == ["a.gguf"]


def test_model_file_with_a_folder_is_taken_as_written(tmp_path):
    """`--model models/x.gguf` once became models/models/x.gguf and every real-model test failed in CI."""
    from rag.settings import get_settings

    s = get_settings(store=tmp_path, models_dir=tmp_path / "m")
    assert s.with_overrides(model_file="x.gguf").model_path == tmp_path / "m" / "x.gguf"
    assert s.with_overrides(model_file="models/x.gguf").model_path == Path("models/x.gguf")
    assert s.with_overrides(model_file=str(tmp_path / "y.gguf")).model_path == tmp_path / "y.gguf"


def test_gguf_metadata_reads_the_header_and_skips_arrays(tmp_path):
    """The sidebar reads a model's name, architecture and context length at each server start: from the header
    alone (the reference reader parsed the 150,000-token vocabulary first, 9 s for the 0.5B). A file written by
    llama.cpp's own writer, read back; a truncated one is refused with its name."""
    gguf = pytest.importorskip("gguf")
    p = tmp_path / "tiny.gguf"
    w = gguf.GGUFWriter(str(p), "qwen2")
    w.add_name("Tiny Test Model")
    w.add_context_length(4096)
    w.add_token_list(["<s>", "hello", "wörld"] * 1000)
    w.add_token_scores([0.5] * 3000)
    w.add_chat_template("{{ messages }}")
    w.add_uint32("tiny.answer", 42)
    w.add_tensor("t", np.zeros((4, 4), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    meta = m.gguf_metadata(p)
    assert meta["general.name"] == "Tiny Test Model" and meta["qwen2.context_length"] == 4096
    assert meta["tiny.answer"] == 42 and meta["tokenizer.chat_template"] == "{{ messages }}"
    assert "tokenizer.ggml.tokens" in meta and meta["tokenizer.ggml.tokens"] is None  # present, not read
    info = m.gguf_info(p)
    assert (info.name, info.architecture, info.context_length, info.has_chat_template) == (
        "Tiny Test Model", "qwen2", 4096, True)
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(p.read_bytes()[:200])
    with pytest.raises(ModelError, match="cut.gguf: not a readable GGUF"):
        m.gguf_info(cut)
