"""Settings precedence and bounds; the CLI's help and doctor."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from rag.cli.main import main
from rag.settings import Settings, get_settings
from rag.types import GateKind

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_follow_the_design(monkeypatch):
    for var in ("RAG_STORE", "RAG_MODELS_DIR", "RAG_STATIC_DIR", "RAG_SHARED"):
        monkeypatch.delenv(var, raising=False)
    s = Settings()
    # paths are relative to the working directory, never hung off where the package is installed (issue 23)
    assert (s.store, s.models_dir, s.static_dir, s.shared) == (Path("data"), Path("models"), Path("static"),
                                                               Path("../shared"))
    assert (s.chunk_budget_chars, s.encoder_window_tokens, s.threshold, s.max_sources, s.rrf_k) == (512, 256, 0.675, 4, 60)
    assert (s.bm25_k1, s.bm25_b) == (1.2, 0.75)


def test_env_file_and_explicit_precedence(tmp_path, monkeypatch):
    cfg = tmp_path / "rag.toml"
    cfg.write_text('threshold = 0.5\nmax_sources = 3\nstore = "/from/file"\n')
    monkeypatch.setenv("RAG_CONFIG", str(cfg))
    assert get_settings().threshold == 0.5
    monkeypatch.setenv("RAG_THRESHOLD", "0.6")
    s = get_settings()
    assert s.threshold == 0.6 and s.max_sources == 3  # env beats file; file beats defaults
    assert get_settings(threshold=0.7, max_sources=None).threshold == 0.7  # explicit beats env; None ignored
    assert s.with_overrides(threshold=0.3).threshold == 0.3


def test_min_score_has_one_name_and_the_old_one_still_reads(tmp_path, monkeypatch):
    cfg = tmp_path / "rag.toml"
    cfg.write_text("min_answer_score = 0.2\n")  # the name before issue 12
    monkeypatch.setenv("RAG_CONFIG", str(cfg))
    with pytest.warns(FutureWarning, match="min_answer_score is deprecated: use min_score"):
        assert get_settings().min_score == 0.2
    monkeypatch.setenv("RAG_MIN_ANSWER_SCORE", "0.3")
    with pytest.warns(FutureWarning, match="RAG_MIN_ANSWER_SCORE"):
        assert get_settings().min_score == 0.3  # env beats file, under either name
    monkeypatch.delenv("RAG_MIN_ANSWER_SCORE")
    monkeypatch.setenv("RAG_MIN_SCORE", "0.4")
    with pytest.warns(FutureWarning):  # the file still has the old name; the new env name wins
        s = get_settings()
        assert s.min_score == 0.4 and s.with_overrides(min_score=0.5).min_score == 0.5
    cfg.write_text("min_score = 0.6\ngate = 'distance'\n")
    monkeypatch.delenv("RAG_MIN_SCORE")
    s = get_settings()
    assert s.min_score == 0.6 and s.gate == GateKind.DISTANCE and s.model_dump()["min_score"] == 0.6
    with pytest.raises(ValidationError, match="gate"):
        get_settings(gate="nearest")


def test_out_of_bounds_value_names_the_field(monkeypatch):
    monkeypatch.setenv("RAG_THRESHOLD", "3")
    with pytest.raises(ValidationError, match="threshold"):
        get_settings()


@pytest.mark.parametrize("cmd", [[], ["ingest"], ["status"], ["search"], ["ask"], ["eval"], ["bench"], ["doctor"], ["models"], ["delete"]])
def test_help_for_every_command(cmd):
    r = CliRunner().invoke(main, [*cmd, "--help"])
    assert r.exit_code == 0, r.output
    assert "Usage:" in r.output


@pytest.mark.slow  # loads both models and hashes the GGUF
def test_doctor_reports_versions_models_and_store():
    r = subprocess.run([sys.executable, "-m", "rag", "doctor"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    for word in ("torch", "sentence-transformers", "faiss-cpu", "pymupdf", "llama-cpp-python", "streamlit",
                 "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "sha256 OK", "cpu threads", "store"):
        assert word in r.stdout
