"""Issue 42 in a real browser: the answer view says each text once, a citation previews on hover and keyboard
focus, the quotes fold at phone width, and the theme follows the system's dark setting.

``streamlit run app.py`` with the real embedder and **no answer model installed** (an empty models folder): the
app answers with the key passage and its sources, no model call, so the view is checked in seconds. Screenshots
go to test-artifacts/browser/ (``42-*.png``). Skips (with the reason) when chromium or Playwright are missing.
"""

from __future__ import annotations

import re
import time

import pytest
from browser_app import ARTIFACTS, chromium, expect_shown_once, new_context, require_chromium, streamlit_app
from test_browser_controls import GUIDE, _ask, _idle, _no_exception

pytestmark = [pytest.mark.browser]
SLOW_MS = 300_000
QUESTION = "When does the bike shed close on weekdays?"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_chromium()
    models = tmp_path_factory.mktemp("no-models")
    env = {"RAG_STORE": str(tmp_path_factory.mktemp("view-store")), "RAG_COLLECTION": None,
           "RAG_MODELS_DIR": str(models)}
    with streamlit_app(env, "streamlit-answer-view.log") as (base, _):
        yield base


@pytest.fixture(scope="module")
def browser(server):
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def indexed(browser, server, tmp_path_factory):
    """bike-shed.md uploaded on the Documents page (a desktop window), once for the module."""
    from playwright.sync_api import expect

    guide = tmp_path_factory.mktemp("docs") / "bike-shed.md"
    guide.write_text(GUIDE, encoding="utf-8")
    context = new_context(browser, 1200, SLOW_MS)
    page = context.new_page()
    try:
        page.goto(f"{server}/Documents")
        expect(page.get_by_role("heading", name="Documents")).to_be_visible(timeout=SLOW_MS)
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files([str(guide)])
        expect_shown_once(page, "bike-shed.md: indexed", SLOW_MS)
    finally:
        context.close()
    return server


def _ask_here(page, server):
    from playwright.sync_api import expect

    page.goto(server)
    expect(page.get_by_text(re.compile(r"What's in your documents \(1\)"))).to_be_visible(timeout=SLOW_MS)
    reply = _ask(page, QUESTION)
    expect(reply.get_by_text("Sources", exact=True)).to_be_visible(timeout=SLOW_MS)
    return reply


def _after(locator) -> str:
    """The ``::after`` content the page's CSS draws for ``locator`` now (``"none"`` when it draws none)."""
    return locator.evaluate("el => getComputedStyle(el, '::after').content")


def test_each_text_once_and_a_citation_previews_on_hover_and_focus(browser, indexed):
    from playwright.sync_api import expect

    context = new_context(browser, 1200, SLOW_MS)
    page = context.new_page()
    try:
        reply = _ask_here(page, indexed)
        shown = reply.inner_text()
        sentence = "closes at ten at night on weekdays"
        assert shown.count(sentence) == 1, shown  # the key passage only: the source's quote is folded
        quote = reply.get_by_test_id("stExpander").filter(has_text="Quote [1]")
        expect(quote).to_have_count(1)
        assert reply.locator('[data-testid="stAlertContentInfo"]:empty').count() == 0  # no empty box
        expect(quote.locator("blockquote")).to_be_hidden()
        marker = reply.locator('a[href^="#src-"]').first
        assert "bike-shed.md" in marker.get_attribute("title") and sentence in marker.get_attribute("title")
        assert _after(marker) == "none"
        marker.hover()
        time.sleep(0.3)
        assert "bike-shed.md" in _after(marker) and sentence in _after(marker)  # the preview card, on hover
        page.screenshot(path=ARTIFACTS / "42-6-hover-preview.png")
        page.mouse.move(5, 5)
        page.keyboard.press("Tab")  # keyboard use, then the link focused: the same preview
        marker.focus()
        time.sleep(0.3)
        assert sentence in _after(marker)
        page.screenshot(path=ARTIFACTS / "42-6-focus-preview.png")
        quote.get_by_text("Quote [1]").click()  # unfolded on demand, verbatim
        expect(quote.locator("blockquote")).to_contain_text(sentence)
        _no_exception(page)
        page.screenshot(path=ARTIFACTS / "42-2-answer-once.png", full_page=True)
    finally:
        context.close()


def test_phone_width_folds_the_quotes_and_dark_follows_the_system(browser, indexed):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme="dark",
                                  is_mobile=True, has_touch=True)
    context.set_default_timeout(SLOW_MS)
    page = context.new_page()
    try:
        page.goto(indexed)
        _idle(page)
        background = page.get_by_test_id("stApp").evaluate("el => getComputedStyle(el).backgroundColor")
        r, g, b = (int(x) for x in re.findall(r"\d+", background)[:3])
        assert r + g + b < 150, background  # a dark page under prefers-color-scheme: dark
        page.get_by_test_id("stChatInputTextArea").fill(QUESTION)
        page.get_by_test_id("stChatInputTextArea").press("Enter")
        reply = page.get_by_test_id("stChatMessage").nth(1)
        expect(reply.get_by_text("Sources", exact=True)).to_be_visible(timeout=SLOW_MS)
        _idle(page)
        quotes = reply.get_by_test_id("stExpander").filter(has_text="Quote [")
        assert quotes.count() >= 1
        for i in range(quotes.count()):
            expect(quotes.nth(i).locator("blockquote")).to_be_hidden()  # folded on a phone
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390 + 1, width  # nothing wider than the phone
        _no_exception(page)
        page.screenshot(path=ARTIFACTS / "42-7-phone-dark.png", full_page=True)
    finally:
        context.close()
