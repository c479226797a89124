"""The persistent store (design "What the store must promise"): documents, chunks, their index files, chats,
and the background work that fills it (issue 25).

* :mod:`rag.store.store` - :class:`rag.store.store.Store`, the facade the app, the CLI and the answer layer use
  (SQLite is the source of truth);
* :mod:`rag.store.schema` - the SQLite file, its schema version and numbered migrations;
* :mod:`rag.store.locks` - the write lock and the per-document locks (several processes may share a store);
* :mod:`rag.store.prepare` - the slow half of an ingest (extract, chunk, embed; no lock held, nothing written);
* :mod:`rag.store.writer` - the ingest path: bytes -> :mod:`rag.ingest` (extract, chunk) -> :mod:`rag.index`
  (embed) -> rows -> index delta, in two halves joined by the job table (accept, then run);
  :mod:`rag.store.rows` the rows it writes and the versions of a document; :mod:`rag.store.results` what it
  tells its caller (``IngestResult``, ``OnConflict``); :mod:`rag.store.sentences` the sentence units embedded
  once the document is searchable (issue 41);
* :mod:`rag.store.queueing` - the store's queue methods (enqueue, jobs), mixed into the facade;
* :mod:`rag.store.jobs` - the durable job queue in the store's own SQLite (queued / running / done / failed /
  cancelled), leases, heartbeats, progress, cancellation (issue 25);
* :mod:`rag.store.worker` - the worker: one per store (``locks/worker.lock``), takes jobs, runs extraction in a
  contained child process (:mod:`rag.ingest.contained`, issue 26), commits each document with its job;
  :mod:`rag.store.read_ahead` reads the next queued file in a second child while the current one embeds (setting
  ``read_ahead``, issue 41);
* :mod:`rag.store.sync` - the folder rules of ``ingest --sync`` and ``rag watch``, and the folder watcher;
* :mod:`rag.store.cache` - the search indexes of each generation (one rebuild path, term statistics, what the
  layers above derive from the rows), held by a search backend: :mod:`rag.store.backend` (the interface and the
  local FAISS + bm25s files) or :mod:`rag.store.milvus` (a Milvus collection, issue 18);
* :mod:`rag.store.facts` - what extraction learned, kept per document (page spans, locator parts, OCR pages,
  language; issue 23);
* :mod:`rag.store.records` - the records the reads return; :mod:`rag.store.check` - the promises checked;
* :mod:`rag.store.backup` - consistent copies of the SQLite file (issue 26);
* :mod:`rag.store.chats` - the chats kept with the store (issue 16);
* :mod:`rag.store.derived` - what the answer layer derives from one document (its overview), kept with the store
  and removed with the document (issue 29).

Layer: above :mod:`rag.ingest` and :mod:`rag.index` (it calls both, downwards), below :mod:`rag.answer`;
``tests/test_layers.py`` pins it.
"""
