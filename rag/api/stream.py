"""``POST /v1/ask`` with ``"stream": true``: the turn as Server-Sent Events (issue 38, item 1).

Events, in order (each ``event: NAME`` with one JSON object as ``data``):

* ``queue`` ``{"position", "waiting"}`` - while the question waits for the model (``position`` 1 = next), sent
  when it enters the line and each time its place changes; not sent when the model is free;
* ``sources`` ``{"query", "standalone", "gate_verdict", "notice", "citations"}`` - what was found and kept
  (the citations as data, the same objects as in the record); for a refusal, ``citations`` is empty;
* ``key_passage`` - the verbatim source sentences that best match the question (before the model writes);
* ``token`` ``{"text"}`` - each piece of the model's answer as it streams (invalid ``[n]`` and links removed);
* ``verdict`` ``{"verdict", "verdict_reason", "confidence", "answer", "answer_from", "note"}`` - the claim
  check's outcome: ``answer`` is the checked answer, which may differ from the streamed text;
* ``done`` - the whole record (:func:`rag.api.records.turn_json`, the same as the non-streaming answer);
* ``error`` ``{"error": {...}}`` - instead of the rest, when the turn fails (a missing model: 503's message).

The turn runs in a thread of its own that holds the model's slot (:mod:`rag.api.answer_queue`) until the turn
is over, also when the client goes away: then it stops at the next piece and gives the slot up, so the model
is never asked two things at once.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from rag.answer.conversation import TurnStream
from rag.api.answer_queue import Ticket
from rag.api.errors import ApiError, from_rag_error
from rag.api.records import turn_json
from rag.api.service import ApiService
from rag.api.turns import Question, enter, open_turn
from rag.errors import RagError

#: Seconds between two looks at a waiting question's place in the line.
QUEUE_POLL_S = 0.25

_END = object()


def sse(event: str, data: Mapping[str, object]) -> bytes:
    """One Server-Sent Event: ``event: NAME`` and the JSON object ``data`` on one line (so no newline can split it)."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


class _Turn(threading.Thread):
    """The producer: waits for the model, runs the turn, and puts ``(event, data)`` pairs on the loop's queue."""

    def __init__(self, service: ApiService, q: Question, ticket: Ticket, loop: asyncio.AbstractEventLoop,
                 out: asyncio.Queue):
        super().__init__(name="rag-api-answer", daemon=True)
        self.service, self.q, self.ticket, self.loop, self.out = service, q, ticket, loop, out
        self.submitted = time.perf_counter()  # the answer's first_words_ms runs from the request (issue 41)
        self.cancelled = threading.Event()

    def emit(self, event: str, data: Mapping[str, object]) -> None:
        self.loop.call_soon_threadsafe(self.out.put_nowait, (event, data))

    def run(self) -> None:
        try:
            if self._wait():
                self._answer()
        except ApiError as e:
            self.emit("error", e.to_json())
        except RagError as e:
            self.emit("error", from_rag_error(e).to_json())
        except Exception as e:  # noqa: BLE001 - the stream must end with a reason, never hang
            self.emit("error", ApiError(500, "internal", f"the answer failed: {type(e).__name__}: {e}").to_json())
        finally:
            self.ticket.leave()
            self.loop.call_soon_threadsafe(self.out.put_nowait, _END)

    def _wait(self) -> bool:
        """Wait for the model, telling the client its place; ``False`` when the client left meanwhile."""
        told = None
        while not self.ticket.wait(QUEUE_POLL_S):
            if self.cancelled.is_set():
                return False
            pos = self.ticket.position
            if pos != told:
                self.emit("queue", {"position": pos, "waiting": self.service.answers.waiting})
                told = pos
        return not self.cancelled.is_set()

    def _answer(self) -> None:
        conv, turn = open_turn(self.service, self.q, self.submitted)
        self.emit("sources", {"query": turn.followup.question, "standalone": turn.followup.standalone,
                              "gate_verdict": str(turn.gate.verdict), "notice": turn.gate.notice,
                              "citations": [] if turn.gate.refused else
                              [c for c in turn_citations(turn)]})
        if turn.key_passage is not None and not turn.gate.refused:
            self.emit("key_passage", turn.key_passage.to_json())
        pieces = iter(turn)
        try:
            for piece in pieces:
                if self.cancelled.is_set():
                    return
                self.emit("token", {"text": piece})
        finally:
            close = getattr(pieces, "close", None)
            if close is not None:
                close()
        a = turn.answer
        record = turn_json(turn, a, conv.chat_id)
        self.emit("verdict", {"verdict": record["verdict"], "verdict_reason": record["verdict_reason"],
                              "confidence": record.get("confidence"), "answer": record["answer"],
                              "answer_from": record.get("answer_from"), "note": record.get("note")})
        self.emit("done", record)


def turn_citations(turn: TurnStream) -> list[dict[str, Any]]:
    """The turn's numbered citations as the record gives them (:func:`rag.answer.cite.citation_json`)."""
    from rag.answer.cite import citation_json

    return [citation_json(c) for c in turn.cites]


async def events(service: ApiService, q: Question) -> AsyncIterator[bytes]:
    """The SSE body for ``q`` (see the module docstring). Raises :class:`rag.api.errors.ApiError` before the
    first event when the models are not ready (503) or the queue is full (429), so the client gets the status."""
    service.require_ready(model=True)
    ticket = enter(service)
    loop = asyncio.get_running_loop()
    out: asyncio.Queue = asyncio.Queue()
    producer = _Turn(service, q, ticket, loop, out)
    producer.start()
    return _drain(producer, out)


async def _drain(producer: _Turn, out: asyncio.Queue) -> AsyncIterator[bytes]:
    try:
        while True:
            item = await out.get()
            if item is _END:
                return
            yield sse(*item)
    finally:
        producer.cancelled.set()  # the client left (or the stream ended): the producer stops at its next piece
