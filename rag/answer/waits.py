"""How long the first word takes on this machine: a running median of the last answers, per model (issue 42).

The sidebar promised first words "in about 3.0 s" (measured on quiet cores, ``docs/answers.md``); a newcomer on a
busy 2-core machine waited 7.6-24 s. What the app says now is what this machine did: the median time to the
first words (``Answer.first_words_ms``, milliseconds from the question's submission to the first words shown,
retrieval and prompt included: issue 41, Deliver 5; until then it was ``ttft_ms``, counted from the end of
retrieval) of the last :data:`WINDOW` answers of each model file, kept per process and seeded from the store's
saved chats (each turn's record keeps its ``model`` and ``first_words_ms``, older ones ``ttft_ms`` and
``retrieval_ms``), so a restarted app does not start from nothing. The median, not the mean: one
answer written while the machine indexed a book says little about the next.
"""

from __future__ import annotations

import statistics
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: How many of each model's most recent first-word times the median is taken over.
WINDOW = 9


@dataclass(frozen=True)
class Wait:
    """A model's measured wait: ``median_ms`` over the last ``answers`` (1 ... :data:`WINDOW`) on this machine."""

    median_ms: float
    answers: int

    def plain(self) -> str:
        """``"first words after about 7.6 s here (median of your last 5 answers)"``."""
        last = "your last answer" if self.answers == 1 else f"your last {self.answers} answers"
        return f"first words after about {self.median_ms / 1000:.1f} s here (median of {last})"


class FirstWordTimes:
    """Thread-safe running windows of first-word times, milliseconds, per model file name (one per process: the
    server's sessions share the machine, so they share what it measured)."""

    def __init__(self, window: int = WINDOW):
        self.window = window
        self._times: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def add(self, model: str | None, first_words_ms: float | None) -> None:
        """Record one answer's time to its first words (``Answer.first_words_ms``); ignored without a model name or
        a positive time."""
        if not model or first_words_ms is None or not first_words_ms > 0:
            return
        with self._lock:
            self._times.setdefault(model, deque(maxlen=self.window)).append(float(first_words_ms))

    def wait(self, model: str | None) -> Wait | None:
        """The median of ``model``'s recorded times, ``None`` before its first answer here."""
        with self._lock:
            times = list(self._times.get(model or "", ()))
        return Wait(statistics.median(times), len(times)) if times else None

    def seed(self, records: Iterable[Mapping[str, Any]]) -> int:
        """Add the answers' ``model`` and first-words time (:func:`first_words_of`) of saved turn records
        (:meth:`rag.answer.history.Turn.to_json`, any version), oldest first (the newest stay in the window);
        returns how many carried a time."""
        n = 0
        for rec in records:
            a = rec.get("answer") if isinstance(rec.get("answer"), Mapping) else rec  # record 3 nests the answer
            ms = first_words_of(a)
            if a.get("model") and ms:
                self.add(str(a["model"]), ms)
                n += 1
        return n


def first_words_of(answer: Mapping[str, Any]) -> float | None:
    """A saved answer's time from submission to its first words: ``first_words_ms``; an answer saved before it
    existed: ``ttft_ms`` + ``retrieval_ms`` (the follow-up rewrite not counted); ``None`` without a time."""
    if answer.get("first_words_ms"):
        return float(answer["first_words_ms"])
    if answer.get("ttft_ms"):
        return float(answer["ttft_ms"]) + float(answer.get("retrieval_ms") or 0.0)
    return None


#: This process's measured first-word times (the app's sessions share it).
FIRST_WORDS = FirstWordTimes()


def saved_records(store: Any, turns: int = 200) -> list[Mapping[str, Any]]:
    """The records of up to ``turns`` most recent saved turns of ``store``'s chats, oldest first (for
    :meth:`FirstWordTimes.seed`)."""
    out: list[Mapping[str, Any]] = []
    for chat in store.chats.list():  # most recently used first
        out = [t.record for t in store.chats.turns(chat.id)] + out
        if len(out) >= turns:
            break
    return out[-turns:]
