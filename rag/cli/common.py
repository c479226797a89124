"""What several commands share: the ``--shared`` option (the folder holding the shared corpora).

The benchmarks' header, percentiles, memory figures and corpora live in :mod:`rag.evaluation.bench`.
"""

from __future__ import annotations

from pathlib import Path

import click

shared_option = click.option("--shared", "shared", type=click.Path(file_okay=False, path_type=Path), default=None,
                             help="The shared folder holding corpus/ (default: settings shared, env RAG_SHARED, "
                                  "else ../shared).")
