"""Issue 25 in a real browser: indexing outlives the page, and the sidebar shows the collection the page lists.

Playwright drives Debian's chromium against `streamlit run app.py`; the app starts its own worker process
(`rag worker`, the real embedder), as it does for a user. Five files are uploaded on the Documents page; as
soon as the first is being indexed the user opens the chat page, then closes the tab; a new tab finds all
five ready, with no action. Screenshots go to test-artifacts/browser/queue-*.png.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest
from browser_app import ARTIFACTS, chromium, new_context, require_chromium, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SLOW_MS = 900_000  # indexing with the real embedder on 2 shared cores: bounds a wait, never an assertion
TOPICS = ["harbour cranes", "cold store", "night shifts", "visitor badges", "fire drills"]


def _files(folder: Path) -> list[Path]:
    """Five Markdown files of 240 paragraphs each: several seconds of embedding each even on quiet cores (with
    40, a quiet machine indexed all five before the page first showed a stage, and the test waited its 15 minutes
    for a stage that had come and gone)."""
    out = []
    for i, topic in enumerate(TOPICS):
        paras = "\n\n".join(f"Rule {j} about {topic}: every team checks item {j} of the {topic} list before noon."
                            for j in range(240))
        p = folder / f"{i + 1}-{topic.replace(' ', '-')}.md"
        p.write_text(f"# {topic.title()}\n\n{paras}\n", encoding="utf-8")
        out.append(p)
    return out


@pytest.fixture(scope="module")
def app_server(tmp_path_factory):
    require_chromium()
    store = tmp_path_factory.mktemp("queue-store")
    try:
        with streamlit_app({"RAG_STORE": str(store), "RAG_WORKER_IDLE_EXIT_S": "20"}, "queue-streamlit.log") as (base, _):
            yield base, store
    finally:
        _stop_workers(store)


def _stop_workers(store: Path) -> None:
    """Stop the workers the app started for this test's stores (by the pids they registered)."""
    from rag.store.store import Store

    for folder in [store, *((store / "collections").glob("*") if (store / "collections").is_dir() else [])]:
        if not (folder / "store.sqlite3").is_file():
            continue
        with Store(folder) as s:
            for w in s.jobs.workers():
                try:
                    os.kill(w.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass


@pytest.fixture(scope="module")
def browser(app_server):
    with chromium() as b:
        yield b


def _context(browser):
    return new_context(browser, 1300, SLOW_MS)


def test_five_uploads_are_all_ready_after_the_page_is_left_and_closed(app_server, browser, tmp_path):
    from playwright.sync_api import expect

    from rag.store.store import Store

    base, store_dir = app_server
    files = _files(tmp_path)
    ctx = _context(browser)
    page = ctx.new_page()
    page.goto(f"{base}/Documents")
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files([str(p) for p in files])
    expect(page.get_by_text(f"{files[-1].name}: queued for indexing")).to_be_visible(timeout=SLOW_MS)
    panel = page.get_by_test_id("stSidebar").get_by_text("Indexing", exact=True)
    expect(panel).to_be_visible(timeout=SLOW_MS)
    # one upload view (issue 42): the page's list shows each file's stage and share, and the sidebar points to it
    # with no figures of its own; on fast cores the first file may be done before the page first redraws, so any
    # of the five counts
    first = page.get_by_test_id("stMain").get_by_text(re.compile(
        "(" + "|".join(re.escape(p.name) for p in files) + r"): (extracting|cutting|embedding|updating|finding|reading)")).first
    expect(first).to_be_visible(timeout=SLOW_MS)
    expect(page.get_by_test_id("stSidebar").get_by_text("in the list on this page")).to_be_visible(timeout=SLOW_MS)
    page.screenshot(path=ARTIFACTS / "queue-1-started.png", full_page=True)
    page.get_by_test_id("stSidebarNav").get_by_text("Chat", exact=True).click()  # leave the Documents page
    expect(page.get_by_test_id("stSidebar").get_by_text("Indexing", exact=True)).to_be_visible(timeout=SLOW_MS)
    page.screenshot(path=ARTIFACTS / "queue-2-chat-page.png", full_page=True)
    page.close()  # close the tab
    ctx.close()

    ctx = _context(browser)  # a new tab, a new session: no state of the first one
    page = ctx.new_page()
    page.goto(f"{base}/Documents")
    expect(page.get_by_text("5 document(s)")).to_be_visible(timeout=SLOW_MS)
    expect(page.get_by_text("5 ready", exact=True)).to_be_visible(timeout=SLOW_MS)  # the page redraws itself
    page.screenshot(path=ARTIFACTS / "queue-3-all-ready.png", full_page=True)
    ctx.close()
    with Store(store_dir) as s:
        docs = s.documents()
        assert sorted(d.name for d in docs) == sorted(p.name for p in files)  # each once
        assert all(d.status == "ready" and d.chunk_count > 0 for d in docs)
        assert s.check().ok, s.check().problems
        # ready means searchable: each job ends once its sentence units are in too (issue 41), so wait for the queue
        deadline = time.monotonic() + SLOW_MS / 1000
        while any(j.state in ("queued", "running") for j in s.jobs.list()) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert all(j.state == "done" and j.attempts == 1 for j in s.jobs.list()), s.jobs.list()


def test_the_sidebar_shows_the_collection_the_page_lists_after_a_page_change(app_server, browser, tmp_path):
    """Issue 25 item 5: after creating a collection, uploading into it and opening the chat page during the
    upload, the Documents page's sidebar said "default" while its table listed the new collection."""
    from playwright.sync_api import expect

    base, _ = app_server
    ctx = _context(browser)
    page = ctx.new_page()
    page.goto(f"{base}/Documents")
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Manage collections").click()
    sidebar.get_by_label("New collection").fill("Client A")
    sidebar.get_by_role("button", name="Create").click()
    box = sidebar.get_by_role("combobox", name="Collection")
    expect(box).to_have_value("Client A", timeout=SLOW_MS)
    note = tmp_path / "client-a-note.md"
    note.write_text("# Client A\n\nThe Client A contract renews every March.\n", encoding="utf-8")
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files([str(note)])
    expect(page.get_by_text("client-a-note.md: queued for indexing")).to_be_visible(timeout=SLOW_MS)
    page.get_by_test_id("stSidebarNav").get_by_text("Chat", exact=True).click()
    expect(box).to_have_value("Client A", timeout=SLOW_MS)
    page.get_by_test_id("stSidebarNav").get_by_text("Documents", exact=True).click()
    expect(page.get_by_text("1 document(s)")).to_be_visible(timeout=SLOW_MS)
    expect(box).to_have_value("Client A", timeout=SLOW_MS)
    page.screenshot(path=ARTIFACTS / "queue-4-collection.png", full_page=True)
    ctx.close()
