"""Stages 3-6 of the design: embed, index, search (and the persistent store that holds it all).

* :mod:`rag.index.embed` - all-MiniLM-L6-v2 (float PyTorch, or int8 ONNX: the default for new stores), offline,
  ``(n, 384)`` float32 L2-normalised vectors;
* :mod:`rag.index.dense` - FAISS, exact ``IndexFlatIP`` below 20k chunks and IVF-Flat above (the dense leg);
  :mod:`rag.index.bm25` - BM25 (the lexical leg) over :mod:`rag.index.analyzer` terms (stemmed in each
  document's language, issue 19);
* :mod:`rag.index.backend` - the search backend interface and the local FAISS + bm25s backend;
  :mod:`rag.index.milvus` - the Milvus backend (milvus-lite file or server) and its index cache (issue 18);
* :mod:`rag.index.fusion` - reciprocal rank fusion, BM25's vote weighted by how much of the question its best
  chunk covers (issue 19), and :func:`rag.index.fusion.retrieve`;
* :mod:`rag.index.rerank` - the optional cross-encoder;
* :mod:`rag.index.store` - the persistent store: documents, chunks and search (SQLite is the source of truth),
  built from :mod:`rag.index.schema` (schema version, numbered migrations), :mod:`rag.index.locks` (write lock,
  per-document locks), :mod:`rag.index.cache` (the index files of each generation, one rebuild path, term
  statistics) and :mod:`rag.index.indexer` (the ingest path: extract -> chunk -> embed -> rows -> indexes).
"""
