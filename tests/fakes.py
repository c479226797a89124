"""Fakes for the two models, plugged into the project's seams (issue 12, test tiers).

* :class:`HashEmbedder` for ``Store(embedder=...)``: no sentence-transformers model is loaded (it implements
  :class:`rag.index.embed.Encoder`).
* :class:`FakeGenerator` for the one generator seam, :func:`rag.answer.pipeline.get_default_generator`
  (the ``fake_generator`` fixture replaces it for the CLI, the app and the library alike; one turn can also
  take ``get_generator=...``): no GGUF is loaded, the reply is scripted.

Page and CLI tests that test plumbing use these; each layer keeps one real-model test marked ``slow``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rag.text import tokenize
from rag.tokens import count_tokens


class HashEmbedder:
    """Bag of hashed tokens -> 384-d unit vectors: texts sharing words are close (cosine), no model needed.

    ``encode`` returns ``(n, 384) float32``, L2-normalised; ``encode_query`` ``(384,) float32``.
    Deterministic across processes (sha1 of each token, never ``hash()``).
    """

    name = "test/hash-embedder"
    dim = 384
    batch_size = 32

    def _one(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, np.float32)
        for t in tokenize(text) or ["<empty>"]:
            h = int.from_bytes(hashlib.sha1(t.encode()).digest()[:4], "little")
            v[h % self.dim] += 1.0
        return v / np.linalg.norm(v)

    def encode(self, texts):
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def encode_query(self, query: str) -> np.ndarray:
        return self._one(query)

    def count_tokens(self, text: str) -> int:
        """The real encoder's word-pieces (:func:`rag.tokens.count_tokens`: the tokenizer alone, no model)."""
        return count_tokens(text)


def first_sentence_reply(question: str, sources: Sequence[Any]) -> str:
    """The default scripted answer: the first sentence of the first source the model reads, cited ``[n]``."""
    if not sources:
        return "The sources do not contain the answer."
    first = re.split(r"(?<=[.!?])\s+", " ".join(sources[0].quote.split()), maxsplit=1)[0].rstrip(".!?")
    return f"{first} [{sources[0].index}]."


@dataclass
class FakePrompt:
    """What :meth:`FakeGenerator.fit` returns: the question and the sources read (none dropped)."""

    question: str
    sources: tuple[Any, ...]
    hint: str | None = None
    dropped: tuple[int, ...] = ()


@dataclass
class FakeStream:
    """A finished :class:`rag.answer.generate.GenerationStream` look-alike: iterating yields the words."""

    text: str
    ttft_ms: float | None = 1.0
    generation_ms: float | None = 2.0
    tokens: int = 0

    def __post_init__(self) -> None:
        self.tokens = len(self.text.split())

    def __iter__(self):
        for i, w in enumerate(self.text.split(" ")):
            yield w if i == 0 else " " + w


@dataclass
class FakeGenerator:
    """The generator seam's stand-in: ``reply(question, sources) -> str`` is what the "model" writes.

    Records every prompt in ``prompts`` so a test can check what the model was given.
    """

    reply: Callable[[str, Sequence[Any]], str] = first_sentence_reply
    name: str = "fake.gguf"
    prompts: list[FakePrompt] = field(default_factory=list)

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def fit(self, question: str, sources: Sequence[Any], max_answer_tokens: int, *, hint: str | None = None) -> FakePrompt:
        p = FakePrompt(question, tuple(sources), hint)
        self.prompts.append(p)
        return p

    def stream(self, prompt: FakePrompt, max_tokens: int) -> FakeStream:
        return FakeStream(self.reply(prompt.question, prompt.sources))

    def complete(self, messages: list[dict[str, str]], max_tokens: int) -> str:
        return messages[-1]["content"] if messages else ""


def gate_result(query: str, *, refused: bool = False, threshold: float = 0.675, distance: float = 0.3) -> Any:
    """The distance gate's decision (:func:`rag.answer.gate.apply_gate`) for ``query`` over one hit at cosine
    ``distance``, or over none (``refused``): the gate an :class:`rag.answer.record.Answer` is built around."""
    from rag.answer.gate import apply_gate
    from rag.types import Hit

    hits = [] if refused else [Hit(chunk_id=1, rank=1, fused_rank=1, rrf_score=1 / 61, cosine_distance=distance)]
    return apply_gate(query, hits, threshold, 4)
