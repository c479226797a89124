"""The benchmarks (``python -m rag bench ...``): what they measure, apart from the commands that print it.

* :mod:`rag.evaluation.bench.machine` - the header every figure is printed under (date, machine, load average),
  percentiles, process memory;
* :mod:`rag.evaluation.bench.corpora` - the shared corpora (paths, their questions through
  :mod:`rag.evaluation.data`, chunked as the product does) and a store holding one;
* :mod:`rag.evaluation.bench.extract` - stage 1: coverage, OCR, tables, joins, pages/s, needle pages;
* :mod:`rag.evaluation.bench.real` - stage 1 on the real documents of every format: needles by placement and
  format, coverage, warnings, seconds (issue 37);
* :mod:`rag.evaluation.bench.files` - every failure input and real document through the whole indexing path:
  outcome, reason, seconds, memory, the stage of a failure, hangs (issue 35);
* :mod:`rag.evaluation.bench.retrieval` - stage times, recall per wording, the indexes at scale;
* :mod:`rag.evaluation.bench.scale` - ingest, the float / int8 encoders, local FAISS + bm25s against Milvus;
  :mod:`rag.evaluation.bench.curve` - the dense and BM25 indexes replicated to 1M chunks;
* :mod:`rag.evaluation.bench.answers` - is the fact asked for in the answer (answer keys, per wording);
* :mod:`rag.evaluation.bench.speed` - the bare encoder against the product's ingest, search, and first words (issue 41);

Recall and rank figures come from :mod:`rag.evaluation.metrics` (first rank holding the needle, recall@k, paired
sign tests), questions from :mod:`rag.evaluation.data`, so a benchmark and ``rag eval`` count alike. Times are
printed with the load average beside them and never enforced; the commands in ``rag/cli/bench_*.py`` only parse
flags and print.
"""
