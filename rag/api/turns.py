"""One question through the API: the same :class:`rag.answer.conversation.Conversation` turn as the app and
``rag ask`` (follow-up, search, gate, key passage, checked answer, saved chat), taken inside the answer queue.

:func:`open_turn` builds the turn (call it holding the model's slot: the gate may call the model to translate
a question); :func:`answer` runs one to its end and returns the record (:func:`rag.api.records.turn_json`).
The REST route, the OpenAI endpoint and the MCP ``ask`` tool all call :func:`answer`; the SSE stream
(:mod:`rag.api.stream`) calls :func:`open_turn` and streams the turn itself.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rag.answer.conversation import Conversation, TurnStream
from rag.api.answer_queue import QueueFull, Ticket
from rag.api.errors import ApiError, from_rag_error, not_found
from rag.api.records import turn_json
from rag.api.service import ApiService
from rag.errors import RagError
from rag.store.store import Store
from rag.types import DocStatus


@dataclass(frozen=True)
class Question:
    """What one ask carries: the ``question``, its ``collection``, the ``documents`` to ask within (ids or
    unique prefixes; ``None`` = all), the earlier questions (``history``, oldest first), the saved ``chat`` to
    continue (an id, ``"new"``, or ``None``: not saved) and the follow-up ``rewrite`` method."""

    question: str
    collection: str | None = None
    documents: Sequence[str] | None = None
    history: Sequence[str] = field(default_factory=tuple)
    chat: int | str | None = None
    rewrite: str = "keywords"


def resolve_documents(store: Store, ids: Sequence[str] | None) -> list[str] | None:
    """Full ids for ``ids`` (ids or unique prefixes, as ``--doc``); 404 naming those that match no document, 409
    naming those still queued or indexing (asked within them now, the gate would refuse for want of chunks, which
    would read as "the documents do not say")."""
    if ids is None:
        return None
    found = {i: store.find_document(i) for i in ids}
    missing = [i for i, d in found.items() if d is None]
    if missing:
        raise ApiError(404, "not_found", f"no document with id {', '.join(missing)} (full ids or unique prefixes)")
    busy = [d for d in found.values() if d.status in (DocStatus.QUEUED, DocStatus.INDEXING)]
    if busy:
        raise ApiError(409, "still_indexing", f"{busy[0].name}: still {busy[0].status}; ask again when it is ready",
                       file=busy[0].name)
    return list(dict.fromkeys(d.id for d in found.values()))


def open_turn(service: ApiService, q: Question, submitted: float | None = None) -> tuple[Conversation, TurnStream]:
    """The conversation and its turn for ``q``, ready to stream (a refusal yields nothing); its answer's
    ``first_words_ms`` runs from ``submitted`` (``time.perf_counter()`` when the request came, the wait for the
    model's slot included; default now). Raises :class:`rag.api.errors.ApiError` (404 unknown collection,
    document or chat; 503 models not ready)."""
    service.require_ready(model=True)
    store = service.store(q.collection)
    scope = resolve_documents(store, q.documents)
    chat_id = q.chat if isinstance(q.chat, int) else None
    if chat_id is not None and store.chats.get(chat_id) is None:
        raise not_found("chat", chat_id)
    try:
        conv = Conversation(store, store.settings, chat_id, history=list(q.history), save=q.chat is not None)
        return conv, conv.ask(q.question, scope=scope, rewrite=q.rewrite, submitted=submitted)
    except RagError as e:
        raise from_rag_error(e) from e
    except ValueError as e:
        raise ApiError(422, "invalid", str(e)) from e


def enter(service: ApiService) -> Ticket:
    """A place in the answer queue; 429 with ``Retry-After`` when it is full."""
    try:
        return service.answers.enter()
    except QueueFull as e:
        raise ApiError(429, "queue_full", str(e), retry_after=5.0) from e


def answer(service: ApiService, q: Question) -> dict[str, Any]:
    """Wait for the model, answer ``q`` to the end, and return its record (:func:`rag.api.records.turn_json`).
    Raises :class:`rag.api.errors.ApiError` (429 queue full, 404, 503)."""
    submitted = time.perf_counter()
    service.require_ready(model=True)
    ticket = enter(service)
    try:
        ticket.wait()
        conv, turn = open_turn(service, q, submitted)
        try:
            a = turn.run()
        except RagError as e:
            raise from_rag_error(e) from e
        return turn_json(turn, a, conv.chat_id)
    finally:
        ticket.leave()
