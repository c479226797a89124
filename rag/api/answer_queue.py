"""One model answers one question at a time; the others wait in a bounded queue (issue 38, item 5).

The GGUF generator is one process-wide ``llama_cpp.Llama`` (:func:`rag.answer.generate.get_default_generator`),
which is not safe to call from two threads, and on 2 cores two answers at once would each take twice as long.
So every turn (follow-up, search, gate, generation: the gate may call the model to translate a question) holds
the one :class:`AnswerQueue` slot while it runs; up to ``max_waiting`` others wait in arrival order, and one
more is refused at once (:class:`QueueFull`, HTTP 429) rather than left to time out. Searches never queue here.

A :class:`Ticket` says its place (0: answering now; 1: next) for the SSE stream's ``queue`` events. Thread-safe.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Iterator


class QueueFull(Exception):
    """The answer queue holds ``max_waiting`` waiting questions already (HTTP 429)."""

    def __init__(self, waiting: int):
        super().__init__(f"the answer queue is full ({waiting} questions wait for the model); ask again shortly")
        self.waiting = waiting


class Ticket:
    """One question's place in an :class:`AnswerQueue` (made by :meth:`AnswerQueue.enter`)."""

    def __init__(self, queue: AnswerQueue):
        self._q = queue
        self.entered = time.monotonic()
        self.left = False

    @property
    def position(self) -> int:
        """0 while this question holds the model, else how many questions are ahead of it."""
        with self._q._cond:
            return self._q._line.index(self) if self in self._q._line else 0

    def wait(self, timeout: float | None = None) -> bool:
        """Block until this question holds the model (``True``), or ``timeout`` seconds pass (``False``)."""
        with self._q._cond:
            return self._q._cond.wait_for(lambda: self._q._line and self._q._line[0] is self, timeout)

    def leave(self) -> None:
        """Give the place (or the model) up; the next question is woken. Idempotent."""
        with self._q._cond:
            if not self.left and self in self._q._line:
                self._q._line.remove(self)
                self._q.served += 1
            self.left = True
            self._q._cond.notify_all()


class AnswerQueue:
    """The line for the model: the first :class:`Ticket` answers, at most ``max_waiting`` wait behind it."""

    def __init__(self, max_waiting: int = 8):
        if max_waiting < 0:
            raise ValueError(f"max_waiting must be >= 0, not {max_waiting}")
        self.max_waiting = max_waiting
        self._line: deque[Ticket] = deque()
        self._cond = threading.Condition()
        self.served = 0

    @property
    def waiting(self) -> int:
        """Questions waiting (not counting the one being answered)."""
        with self._cond:
            return max(0, len(self._line) - 1)

    @property
    def busy(self) -> bool:
        """Whether a question holds the model now."""
        with self._cond:
            return bool(self._line)

    def enter(self) -> Ticket:
        """A place at the end of the line; raises :class:`QueueFull` when ``max_waiting`` already wait."""
        with self._cond:
            if len(self._line) > self.max_waiting:
                raise QueueFull(len(self._line) - 1)
            t = Ticket(self)
            self._line.append(t)
            return t

    @contextlib.contextmanager
    def slot(self) -> Iterator[Ticket]:
        """Enter, wait for the model, hold it for the block, then leave (also on an exception)."""
        t = self.enter()
        try:
            t.wait()
            yield t
        finally:
            t.leave()
