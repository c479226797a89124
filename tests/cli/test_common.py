"""rag.cli: the benchmark commands' ``--shared`` option, and logging that keeps third-party debug records out."""

from __future__ import annotations


def test_bench_commands_take_the_shared_option():
    from click.testing import CliRunner

    from rag.cli.main import main

    for cmd in ("retrieval", "extract", "answers"):
        r = CliRunner().invoke(main, ["bench", cmd, "--help"])
        assert r.exit_code == 0 and "--shared" in r.output, r.output


def test_cli_logging_keeps_third_party_debug_records_out():
    import subprocess
    import sys

    code = ("import logging\nfrom rag.cli.main import configure_logging\nconfigure_logging(0)\n"
            "logging.getLogger('bm25s').setLevel(logging.DEBUG)\nlogging.getLogger('bm25s').debug('Building index')\n"
            "logging.getLogger('rag.x').warning('kept')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "WARNING rag.x: kept" in r.stderr and "Building index" not in r.stderr
