"""The command line (``python -m rag``, or ``rag`` once installed): one module per group of commands.

* :mod:`rag.cli.main` - the group and the explicit list of subcommands;
* :mod:`rag.cli.store` - ``ingest``, ``status``, ``search``, ``delete``, ``bench retrieval``;
* :mod:`rag.cli.answer` - ``ask``, ``bench answers``;
* :mod:`rag.cli.eval` - ``eval``; :mod:`rag.cli.bench_extract` - ``bench extract``;
* :mod:`rag.cli.doctor` - ``doctor``; :mod:`rag.cli.common` - what the benchmarks share.
"""
