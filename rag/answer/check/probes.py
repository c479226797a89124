"""What the local model itself says about an answer, read from its logits, never from generated text (issue 39).

Two probes, each a forward pass and no sampling:

* :func:`answer_token_probs` (feature (a)): the log-probabilities the model gave the tokens of the answer it just
  wrote. The KV cache still holds the prompt and the answer; the answer's tokens are decoded once more in one
  batch with logits for every position (llama.cpp's ``llama_decode``), so it costs one batched pass over the
  answer's tokens (about as long as reading them), not a second generation.
* :func:`yes_no` (feature (b)): one pass over a short prompt asking whether a passage answers the question,
  reading the next-token probability of "yes" against "no" (single token, no generation), debiased with a
  question-free baseline (the same passage with the question ``N/A``: contextual calibration, Zhao et al.
  2021, "Calibrate Before Use"). The passage is read once; the two questions are two short tails after it
  (the KV cache is cut back to the passage between them). A third tail asks whether the shown answer is right
  according to the passage.

The probe prompt runs in a llama.cpp context of its own (:func:`probe_generator`, the weights are shared), so
it never evicts the answer prompt's cached instruction prefix.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rag.answer.cite import Citation
from rag.answer.generate import Generator, get_generator

if TYPE_CHECKING:
    from llama_cpp import Llama

    from rag.settings import Settings

#: The probe's instruction. One word back; the logits of its first token are read.
PROBE_SYSTEM = ("You check whether a passage answers a question. Reply with one word: yes or no.")
#: The question of the baseline pass (no question at all).
BASELINE_QUESTION = "N/A"
#: Context of the probe's own llama.cpp context, tokens (a key passage of a few sentences, a question, an answer).
PROBE_CTX = 1024
#: Characters of passage and of answer the probe reads at most.
PROBE_PASSAGE_CHARS = 1200
PROBE_ANSWER_CHARS = 600


def _passage_message(passage: str) -> str:
    return f"Passage:\n{passage.strip()[:PROBE_PASSAGE_CHARS]}\n\n"


def _question_tail(question: str) -> str:
    return f"Question: {question.strip()}\n\nDoes the passage answer the question? Reply yes or no."


def _answer_tail(question: str, answer: str) -> str:
    return (f"Question: {question.strip()}\nProposed answer: {answer.strip()[:PROBE_ANSWER_CHARS]}\n\n"
            "Is the proposed answer right according to the passage? Reply yes or no.")


def passage_messages(passage: str, tail: str) -> list[dict[str, str]]:
    """The probe's chat messages: the instruction, then one user message holding ``passage`` and ``tail``."""
    return [{"role": "system", "content": PROBE_SYSTEM},
            {"role": "user", "content": _passage_message(passage) + tail}]


def probe_messages(question: str, sources: Sequence[Citation], tail: str | None = None) -> list[dict[str, str]]:
    """:func:`passage_messages` over the ``quote`` of ``sources`` joined, with ``tail`` (default: the yes/no
    question on ``question``); the probe generator's ``build`` (its cached instruction prefix)."""
    passage = " ".join(s.quote for s in sources)
    return passage_messages(passage, tail if tail is not None else _question_tail(question))


def probe_generator(settings: Settings) -> Generator:
    """The probe's :class:`rag.answer.generate.Generator`: the answer model, a context of :data:`PROBE_CTX` tokens
    of its own (its instruction prefix stays cached), ``settings.threads`` threads."""
    return get_generator(settings.model_path, n_ctx=PROBE_CTX, threads=settings.threads, build=probe_messages,
                         flash_attn=settings.flash_attn)


def _last_logits(llm: Llama) -> np.ndarray:
    """The logits of the last decoded position (``(n_vocab,)`` float32, copied)."""
    n_vocab = int(llm.n_vocab())
    return np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(n_vocab,)).astype(np.float32, copy=True)


def _log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


@dataclass(frozen=True)
class TokenProbs:
    """Feature (a): the model's log-probabilities of its own answer tokens (natural log, <= 0).

    ``mean`` over the answer's tokens, ``min`` the least likely one, ``low_share`` the share of tokens the model
    gave under 0.5, ``tokens`` how many were scored, ``ms`` the pass's wall time.
    """

    mean: float
    min: float
    low_share: float
    tokens: int
    ms: float

    def to_json(self) -> dict:
        return {"mean": round(self.mean, 4), "min": round(self.min, 4), "low_share": round(self.low_share, 4),
                "tokens": self.tokens, "ms": round(self.ms, 1)}


