"""What every real-browser test shares: the app served by ``streamlit run`` on a free port, and headless Chromium.

One place for the server start (free port, health poll, log file, stop), the Chromium launch and the skips, so
the five browser test files (``tests/ui/test_browser*.py``) differ only in what they do in the page. Recipes:
``../shared/BROWSER.md``. Waits are bounded, never asserted (shared 2-core machines).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM = Path(os.environ.get("RAG_CHROMIUM", "/usr/bin/chromium"))
#: Debian's Chromium, headless, without the background traffic it would try on a machine with no network.
LAUNCH_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update"]
#: Seconds ``streamlit run`` may take to answer its health check.
START_S = 120


def free_port() -> int:
    """``RAG_TEST_PORT`` when set (a port range of one's own on a shared machine), else any free port."""
    if os.environ.get("RAG_TEST_PORT"):
        return int(os.environ["RAG_TEST_PORT"])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def require_chromium() -> None:
    """Skip unless Debian's Chromium and Playwright's Python package are installed (``make browser``)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not installed (make browser installs it as root)")
    pytest.importorskip("playwright.sync_api", reason="playwright not installed")


def require_model() -> None:
    """Skip unless llama-cpp-python and the default GGUF are there (an answer needs the local model)."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed: the answer needs the local model")
    from rag.models import QWEN_05B
    from rag.settings import get_settings

    if not (get_settings().models_dir / QWEN_05B.file_name).is_file():
        pytest.skip("the default GGUF is not provisioned (make models)")


def healthy(base: str) -> bool:
    """Whether the Streamlit server at ``base`` answers its health check now."""
    try:
        return urllib.request.urlopen(f"{base}/_stcore/health", timeout=2).read() == b"ok"
    except OSError:
        return False


@contextlib.contextmanager
def streamlit_app(env: Mapping[str, str | None], log_name: str, script: str | Path = "app.py",
                  port: int | None = None) -> Iterator[tuple[str, subprocess.Popen]]:
    """``streamlit run script`` from the repository root, headless on 127.0.0.1 (a free port unless ``port``),
    offline; yields ``(base URL, process)`` once healthy and stops it after (SIGTERM, then SIGKILL after 20 s).

    ``env`` is laid over this process's environment; a ``None`` value removes the variable. Its output goes to
    ``test-artifacts/browser/<log_name>``. Fails the test when the server exits or is not healthy within
    :data:`START_S` seconds.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    full = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    for k, v in env.items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    log_path = ARTIFACTS / log_name
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none",
             "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=full, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + START_S
            while not healthy(base):
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"streamlit did not start; see {log_path}")
                time.sleep(0.3)
            yield base, proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """Headless Chromium (:data:`CHROMIUM`, :data:`LAUNCH_ARGS`) through Playwright; yields the ``Browser``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def new_context(browser, height: int, timeout_ms: int, **kw):
    """A 1280-pixel-wide page context of ``height`` pixels whose waits default to ``timeout_ms``."""
    context = browser.new_context(viewport={"width": 1280, "height": height}, **kw)
    context.set_default_timeout(timeout_ms)
    return context


def expect_shown_once(page, text: str, timeout_ms: int, settle_s: float = 30.0) -> None:
    """Wait until ``text`` is on the page, then until it is there exactly once (a page whose fragment ends a file
    reruns the whole app, and for a moment Streamlit keeps the fragment's old elements beside the new ones: a
    strict locator then fails on the same line twice). Fails if the line is still shown twice after
    ``settle_s`` (the one upload list, issue 42)."""
    from playwright.sync_api import expect

    loc = page.get_by_text(text)
    expect(loc.first).to_be_visible(timeout=timeout_ms)
    deadline = time.monotonic() + settle_s
    while loc.count() != 1:
        assert time.monotonic() < deadline, f"{text!r} shown {loc.count()} times"
        page.wait_for_timeout(250)
