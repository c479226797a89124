"""Issue 26 in a real browser: a decompression bomb uploaded on the Documents page fails its own document, and the
app keeps working with the web server's memory bounded; a PDF's served copy answers at its capability URL until the
document is deleted (by the CLI), then never again.

Playwright drives Debian's chromium against ``streamlit run app.py`` (as ``make run`` starts it). The TIFF is
made here like the handed ``r3_c7_frames.tiff`` (31 KB): 200 frames of 7000 x 7000 sharing one deflated strip,
70 KB on disk and 9.8 gigapixels decoded; uploaded before the limits, it took the Streamlit server from 1.3 GB to over
6 GB in 19 s and every session died with it. Now the page shows the document failed with a reason naming the
limit (setting ``max_image_total_megapixels``), and the same session goes on: a small text file is uploaded and
indexed, a question about it is answered with a citation, and the server process's peak resident memory
(``VmHWM``, sampled with its current ``VmRSS`` every 0.2 s) stays under :data:`SERVER_PEAK_BOUND`. Screenshots
and the memory figures go to test-artifacts/browser/bomb-*.

Skips (with the reason) when chromium, Playwright, llama-cpp-python or the default GGUF are missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import hostile_files as hf
import pytest
from browser_app import ARTIFACTS, ROOT, chromium, healthy, new_context, require_chromium, require_model, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SLOW_MS = 600_000  # indexing and a local LLM on 2 shared cores: bounds a wait, never an assertion
MiB = 1024 * 1024
#: The web server's peak resident memory over the whole test: the app with the embedder and the 0.5B model loaded
#: (measured: see the test's artifacts), far below the 6 GB the bomb alone took before its limits.
SERVER_PEAK_BOUND = 3 * 1024 * MiB
#: What the bomb may add to the server's peak, the embedder's first load included (issue 26: a bomb under 1 GB).
BOMB_GROWTH_BOUND = 1024 * MiB
NOTES = ("# Boiler room\n\nThe boiler is serviced every May by Harlow Heating. The pressure relief valve is tested "
         "every Monday by the shift engineer.\n\n## Keys\n\nThe boiler room key hangs in the security office.\n")
QUESTION = "When is the boiler serviced?"


class Memory:
    """The server process's resident memory, from ``/proc/<pid>/status``: ``peak`` (``VmHWM``, bytes) and the
    largest ``VmRSS`` a 0.2 s sampler saw; readings are taken while :meth:`watch` runs."""

    def __init__(self, pid: int):
        self.pid, self.samples = pid, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def read(self, field: str) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
        raise LookupError(field)

    @property
    def peak(self) -> int:
        return self.read("VmHWM")

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            try:
                self.samples.append((time.monotonic(), self.read("VmRSS")))
            except (OSError, LookupError):
                return

    def watch(self) -> Memory:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)


@pytest.fixture(scope="module")
def requirements():
    require_chromium()
    require_model()


@pytest.fixture(scope="module")
def server(requirements, tmp_path_factory):
    """`streamlit run app.py` on a free port with an empty store in a temporary folder; yields (URL, process,
    store folder)."""
    store = tmp_path_factory.mktemp("bomb-store")
    # the app publishes where Streamlit serves: <repo>/static
    with streamlit_app({"RAG_STORE": str(store), "RAG_STATIC_DIR": None}, "bomb-streamlit.log") as (base, proc):
        yield base, proc, store


def test_a_tiff_bomb_fails_alone_and_the_app_keeps_answering(server, tmp_path):
    from playwright.sync_api import expect

    base, proc, _ = server
    bomb = hf.tiff_frames(200, 7000, 7000)
    assert len(bomb) < 100 * 1024  # 70 KB on disk (the handed file: 31 KB), 9.8 gigapixels decoded
    with chromium() as browser:
        page = new_context(browser, 1400, SLOW_MS).new_page()
        memory = Memory(proc.pid)
        try:
            page.goto(f"{base}/Documents")
            uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]')
            expect(uploader).to_be_attached(timeout=SLOW_MS)
            before = memory.peak
            memory.watch()
            t0 = time.monotonic()
            uploader.set_input_files([{"name": "frames.tiff", "mimeType": "image/tiff", "buffer": bomb}])
            failed = page.get_by_text("frames.tiff: failed")
            expect(failed).to_be_visible(timeout=SLOW_MS)
            refused_s = time.monotonic() - t0
            reason = failed.inner_text()
            assert "200 frames hold 9,800 megapixels" in reason and "max_image_total_megapixels" in reason, reason
            after_bomb = memory.peak
            assert proc.poll() is None and healthy(base), "the web server died"
            page.screenshot(path=ARTIFACTS / "bomb-01-failed.png", full_page=True)

            # the same session goes on: a small file indexed, a question answered with a citation
            uploader.set_input_files([{"name": "boiler-room.md", "mimeType": "text/markdown",
                                       "buffer": NOTES.encode()}])
            expect(page.get_by_text("boiler-room.md: indexed")).to_be_visible(timeout=SLOW_MS)
            page.goto(base)
            before_ask = page.get_by_test_id("stChatMessage").count()
            page.get_by_test_id("stChatInputTextArea").fill(QUESTION)
            page.get_by_test_id("stChatInputTextArea").press("Enter")
            answer = page.get_by_test_id("stChatMessage").nth(before_ask + 1)
            expect(answer).to_contain_text("Sources", timeout=SLOW_MS)
            # the message is drawn again when the answer ends (a CI run read it mid-redraw: the verdict line only)
            expect(answer).to_contain_text("boiler-room.md", timeout=60_000)
            text = answer.inner_text()
            for _ in range(40):  # ... and again between that wait and the read (CI, 2026-12-06): read it whole
                if "boiler-room.md" in text:
                    break
                page.wait_for_timeout(250)
                text = answer.inner_text()
            assert "NO ANSWER" not in text and "May" in text, text[:800]
            link = answer.locator('a[href*="/Source?"][href*="n=1"]').first  # [1]'s viewer in a new tab
            expect(link).to_be_visible()
            assert "boiler-room.md" in text
            page.screenshot(path=ARTIFACTS / "bomb-02-answer.png", full_page=True)
            assert proc.poll() is None and healthy(base)
        finally:
            memory.stop()
    peak = memory.peak
    figures = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "load_average": os.getloadavg(),
               "bomb_refused_s": round(refused_s, 2), "server_peak_before_upload_mib": before // MiB,
               "server_peak_after_bomb_mib": after_bomb // MiB, "server_peak_end_mib": peak // MiB,
               "largest_rss_sampled_mib": max((r for _, r in memory.samples), default=0) // MiB}
    (ARTIFACTS / "bomb-memory.json").write_text(json.dumps(figures, indent=1))
    print(figures)
    assert after_bomb - before < BOMB_GROWTH_BOUND, figures
    assert peak < SERVER_PEAK_BOUND, figures


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, b""


def test_a_served_copy_answers_until_the_cli_deletes_its_document(server):
    """Issue 26, item 4 over HTTP: the link the app shows for a PDF is ``/app/static/<key>/<token>.pdf`` (nothing
    of the document's hash in it), Streamlit serves it, and after ``rag delete`` in another process it answers 404."""
    import pymupdf
    from playwright.sync_api import expect

    base, proc, store = server
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "The pressure vessel is inspected every spring by the insurer.", fontsize=11)
    pdf = doc.tobytes(garbage=3, deflate=True)
    doc_id = hashlib.sha256(pdf).hexdigest()
    with chromium() as browser:
        page = new_context(browser, 1400, SLOW_MS).new_page()
        try:
            page.goto(f"{base}/Documents")
            page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
                [{"name": "vessel.pdf", "mimeType": "application/pdf", "buffer": pdf}])
            expect(page.get_by_text("vessel.pdf: indexed")).to_be_visible(timeout=SLOW_MS)
            page.goto(f"{base}/Source?doc={doc_id}&start=0&end=20&n=1&page=1")
            link = page.get_by_role("link", name=re.compile("open the whole PDF"))
            expect(link).to_be_visible(timeout=SLOW_MS)
            href = link.get_attribute("href") or ""
            page.screenshot(path=ARTIFACTS / "served-01-source.png", full_page=True)
        finally:
            page.context.close()
    m = re.fullmatch(r"/app/static/([0-9a-f]{32})/([0-9a-f]{32})\.pdf#page=1", href)
    assert m and doc_id[:16] not in href, href
    url = base + href.split("#")[0]
    assert _get(url) == (200, pdf)  # the copy is the stored original, served
    assert _get(f"{base}/app/static/{doc_id}.pdf")[0] == 404  # nothing under the guessable name of before
    out = subprocess.run([sys.executable, "-m", "rag", "delete", "--store", str(store), doc_id[:12]], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, env={**os.environ, "RAG_STORE": str(store)})
    assert out.returncode == 0, out.stdout + out.stderr
    assert _get(url)[0] == 404
    assert proc.poll() is None
