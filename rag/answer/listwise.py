"""The local model as a listwise selector (issue 24, item 3a): items in, one score per item out.

FIRST-style (Reddy et al. 2024, "FIRST: Faster Improved Listwise Reranking with Single Token Decoding"):
the items are numbered ``[1]`` .. ``[n]`` in one prompt after the question, and ONE forward pass gives the
model's next-token distribution over the numbers after an opening ``[``: no text is generated, so it costs
a prompt read, not a generation. With Qwen's tokenizer every digit is a token of its own, so a list holds
at most :data:`MAX_ITEMS` (9) items (``[10`` would take two tokens).

A zero-shot small model is biased by position and label (issue 24's probe: the 0.5B put the answering
sentence first for 2 of 20 questions). :func:`listwise_scores` debiases it the way the paper's follow-ups
do: each item is scored in ``orders`` permuted orders (the list, its reverse, then rotations), and its
score is its log-probability among the shown labels averaged over the orders, so no item keeps the first
place or the label ``1`` throughout. Use the score as one feature beside a lexical one
(:func:`combine`), not alone.

The prompt's instruction is the same for every call, so its KV cache is kept like the answer prompt's
(:meth:`rag.answer.generate.Generator.prepare`): the selector gets a llama.cpp context of its own
(:func:`selector_generator`), so neither evicts the other's cached prefix. Reused by retrieval (issue 27)
to re-rank sources: pass the sources' texts as the items.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rag.answer.generate import Generator, get_generator
from rag.errors import ModelError
from rag.settings import get_settings

#: At most this many items per call: labels are the digits 1-9, one token each in Qwen's vocabulary.
MAX_ITEMS = 9
#: An item longer than this many tokens is cut (with "…") before it is shown: the prompt read is the cost.
MAX_ITEM_TOKENS = 80

SELECTOR_SYSTEM = (
    "You pick evidence. The user gives a question and numbered passages from their own documents. "
    "Reply with the number of the one passage that answers the question, in square brackets, and nothing else."
)
#: The worked exchange before every list (neutral topic), so the 0.5B answers with a bracketed number.
EXAMPLE_QUESTION = "How often should tomatoes be watered?"
EXAMPLE_ITEMS = ("Most vegetables grow best in loose soil rich in compost.",
                 "Tomato plants need deep watering two or three times a week.",
                 "Water at the base of the plant in the morning so the leaves stay dry.")
EXAMPLE_ANSWER = "[2]"


def _item_text(item: Any) -> str:
    return item if isinstance(item, str) else getattr(item, "quote", str(item))


def _user_message(question: str, items: Sequence[Any]) -> str:
    listing = "\n".join(f"[{k}] {' '.join(_item_text(x).split())}" for k, x in enumerate(items, start=1))
    return f"Question: {question.strip()}\n\nPassages:\n{listing}\n\nWhich passage answers the question?"


def selector_messages(question: str, items: Sequence[Any]) -> list[dict[str, str]]:
    """Chat messages of one selector call: instruction, a worked exchange, then ``question`` over ``items``
    (strings, or records with a ``quote``) numbered from 1. Everything before the last user message is the
    same for every call (its KV cache is kept)."""
    return [
        {"role": "system", "content": SELECTOR_SYSTEM},
        {"role": "user", "content": _user_message(EXAMPLE_QUESTION, EXAMPLE_ITEMS)},
        {"role": "assistant", "content": EXAMPLE_ANSWER},
        {"role": "user", "content": _user_message(question, items)},
    ]


def selector_generator(settings: Any = None) -> Generator:
    """The process-wide generator of the selector: the model of ``settings`` (default
    :func:`rag.settings.get_settings`) in a llama.cpp context of its own, its instruction prefix cached."""
    s = settings or get_settings()
    return get_generator(s.model_path, n_ctx=s.n_ctx, threads=s.threads, build=selector_messages)


def orders_for(n: int, orders: int) -> list[list[int]]:
    """``orders`` permutations of ``range(n)``: the list, its reverse, then rotations of the list by
    ``n * k / orders`` (deterministic, so the same items always get the same score). Fewer when ``n`` is
    too small to give that many distinct orders."""
    base = list(range(n))
    out = [base]
    if orders > 1 and n > 1:
        out.append(base[::-1])
    k = 1
    while len(out) < orders and k < n:
        shift = max(1, round(n * k / max(1, orders - 1)))
        rot = base[shift:] + base[:shift]
        if rot not in out:
            out.append(rot)
        k += 1
    return out[:orders]


def _label_ids(gen: Generator, n: int) -> list[int]:
    ids = [gen.tokenize(str(k)) for k in range(1, n + 1)]
    if any(len(t) != 1 for t in ids):
        raise ValueError(f"{gen.name}: the labels 1..{n} are not single tokens; the listwise selector needs them")
    return [t[0] for t in ids]


def _cut(gen: Generator, text: str, max_tokens: int) -> str:
    ids = gen.tokenize(text)
    if len(ids) <= max_tokens:
        return text
    return gen.llm.detokenize(ids[:max_tokens]).decode("utf-8", errors="ignore").rstrip() + " …"


def next_token_logits(gen: Generator, tokens: Sequence[int]) -> np.ndarray:
    """``(n_vocab,)`` float32 logits of the token after ``tokens`` (one forward pass, nothing generated).

    Reuses the generator's cached instruction prefix (:meth:`Generator.prepare`) and holds its lock.
    """
    with gen._lock:
        start = gen.prepare(tokens)
        gen.llm.eval(list(tokens[start:]))
        # llama-cpp-python keeps no scores without logits_all; the context holds the last position's logits
        logits = np.ctypeslib.as_array(gen.llm._ctx.get_logits(), shape=(gen.llm.n_vocab(),))
        return np.array(logits, dtype=np.float32)


@dataclass(frozen=True)
class ListwiseResult:
    """:func:`listwise_scores`' output: ``scores`` ``(n,)`` float32, each item's mean log-probability among
    the shown labels (<= 0; higher is better) over ``orders`` permuted orders; ``per_order`` ``(orders, n)``
    the same per order (items in the caller's order); ``prompt_tokens`` tokens read per order (prefix
    excluded); ``ms`` wall time of all passes."""

    scores: np.ndarray
    per_order: np.ndarray
    prompt_tokens: tuple[int, ...]
    ms: float

    @property
    def best(self) -> int:
        """Index of the best-scored item (the earliest on a tie)."""
        return int(np.argmax(self.scores))


def listwise_scores(question: str, items: Sequence[Any], generator: Generator | None = None, *,
                    orders: int = 2, max_item_tokens: int = MAX_ITEM_TOKENS, settings: Any = None) -> ListwiseResult:
    """One score per item for how well it answers ``question``, from the model's next-token distribution
    over the items' numbers (module doc). ``items``: 1..:data:`MAX_ITEMS` strings (or records with a
    ``quote``); each is cut to ``max_item_tokens``. ``orders``: permuted orders averaged (:func:`orders_for`;
    1 = the list as given, no debiasing). ``generator`` default :func:`selector_generator` of ``settings``.

    Raises ``ValueError`` for no items, more than :data:`MAX_ITEMS`, or ``orders < 1``; :class:`rag.errors.ModelError`
    when the model is missing or the prompt does not fit its context.
    """
    n = len(items)
    if not 1 <= n <= MAX_ITEMS:
        raise ValueError(f"listwise_scores takes 1 to {MAX_ITEMS} items, got {n}")
    if orders < 1:
        raise ValueError(f"orders must be >= 1, got {orders}")
    gen = generator or selector_generator(settings)
    t0 = time.perf_counter()
    texts = [_cut(gen, _item_text(x), max_item_tokens) for x in items]
    labels = _label_ids(gen, n)
    per_order = []
    read = []
    for order in orders_for(n, orders):
        text = gen.render(selector_messages(question, [texts[i] for i in order])) + "["
        tokens = gen.tokenize(text, special=True)
        if len(tokens) >= gen.n_ctx:
            raise ModelError(f"selector prompt of {len(tokens)} tokens does not fit the context of {gen.n_ctx}")
        logits = next_token_logits(gen, tokens)[labels]
        logp = logits - np.logaddexp.reduce(logits)
        row = np.empty(n, dtype=np.float32)
        row[order] = logp  # position p showed item order[p] under label p+1
        per_order.append(row)
        read.append(len(tokens) - len(gen._prefix))
    stacked = np.stack(per_order).astype(np.float32)
    return ListwiseResult(stacked.mean(axis=0), stacked, tuple(read), (time.perf_counter() - t0) * 1000.0)


def combine(lexical: Sequence[float], model: Sequence[float], weight: float) -> np.ndarray:
    """``lexical + weight * softmax(model)`` per item: the model's listwise score (log-probabilities, as
    :attr:`ListwiseResult.scores`) turned into a share in [0, 1] and added to a lexical score in [0, 1]
    (e.g. :func:`rag.answer.excerpt.lexical_overlap`). ``weight`` 0 is the lexical score alone."""
    m = np.asarray(model, dtype=np.float64)
    share = np.exp(m - m.max())
    share /= share.sum()
    return (np.asarray(lexical, dtype=np.float64) + weight * share).astype(np.float32)
