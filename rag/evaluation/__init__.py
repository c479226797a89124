"""The design's retrieval evaluation ("How retrieval is judged"), one concern per module:

* :mod:`rag.evaluation.data` - questions (needle + two phrasings), out-of-domain queries, the store's documents;
* :mod:`rag.evaluation.metrics` - recall@k, MRR, equal-budget recall, Wilson intervals, paired sign tests;
* :mod:`rag.evaluation.cache` - the embedding cache (each chunk text embedded once);
* :mod:`rag.evaluation.indexes` - throwaway in-memory indexes per chunking strategy;
* :mod:`rag.evaluation.records` - what a run produces (:class:`~rag.evaluation.records.EvalResult`);
* :mod:`rag.evaluation.sweeps` - refusal sweeps of the gates and the recommended threshold;
* :mod:`rag.evaluation.runner` - :func:`~rag.evaluation.runner.run_evaluation`, the orchestrator;
* :mod:`rag.evaluation.report` and :mod:`rag.evaluation.plots` - the Markdown report, ``report.json``, the PNGs;
* :mod:`rag.evaluation.answers` - answer keys and whether an answer holds one (``bench answers``);
* :mod:`rag.evaluation.followup` - follow-up dialogues and their rewrites (``bench followup``);
* :mod:`rag.evaluation.loco` - leave-one-corpus-out fits of the gate (``scripts/gate_loco.py``);
* :mod:`rag.evaluation.gate_bands` - what the gate decides against where the passage is, per corpus and wording,
  and gate candidates fitted on one corpus and held out on the others (``scripts/gate_bands.py``, issue 40);
* :mod:`rag.evaluation.confidence` - each answer feature's separation, the answer combiner fitted
  leave-one-corpus-out and its reliability tables (issue 39); ``questions/`` our own question sets;
* :mod:`rag.evaluation.bench` - the benchmarks (extraction, retrieval, scale) behind ``python -m rag bench``.

Nothing here imports streamlit or the CLI: the CLI (``rag/cli/eval.py``, ``rag/cli/bench_*.py``) and the app page
(``app_pages/3_Evaluation.py``) call ``run_evaluation`` and ``write_report``.
"""
