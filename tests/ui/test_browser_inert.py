"""Issue 26: a URL, a ``www.`` name or an e-mail address quoted from a document is text in the chat, never a link.

``markdown_literal`` escapes them, but Streamlit's renderer (remark-gfm) links URLs in the parsed text after the
escapes are resolved: a quoted ``[x](https://...)`` was a live link on the chat page (first-hour walk,
2026-12-01). This renders the escaped text with Streamlit's own ``st.markdown`` in Chromium and reads the DOM.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser]

CHROMIUM = Path(os.environ.get("RAG_CHROMIUM", "/usr/bin/chromium"))
ROOT = Path(__file__).resolve().parents[2]
QUOTED = "see [Weights & Biases](https://wandb.example/x), mail ops@corp.example or visit www.evil.example now"

PAGE = f'''
import streamlit as st
from rag.text import markdown_literal
from ui.format import blockquote
st.markdown(markdown_literal({QUOTED!r}, blocks=False))
st.markdown(blockquote({QUOTED!r}))
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_quoted_urls_and_addresses_are_no_links_in_streamlit(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not installed (make browser installs it as root)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed")
    script = tmp_path / "page.py"
    script.write_text(PAGE, encoding="utf-8")
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
                             "--server.address", "127.0.0.1", "--server.port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM),
                                         args=["--headless=new", "--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}")
            blocks = page.locator('[data-testid="stMarkdownContainer"]')
            sync_api.expect(blocks.nth(1)).to_contain_text("now", timeout=60_000)
            for i in range(2):
                block = blocks.nth(i)
                assert block.locator("a").count() == 0, block.inner_html()
                shown = block.inner_text().replace("\u2060", "")
                assert "[Weights & Biases](https://wandb.example/x)" in shown  # the characters, as written
                assert "ops@corp.example" in shown and "www.evil.example" in shown
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
