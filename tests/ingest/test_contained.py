"""Extraction in a child process with memory and time limits (issue 26 item 2): a runaway fails its own file.

The runaways are test readers (``tests/runaway.py``) so that these tests do not depend on which reader
limit (issue 26 item 1) a real bomb would hit first; one test at the end uses a real bomb made here.
"""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest

from rag.errors import Cancelled, ExtractionError, LimitExceeded
from rag.ingest.contained import ContainedExtractor, rss_mb
from rag.ingest.extract import extract_bytes

TESTS = Path(__file__).resolve().parents[1]
MD = b"# Title\n\nSome words about containment.\n\n## Part\n\nMore words here."


@pytest.fixture
def runaway(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(TESTS) + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def make(memory_mb: int = 400, seconds: float = 30) -> ContainedExtractor:
        return ContainedExtractor(memory_mb, seconds, target="runaway:behave")

    return make


def test_a_file_read_in_the_child_is_the_same_document_as_read_here():
    with ContainedExtractor(1024, 60) as ex:
        doc = ex.extract(MD, "t.md")
        again = ex.extract(MD.replace(b"Title", b"Other"), "u.md")  # the same child serves the next file
    assert doc == extract_bytes(MD, "t.md")
    assert again.title == "Other"


def test_the_readers_refusals_come_back_as_they_are():
    with ContainedExtractor(1024, 60) as ex:
        with pytest.raises(ExtractionError, match="empty file"):
            ex.extract(b"", "e.md")
        assert ex.extract(MD, "t.md").title == "Title"  # the child is still serving


def test_memory_runaway_is_stopped_at_the_limit_and_the_next_file_is_read(runaway):
    ex = runaway(memory_mb=300)
    t0 = time.monotonic()
    with pytest.raises(LimitExceeded, match=r"extraction needed .* MB, over the limit of 300 MB \(setting extract_memory_mb\)") as info:
        ex.extract(b"eat 4000", "bomb.md")
    assert time.monotonic() - t0 < 30
    assert info.value.limit == "extract_memory_mb" and info.value.figure >= 300
    assert ex.last_peak_mb < 300 + 200  # stopped near the limit, not at 4 GB
    assert ex.extract(MD, "t.md").title == "Title"  # a fresh child reads the next file
    ex.close()


def test_time_runaway_is_stopped_after_the_limit(runaway):
    ex = runaway(seconds=2)
    t0 = time.monotonic()
    with pytest.raises(LimitExceeded, match=r"extraction took longer than the limit of 2 s \(setting extract_seconds\)") as info:
        ex.extract(b"sleep", "slow.md")
    assert 2 <= time.monotonic() - t0 < 20 and info.value.limit == "extract_seconds"
    assert ex.extract(MD, "t.md").title == "Title"
    ex.close()


def test_a_reader_crash_fails_its_file_only(runaway):
    ex = runaway()
    with pytest.raises(ExtractionError, match=r"crashed on this file \(SIGSEGV\)"):
        ex.extract(b"crash", "c.md")
    with pytest.raises(ExtractionError, match="the reader failed on this file .*a reader bug"):
        ex.extract(b"raise", "r.md")
    assert ex.extract(MD, "t.md").title == "Title"
    ex.close()


def test_cancel_stops_the_child(runaway):
    ex = runaway()
    t0 = time.monotonic()
    with pytest.raises(Cancelled):
        ex.extract(b"sleep", "slow.md", should_stop=lambda: time.monotonic() - t0 > 1)
    assert time.monotonic() - t0 < 10 and ex._proc is None
    ex.close()


def test_the_parent_never_builds_anything_but_records():
    import pickle

    from rag.ingest.contained import _loads

    with pytest.raises(pickle.UnpicklingError, match=r"refused to build (os|posix)\.system"):
        _loads(pickle.dumps(("ok", os.system)))


def _frames_tiff(frames: int, side: int) -> bytes:
    """A TIFF of ``frames`` pages of ``side`` x ``side`` white pixels (tiny on disk, huge decoded)."""
    from PIL import Image

    buf = io.BytesIO()
    first = Image.new("1", (side, side), 1)
    first.save(buf, format="TIFF", save_all=True, compression="group4",
               append_images=[Image.new("1", (side, side), 1) for _ in range(frames - 1)])
    return buf.getvalue()


def test_a_real_image_bomb_fails_alone_and_the_parent_stays_small():
    """A TIFF of 12 frames of 6000 x 6000 (about 1.3 GB decoded as RGB): whichever limit stops it (a
    reader's pixel limit, or the child's memory), it fails with a reason naming a limit, in seconds, and
    this process does not grow."""
    bomb = _frames_tiff(12, 6000)
    assert len(bomb) < 200_000
    before = rss_mb(os.getpid())
    with ContainedExtractor(700, 120) as ex:
        t0 = time.monotonic()
        with pytest.raises(ExtractionError) as info:
            ex.extract(bomb, "frames.tiff")
        took = time.monotonic() - t0
        assert ex.extract(MD, "t.md").title == "Title"
    assert took < 120
    assert "limit" in info.value.reason or "pixels" in info.value.reason or "frames" in info.value.reason, \
        info.value.reason
    assert rss_mb(os.getpid()) - before < 100  # the decoded frames never came into this process
