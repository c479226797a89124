"""Hostile lines through every text stage (issue 35, item 6a): property-based, with hypothesis.

Generated lines of the shapes that hang backtracking code (dot leaders with and without a page number, long runs
of one character, deep brackets, huge tokens, mixed scripts, markup) go through extraction of a text file, role
tagging, chunking, sentence units and the question side's tokenizer; each must end, and the chunker's promise
(``canonical[start:end] == content``) must hold. A stage that took seconds on one such line would show as a
failure with the shrunk example; the bound is generous (a hang, not a speed, is what it catches).
"""

from __future__ import annotations

import subprocess
import sys
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag.errors import ExtractionError
from rag.ingest.chunk import chunk_document, chunk_units
from rag.ingest.extract import extract_bytes
from rag.ingest.roles import find_roles
from rag.text import sentences, tokenize, units

#: Seconds one stage may take on one generated document before it counts as hung.
HANG_S = 5.0

_ATOMS = [".", ". ", " ", "-", "—", "…", "1", "a", "A", "é", "中", "ب", "(", ")", "[", "]", "<", ">", "|", "#", "*",
          "_", "\\", "\n", "\t", "\u00a0", "» ", "http://", "[[", "{#", ":", ",", "$", "'"]
_run = st.builds(lambda a, n: a * n, st.sampled_from(_ATOMS), st.integers(1, 3000))
_leader = st.builds(lambda t, n, p: t + " " + ". " * n + p, st.text(min_size=1, max_size=30),
                    st.integers(3, 2000), st.sampled_from(["", "12", "iv", "x", "...", " 12 13"]))
_line = st.lists(st.one_of(_run, _leader, st.text(max_size=200)), min_size=1, max_size=6).map("".join)
_document = st.lists(_line, min_size=1, max_size=12).map(lambda ls: "# Hostile\n\n" + "\n\n".join(ls))


def _timed(fn, *args, **kwargs):
    t = time.process_time()
    out = fn(*args, **kwargs)
    assert time.process_time() - t < HANG_S, f"{fn.__name__} took {time.process_time() - t:.1f} s"
    return out


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_document)
def test_every_text_stage_ends_on_hostile_lines_and_offsets_hold(text):
    try:
        doc = _timed(extract_bytes, text.encode("utf-8"), "hostile.md")
    except ExtractionError:  # refused with a reason (binary-looking bytes, nothing to read): it ended
        return
    _timed(find_roles, doc)
    chunks = _timed(chunk_document, doc)
    for c in chunks:
        assert doc.canonical[c.start:c.end] == c.content
        for a, b in _timed(chunk_units, c):
            assert c.start <= a < b <= c.end
    _timed(units, doc.canonical)
    _timed(sentences, doc.canonical, 0, len(doc.canonical))


@settings(max_examples=40, deadline=None)
@given(_line)
def test_a_hostile_question_is_tokenized_at_once(line):
    _timed(tokenize, line)


def test_rag_ingest_ends_on_a_file_of_dot_leaders(tmp_path):
    """End to end, in a subprocess with a timeout: the file that hung indexing for good (dot leaders with no page
    number, the shape of a manual's 'Notices . . . . . . .') is indexed, and the command ends."""
    f = tmp_path / "manual.md"
    f.write_text("# Manual\n\n" + "\n".join(f"Notices {'. ' * (20 + i)}" for i in range(200)) + "\n\nBody text here.\n")
    p = subprocess.run([sys.executable, "-m", "rag", "ingest", "--store", str(tmp_path / "store"), str(f)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "manual.md" in p.stdout + p.stderr
