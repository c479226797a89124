"""The command line (``python -m rag``, or ``rag`` once installed): one module per group of commands.

* :mod:`rag.cli.main` - the group and the explicit list of subcommands;
* :mod:`rag.cli.store` - ``ingest``, ``status``, ``search``, ``delete``;
* :mod:`rag.cli.answer` - ``ask``, ``bench answers``;
* :mod:`rag.cli.eval` - ``eval``;
* :mod:`rag.cli.bench_extract` - ``bench extract``; :mod:`rag.cli.bench_retrieval` - ``bench retrieval``;
* :mod:`rag.cli.doctor` - ``doctor``;
* :mod:`rag.cli.common` - what the benchmarks and ``eval`` share: the header (date, machine, load),
  percentiles, the shared corpora's paths, a store holding a corpus.
"""