def answer_token_probs(gen: Generator, prompt_len: int) -> TokenProbs | None:
    """Feature (a) for the answer :class:`rag.answer.generate.GenerationStream` just wrote with ``gen``, whose
    prompt was ``prompt_len`` tokens: the answer's tokens (the KV cache's tokens after the prompt) are decoded
    again from position ``prompt_len - 1`` in one batch with logits for every position; row ``i`` predicts answer
    token ``i``. Call right after the stream ended (before ``gen`` runs anything else). ``None`` when the cache
    holds no answer token (an empty answer) or more than one batch of them."""
    llm = gen.llm
    with gen._lock:
        n = int(llm.n_tokens)
        if prompt_len < 1 or n <= prompt_len:
            return None
        ids = [int(t) for t in llm.input_ids[prompt_len - 1:n]]  # last prompt token + the answer's tokens
        m = len(ids) - 1
        if m < 1 or len(ids) > int(llm.n_batch):
            return None
        t0 = time.perf_counter()
        llm._ctx.kv_cache_seq_rm(-1, prompt_len - 1, -1)
        llm._batch.set_batch(batch=ids, n_past=prompt_len - 1, logits_all=True)
        llm._ctx.decode(llm._batch)
        n_vocab = int(llm.n_vocab())
        rows = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(len(ids) * n_vocab,)).reshape(len(ids), n_vocab)
        lp = _log_softmax(rows[:m].astype(np.float32))
        chosen = lp[np.arange(m), ids[1:]]
        llm.n_tokens = prompt_len - 1 + len(ids)
        ms = (time.perf_counter() - t0) * 1000.0
    return TokenProbs(float(chosen.mean()), float(chosen.min()), float((chosen < math.log(0.5)).mean()), m, ms)


@dataclass(frozen=True)
class YesNo:
    """Feature (b): P("yes") against P("no") for "does the passage answer the question?".

    ``p_yes`` with the question, ``p_base`` with the question-free baseline (:data:`BASELINE_QUESTION`), ``score``
    their log-odds difference (the debiased evidence, > 0 = the question moved the model towards yes);
    ``p_answer`` P("yes") for "is the proposed answer right according to the passage?" (``None`` without an
    answer); ``ms`` the wall time of all passes; ``tokens`` the tokens evaluated.
    """

    p_yes: float
    p_base: float
    p_answer: float | None
    ms: float
    tokens: int

    @property
    def score(self) -> float:
        return _logit(self.p_yes) - _logit(self.p_base)

    def to_json(self) -> dict:
        return {"p_yes": round(self.p_yes, 4), "p_base": round(self.p_base, 4), "score": round(self.score, 4),
                "p_answer": None if self.p_answer is None else round(self.p_answer, 4), "ms": round(self.ms, 1),
                "tokens": self.tokens}


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def _word_ids(gen: Generator, words: Sequence[str]) -> list[int]:
    """The first token of each spelling of ``words`` (with and without a leading space, lower and title case)."""
    out: set[int] = set()
    for w in words:
        for v in (w, w.capitalize(), " " + w, " " + w.capitalize()):
            ids = gen.tokenize(v)
            if ids:
                out.add(ids[0])
    return sorted(out)


def _p_yes(logits: np.ndarray, yes: list[int], no: list[int]) -> float:
    lp = _log_softmax(logits)
    a, b = np.logaddexp.reduce(lp[yes]), np.logaddexp.reduce(lp[no])
    return float(1.0 / (1.0 + math.exp(b - a)))


def yes_no(gen: Generator, question: str, passage: str, answer: str | None = None) -> YesNo:
    """Feature (b) with the probe generator ``gen`` (:func:`probe_generator`): the passage is evaluated once after
    the cached instruction, then each tail (baseline, question, and with ``answer`` the answer check) from the
    passage's end. Raises :class:`rag.errors.ModelError` only as the generator does (a broken model)."""
    llm = gen.llm
    yes, no = _word_ids(gen, ("yes",)), _word_ids(gen, ("no",))
    tails = [_question_tail(BASELINE_QUESTION), _question_tail(question)]
    if answer:
        tails.append(_answer_tail(question, answer))
    prompts = [gen.prompt_tokens(passage_messages(passage, t))[1] for t in tails]
    common = len(prompts[0])
    for p in prompts[1:]:
        common = min(common, next((i for i, (x, y) in enumerate(zip(prompts[0], p)) if x != y), min(len(p), common)))
    common = max(0, min(common, min(len(p) for p in prompts) - 1))
    probs: list[float] = []
    evaluated = 0
    with gen._lock:
        t0 = time.perf_counter()
        n0 = gen.prepare(prompts[0])
        llm.eval(prompts[0][n0:common])
        evaluated += common - n0
        for p in prompts:
            llm.n_tokens = common
            llm.eval(p[common:])
            evaluated += len(p) - common
            probs.append(_p_yes(_last_logits(llm), yes, no))
        ms = (time.perf_counter() - t0) * 1000.0
    return YesNo(probs[1], probs[0], probs[2] if answer else None, ms, evaluated)
