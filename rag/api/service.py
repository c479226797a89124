"""What the API serves from (issue 38): the stores of each collection, the worker that indexes uploads, the
models' warm-up and the answer queue. One :class:`ApiService` per server process, shared by the REST routes,
the OpenAI-compatible endpoint and the MCP tools.

* Stores: one :class:`rag.store.store.Store` per collection (:mod:`rag.collections`), opened on first use and
  kept, as the app keeps them (``ui/services.py``); thread-safe within the process.
* Uploads go to the store's durable job queue (:meth:`rag.store.store.Store.enqueue_bytes`: the original and a
  job row are written before the request is answered, so a restart loses nothing). A worker thread per store
  (:class:`rag.store.worker.Worker` over a second ``Store`` object of the same folder, so this process's searches
  see each document as soon as it is ready, as they do in the app's separate worker process) runs the jobs, and
  stops ``worker_idle_exit_s`` after the queue is empty; :meth:`ApiService.ensure_worker` starts it again on the
  next upload and at start-up for a store with jobs left. When another process's worker (the app's, ``rag
  worker``) serves the store, the thread leaves at once and that worker indexes the files.
* Models: :meth:`ApiService.warm` loads the embedder and the generator in a thread at start-up; until then a
  search or an answer gets 503 with ``Retry-After`` (:meth:`ApiService.require_ready`). A missing model file is
  a 503 with its reason for the answers only: searches still work.
* The answer queue: :class:`rag.api.answer_queue.AnswerQueue`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from rag.answer import pipeline
from rag.answer.refresh import after_indexing
from rag.api.answer_queue import AnswerQueue
from rag.api.errors import ApiError, not_found
from rag.collections import DEFAULT, Collections
from rag.errors import ModelError, RagError, StoreError
from rag.settings import Settings
from rag.store.store import Store
from rag.store.worker import Worker

logger = logging.getLogger(__name__)

#: Seconds a client is told to wait (``Retry-After``) while the models load.
LOADING_RETRY_S = 5.0


class ApiService:
    """The server's state (see the module docstring).

    ``settings`` the server's :class:`rag.settings.Settings` (``store`` is the data folder holding every
    collection); ``max_waiting`` questions that may wait for the model (one more gets 429); ``idle_exit_s`` how
    long a worker thread waits with nothing to do before it stops (default settings ``worker_idle_exit_s``;
    0 = never).
    """

    def __init__(self, settings: Settings, *, max_waiting: int = 8, idle_exit_s: float | None = None):
        self.settings = settings
        self.collections = Collections(settings.store)
        self.answers = AnswerQueue(max_waiting)
        self.idle_exit_s = float(settings.worker_idle_exit_s if idle_exit_s is None else idle_exit_s) or None
        self._stores: dict[Path, Store] = {}
        self._workers: dict[Path, threading.Thread] = {}
        self._running: dict[Path, Worker] = {}
        self._lock = threading.Lock()
        self.started = time.time()
        self.loading = True
        self.embedder_error: str | None = None
        self.model_error: str | None = None
        self.model_name = Path(settings.model_file).name

    # ------------------------------------------------------------------ stores

    def collection_path(self, collection: str | None) -> Path:
        """The store folder of ``collection`` (``None`` or ``default``: the data folder's own); 404 when unknown."""
        name = collection or self.settings.collection or DEFAULT
        try:
            return self.collections.get(name).path.resolve()
        except StoreError as e:
            raise not_found("collection", repr(name)) from e

    def store(self, collection: str | None = None) -> Store:
        """The process-wide store of ``collection`` (opened, or created for the default one, on first use)."""
        path = self.collection_path(collection)
        with self._lock:
            st = self._stores.get(path)
            if st is None:
                try:
                    st = Store(path, settings=self.settings.with_overrides(store=path))
                except RagError as e:
                    raise ApiError(503, "store_unavailable", str(e)) from e
                self._stores[path] = st
            return st

    # ------------------------------------------------------------------ the worker

    def ensure_worker(self, store: Store) -> bool:
        """Start the worker thread of ``store`` unless one runs in this process; ``True`` when one was started."""
        with self._lock:
            t = self._workers.get(store.path)
            if t is not None and t.is_alive():
                return False
            t = threading.Thread(target=self._work, args=(store.path,), name=f"rag-api-worker-{store.path.name}",
                                 daemon=True)
            self._workers[store.path] = t
            t.start()
            return True

    def _work(self, path: Path) -> None:
        try:
            own = Store(path, settings=self.settings.with_overrides(store=path))
            worker = self._running[path] = Worker(own, after_batch=after_indexing, idle_exit_s=self.idle_exit_s)
            n = worker.run(wait_for_lock=False)
            if n == -1:
                logger.info("another process's worker serves %s; it indexes the uploads", path)
            own.close()
        except Exception:  # noqa: BLE001 - logged; the next upload starts a new worker
            logger.exception("the worker of %s stopped", path)

    def resume_workers(self) -> int:
        """At start-up: a worker for every collection whose store has jobs left (queued, or interrupted)."""
        started = 0
        for c in self.collections.list():
            if not c.exists:
                continue
            try:
                st = self.store(None if c.is_default else c.name)
                if st.jobs.active():
                    started += self.ensure_worker(st)
            except (ApiError, RagError) as e:
                logger.warning("collection %s: jobs not resumed (%s)", c.name, e)
        return started

    # ------------------------------------------------------------------ models

    def warm(self) -> None:
        """Load the embedder of the default store, then the generator (``settings.model_file``), and mark the
        service ready; a failure is kept (``embedder_error`` / ``model_error``) and answered with 503."""
        try:
            try:
                _ = self.store().embedder.encode_query("warm up")
            except (ApiError, RagError, OSError) as e:
                self.embedder_error = str(e)
                logger.error("the embedder could not be loaded: %s", e)
            try:
                gen = pipeline.get_default_generator(self.settings)
                self.model_name = gen.name
            except (ModelError, OSError, ValueError) as e:
                self.model_error = str(e)
                logger.error("the model could not be loaded: %s", e)
        finally:
            self.loading = False

    def start(self, *, background: bool = True) -> None:
        """At start-up: resume the workers, then :meth:`warm` (in a thread with ``background``)."""
        self.resume_workers()
        if background:
            threading.Thread(target=self.warm, name="rag-api-warm-up", daemon=True).start()
        else:
            self.warm()

    def require_ready(self, *, model: bool) -> None:
        """Raise 503 while the models load, when the embedder failed, or (``model``) when the generator did."""
        if self.loading:
            raise ApiError(503, "models_loading", "the models are loading; try again in a few seconds",
                           retry_after=LOADING_RETRY_S)
        if self.embedder_error:
            raise ApiError(503, "model_unavailable", f"the embedder could not be loaded: {self.embedder_error}")
        if model and self.model_error:
            raise ApiError(503, "model_unavailable", f"the model could not be loaded: {self.model_error}")

    def health(self) -> dict[str, Any]:
        """``GET /healthz``: loading or ready, the model, the answer queue, the process."""
        return {"status": "loading" if self.loading else "ready", "model": self.model_name,
                "model_error": self.model_error, "embedder_error": self.embedder_error,
                "answering": self.answers.busy, "waiting": self.answers.waiting,
                "max_waiting": self.answers.max_waiting, "pid": os.getpid(),
                "uptime_s": round(time.time() - self.started, 1)}

    def close(self) -> None:
        """Stop the worker threads (a job under way is put back in the queue and resumes at the next start) and
        close every store this service opened."""
        for w in list(self._running.values()):
            w.stop()
        for t in list(self._workers.values()):
            t.join(timeout=10)
        with self._lock:
            for st in self._stores.values():
                st.close()
            self._stores.clear()
