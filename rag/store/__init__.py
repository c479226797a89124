"""The persistent store's background work (issue 25): the durable job queue and the one worker per store.

* :mod:`rag.store.jobs` - the job table in the store's own SQLite (queued / running / done / failed /
  cancelled), its leases and heartbeats, progress and cancellation;
* :mod:`rag.store.worker` - the worker: one per store (``locks/worker.lock``), claims jobs, runs extraction
  in a contained child process (:mod:`rag.ingest.contained`), chunks, embeds and commits each document and its
  job in one transaction;
* :mod:`rag.store.sync` - the folder rules shared by ``ingest --sync`` and ``rag watch`` (which files, which
  documents leave), and the watcher.
"""
