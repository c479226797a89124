"""Stages 3-6 of the design: embed, index, search (in memory; the persistent store is :mod:`rag.store`).

* :mod:`rag.index.embed` - all-MiniLM-L6-v2 (float PyTorch, or int8 ONNX: the default for new stores), offline,
  ``(n, 384)`` float32 L2-normalised vectors (word-pieces are counted by :mod:`rag.tokens`);
* :mod:`rag.index.dense` - FAISS, exact ``IndexFlatIP`` below 20k chunks and IVF-Flat above (the dense leg);
  :mod:`rag.index.units` - unit (sentence) vectors beside the chunk vectors: a chunk's dense score is the best
  of its own and its units' (issue 27);
  :mod:`rag.index.bm25` - BM25 (the lexical leg) over :mod:`rag.index.analyzer` terms (stemmed in each
  document's language, issue 19; the language from :mod:`rag.language`);
* :mod:`rag.index.fusion` - reciprocal rank fusion, BM25's vote weighted by how much of the question its best
  chunk covers (issue 19), and :func:`rag.index.fusion.retrieve`;
* :mod:`rag.index.rerank` - the optional cross-encoder.

Layer: imports only the ground floor (``rag.types``, ``rag.text``, ``rag.tokens``, ``rag.language``,
``rag.settings``, ``rag.models``, ``rag.errors``); never :mod:`rag.ingest`, :mod:`rag.store` or above
(``tests/test_layers.py``).
"""
