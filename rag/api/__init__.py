"""The HTTP API and the MCP server (issue 38): the same honest answers for programs and AI assistants.

A layer above :mod:`rag.answer` and below :mod:`rag.cli` (``rag serve``, ``rag mcp``): every route calls the
library functions the app and the CLI call (:class:`rag.answer.conversation.Conversation` for a turn,
:meth:`rag.store.store.Store.search` for a search, the durable job queue for uploads), never a second pipeline.
One concern per module:

* :mod:`rag.api.service` - the stores of each collection, the worker thread that indexes uploads, the models'
  warm-up (503 while they load) and :mod:`rag.api.answer_queue` (one model answers one question at a time, the
  others wait in a bounded queue: 429 when it is full);
* :mod:`rag.api.schemas` - the requests and responses as pydantic models (what ``/docs`` shows);
* :mod:`rag.api.records` - the JSON of documents, jobs, hits, passages and turns (the ``ask --json`` record);
* :mod:`rag.api.turns` - one question taken through the queue and the conversation, for every route;
* :mod:`rag.api.uploads` - an upload's limits before it is queued (size, type sniffed from the bytes);
* :mod:`rag.api.routes` - the REST endpoints; :mod:`rag.api.stream` - ``/v1/ask`` as Server-Sent Events;
* :mod:`rag.api.openai_compat` - ``/v1/chat/completions`` and ``/v1/models`` for existing chat clients;
* :mod:`rag.api.mcp_server` - the MCP tools and resources (stdio, and streamable HTTP at ``/mcp``);
* :mod:`rag.api.auth` - bearer tokens (hashed, revocable) and the rule that only a loopback bind runs without;
* :mod:`rag.api.errors` - clear JSON errors with the file's name and the reason;
* :mod:`rag.api.app` - the FastAPI application put together; :mod:`rag.api.server` - uvicorn, and the start rule.

``docs/api.md`` is the reference, with the concurrency benchmark's figures.
"""
