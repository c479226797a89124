"""The command line (``python -m rag``, or ``rag`` once installed): one module per group of commands, faces only
(the work is done by the library below; the benchmarks' logic lives in :mod:`rag.evaluation.bench`).

* :mod:`rag.cli.main` - the group and the explicit list of subcommands (``models``, ``doctor``, ``bench``);
* :mod:`rag.cli.store` - ``ingest``, ``status``, ``search``, ``delete``;
* :mod:`rag.cli.answer` - ``ask``;
* :mod:`rag.cli.chat` - ``chats list|show|export|rename|delete``, ``bench followup``;
* :mod:`rag.cli.collection` - ``--collection`` and ``collections list|create|rename|delete``;
* :mod:`rag.cli.jobs` - ``jobs``, ``worker``, ``watch`` (the queue, issue 25);
* :mod:`rag.cli.eval` - ``eval``;
* :mod:`rag.cli.bench_extract`, :mod:`rag.cli.bench_real`, :mod:`rag.cli.bench_files`, :mod:`rag.cli.bench_retrieval`,
  :mod:`rag.cli.bench_scale`, :mod:`rag.cli.bench_answers`, :mod:`rag.cli.bench_speed` -
  ``bench extract|real|files|retrieval|scale|answers|speed``;
* :mod:`rag.cli.doctor` - ``doctor``;
* :mod:`rag.cli.api` - ``serve``, ``mcp``, ``access create-token|tokens|revoke-token`` (issue 38, :mod:`rag.api`);
* :mod:`rag.cli.common` - the ``--shared`` option.
"""
