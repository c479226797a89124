"""How long the first word takes on this machine: a running median of the last answers, per model (issue 42).

The sidebar promised first words "in about 3.0 s" (measured on quiet cores, ``docs/answers.md``); a newcomer on a
busy 2-core machine waited 7.6-24 s. What the app says now is what this machine did: the median time to the
first token (``Answer.ttft_ms``, milliseconds from the end of retrieval) of the last :data:`WINDOW` answers
of each model file, kept per process and seeded from the store's saved chats (each turn's record keeps its
``model`` and ``ttft_ms``), so a restarted app does not start from nothing. The median, not the mean: one
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

    def add(self, model: str | None, ttft_ms: float | None) -> None:
        """Record one answer's time to the first token; ignored without a model name or a positive time."""
        if not model or ttft_ms is None or not ttft_ms > 0:
            return
        with self._lock:
            self._times.setdefault(model, deque(maxlen=self.window)).append(float(ttft_ms))

    def wait(self, model: str | None) -> Wait | None:
        """The median of ``model``'s recorded times, ``None`` before its first answer here."""
        with self._lock:
            times = list(self._times.get(model or "", ()))
        return Wait(statistics.median(times), len(times)) if times else None

    def seed(self, records: Iterable[Mapping[str, Any]]) -> int:
        """Add the answers' ``model`` / ``ttft_ms`` of saved turn records (:meth:`rag.answer.history.Turn.to_json`,
        any version), oldest first (the newest stay in the window);
        returns how many carried a time."""
        n = 0
        for rec in records:
            a = rec.get("answer") if isinstance(rec.get("answer"), Mapping) else rec  # record 3 nests the answer
            if a.get("model") and a.get("ttft_ms"):
                self.add(str(a["model"]), float(a["ttft_ms"]))
                n += 1
        return n


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
