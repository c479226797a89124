"""An OpenAI-compatible endpoint (issue 38, item 2): ``POST /v1/chat/completions`` and ``GET /v1/models``, so
the ``openai`` client, open-webui or LibreChat can ask the documents.

* Models: ``rag`` asks the default collection, ``rag/<name>`` another one (``GET /v1/models`` lists them).
* The question is the last ``user`` message; the earlier ``user`` messages are the history a follow-up is made
  standalone from (:mod:`rag.answer.followup`). ``documents`` (ids or prefixes) may come as an extra body field.
  Sampling knobs (``temperature``, ``max_tokens``, ...) are accepted and ignored: decoding is greedy.
* The reply's ``content`` is the checked answer with its ``[n]`` (the claim check's, never the model's unchecked
  words), then one ``[n] locator`` line per cited source; a refusal is its ``NO ANSWER`` line. The whole record
  (:func:`rag.api.records.turn_json`: citations as data, verdict, confidence) travels in the extra ``rag`` field
  of the completion (and of the last chunk when streaming).
* ``"stream": true`` gives ``chat.completion.chunk`` events; the content comes once the claim check is done
  (sent in word pieces), because a client shows every delta it receives and the check may remove sentences:
  a streamed claim could not be taken back. For the model's words as they come, use ``/v1/ask`` with ``stream``.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from rag.api import schemas, turns
from rag.api.errors import ApiError
from rag.api.service import ApiService

#: The model id of the default collection; ``rag/<name>`` names another collection.
MODEL = "rag"
_MARKER = re.compile(r"\[(\d{1,3})\]")


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    """The OpenAI chat-completions body (extra fields accepted and ignored, except ``documents``)."""

    model_config = ConfigDict(extra="allow")
    model: str = MODEL
    messages: list[Message] = Field(min_length=1, max_length=200)
    stream: bool = False
    documents: list[str] | None = Field(None, max_length=schemas.MAX_SCOPE)


def _text(m: Message) -> str:
    """A message's text: its string content, or its ``text`` parts joined."""
    if isinstance(m.content, str):
        return m.content
    return " ".join(str(p.get("text", "")) for p in m.content or [] if p.get("type") == "text")


def collection_of(model: str) -> str | None:
    """``rag`` -> ``None`` (the default collection); ``rag/<name>`` -> ``name``; 404 for another model id."""
    if model == MODEL:
        return None
    if model.startswith(MODEL + "/") and len(model) > len(MODEL) + 1:
        return model[len(MODEL) + 1:]
    raise ApiError(404, "model_not_found", f"no model {model!r}; the models are {MODEL!r} and {MODEL}/<collection> "
                                           "(GET /v1/models)")


def question_of(req: ChatRequest) -> turns.Question:
    """The last user message as the question, the earlier user messages as its history."""
    users = [_text(m) for m in req.messages if m.role == "user"]
    if not users or not users[-1].strip():
        raise ApiError(422, "invalid", "messages: the last user message is empty (nothing to answer)")
    if len(users[-1]) > schemas.MAX_QUESTION_CHARS:
        raise ApiError(422, "invalid", f"messages: the question is over {schemas.MAX_QUESTION_CHARS} characters")
    return turns.Question(users[-1], collection_of(req.model), req.documents, tuple(users[:-1][-50:]))


def content_of(record: dict[str, Any]) -> str:
    """The reply's text: the checked answer and one line per source it cites, or the refusal."""
    if record.get("refused"):
        return record.get("refusal") or "NO ANSWER"
    text = record.get("answer") or ""
    if record.get("notice"):
        text = f"{record['notice']}\n\n{text}".strip()
    cited = {int(n) for n in _MARKER.findall(text)}
    kp = record.get("key_passage") or {}
    if record.get("answer_from") == "key_passage" and kp.get("index"):
        cited.add(kp["index"])
    lines = [f"[{c['index']}] {c['locator_label']}" for c in record.get("citations", []) if c["index"] in cited]
    return text + ("\n\nSources:\n" + "\n".join(lines) if lines else "")


def _completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


def completion(record: dict[str, Any], model: str) -> dict[str, Any]:
    """A ``chat.completion`` object for ``record``, the record itself as its ``rag`` field."""
    tokens = int(record.get("tokens") or 0)
    return {"id": _completion_id(), "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content_of(record)},
                         "finish_reason": "stop", "logprobs": None}],
            "usage": {"prompt_tokens": 0, "completion_tokens": tokens, "total_tokens": tokens},
            "rag": record}


def chunks(record: dict[str, Any], model: str) -> Iterator[bytes]:
    """The ``chat.completion.chunk`` events of ``record`` (role, the content in word pieces, then the end with
    the ``rag`` field), and ``[DONE]``."""
    cid, created = _completion_id(), int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        body = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **extra}
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()

    yield chunk({"role": "assistant", "content": ""})
    words = content_of(record).split(" ")
    for i, w in enumerate(words):
        yield chunk({"content": w if i == 0 else " " + w})
    yield chunk({}, "stop", rag=record)
    yield b"data: [DONE]\n\n"


def build_openai_router() -> APIRouter:
    """``POST /v1/chat/completions`` and ``GET /v1/models``."""
    r = APIRouter(tags=["openai"])

    @r.get("/v1/models")
    def models(request: Request) -> dict[str, Any]:
        """``rag`` (the default collection) and ``rag/<name>`` for each other collection."""
        svc: ApiService = request.app.state.service
        ids = [MODEL] + [f"{MODEL}/{c.name}" for c in svc.collections.list() if not c.is_default]
        return {"object": "list", "data": [{"id": i, "object": "model", "created": int(svc.started),
                                            "owned_by": "local"} for i in ids]}

    @r.post("/v1/chat/completions", responses=schemas.ERRORS)
    async def chat(request: Request, body: ChatRequest) -> Any:
        """Answer the last user message from the documents (the ``rag`` field holds the whole record)."""
        svc: ApiService = request.app.state.service
        q = question_of(body)
        record = await run_in_threadpool(turns.answer, svc, q)
        if body.stream:
            return StreamingResponse(chunks(record, body.model), media_type="text/event-stream")
        return JSONResponse(completion(record, body.model))

    return r
