"""Issue 42 in a real browser: controls, waits and messages that tell the truth (Playwright + Debian chromium).

On small generated documents, against ``streamlit run app.py`` with the real embedder and no model call (every
question here is refused or answered from the key passage alone):

* an empty store answers "Add documents first";
* the answerability cut returns to its default ("Reset to defaults", and a step of 0.01 reaches 0.62);
* after keyboard nudges of the threshold slider, the what-if text names the value the slider shows.

Screenshots go to test-artifacts/browser/ (``42-*.png``). Skips (with the reason) when chromium or Playwright
are missing.
"""

from __future__ import annotations

import re
import time

import pytest
from browser_app import ARTIFACTS, chromium, expect_shown_once, new_context, require_chromium, streamlit_app

pytestmark = [pytest.mark.browser]
SLOW_MS = 300_000  # indexing on 2 shared cores: a bound on waiting, never an assertion

GUIDE = """# Bike shed guide

## Opening hours

The bike shed opens at seven in the morning and closes at ten at night on weekdays.
On Sundays the shed stays closed all day because the caretaker is away.

## Keys and badges

Every cyclist collects a badge from the front desk before using the shed for the first time.
Lost badges cost five pounds to replace at the front desk.
"""
OFF_TOPIC = "How do I renew my passport abroad?"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_chromium()
    env = {"RAG_STORE": str(tmp_path_factory.mktemp("controls-store")), "RAG_COLLECTION": None}
    with streamlit_app(env, "streamlit-controls.log") as (base, _):
        yield base


@pytest.fixture(scope="module")
def page(server):
    with chromium() as browser:
        context = new_context(browser, 1400, SLOW_MS)
        try:
            yield context.new_page()
        finally:
            context.close()


def _shot(page, name: str, settle: float = 1.0, at=None) -> None:
    """A screenshot of the whole page, or of the viewport with ``at`` (a locator) scrolled into view (the
    sidebar scrolls on its own: a full-page shot cuts it at the window's height)."""
    time.sleep(settle)
    if at is not None:
        at.scroll_into_view_if_needed()
        time.sleep(0.3)
    page.screenshot(path=ARTIFACTS / name, full_page=at is None)


def _no_exception(page) -> None:
    errors = page.get_by_test_id("stException")
    assert errors.count() == 0, errors.first.inner_text()[:1500]


def _idle(page, timeout_s: float = 300.0) -> None:
    """Wait until the script runs the last input started have finished: no status widget and no element drawn
    stale (greyed while a run is under way), three checks in a row 0.4 s apart (a run may start a moment after
    the input). Bounded, never asserted on."""
    stale = page.locator('[data-testid="stElementContainer"][data-stale="true"]')
    status = page.get_by_test_id("stStatusWidget")
    calm, deadline = 0, time.monotonic() + timeout_s
    while calm < 3 and time.monotonic() < deadline:
        time.sleep(0.4)
        calm = calm + 1 if stale.count() == 0 and status.count() == 0 else 0


def _ask(page, question: str):
    from playwright.sync_api import expect

    before = page.get_by_test_id("stChatMessage").count()
    page.get_by_test_id("stChatInputTextArea").fill(question)
    page.get_by_test_id("stChatInputTextArea").press("Enter")
    reply = page.get_by_test_id("stChatMessage").nth(before + 1)
    expect(reply).to_be_visible(timeout=SLOW_MS)
    _idle(page)
    _no_exception(page)
    return reply


def _slider(page, label: str):
    """The slider's range input (React Aria: the focusable thumb, its ``value`` the value shown)."""
    return page.get_by_test_id("stSidebar").get_by_test_id("stSlider").filter(has_text=label).locator(
        'input[type="range"]')


def _value(page, label: str) -> float:
    return float(_slider(page, label).input_value())


def test_controls_tell_the_truth(server, page, tmp_path):
    from playwright.sync_api import expect

    # an empty store: a question is answered with what to do first, not a refusal
    page.goto(server)
    expect(page.get_by_text("No document is indexed yet")).to_be_visible(timeout=SLOW_MS)
    reply = _ask(page, "When does the bike shed close?")
    expect(reply).to_contain_text("Add documents first")
    _shot(page, "42-1-empty-store.png")

    # one small document, uploaded as a user would
    guide = tmp_path / "bike-shed.md"
    guide.write_text(GUIDE, encoding="utf-8")
    page.get_by_test_id("stSidebarNav").get_by_text("Documents", exact=True).click()
    expect(page.get_by_role("heading", name="Documents")).to_be_visible(timeout=SLOW_MS)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files([str(guide)])
    expect_shown_once(page, "bike-shed.md: indexed", SLOW_MS)
    page.get_by_test_id("stSidebarNav").get_by_text("Chat", exact=True).click()
    expect(page.get_by_text(re.compile(r"What's in your documents \(1\)"))).to_be_visible(timeout=SLOW_MS)

    # a far question is refused; the Advanced section shows the what-if at the sliders' values
    reply = _ask(page, OFF_TOPIC)
    expect(reply).to_contain_text("No answer")
    sidebar = page.get_by_test_id("stSidebar")
    advanced = sidebar.get_by_test_id("stExpander").filter(has_text="Advanced")
    thumb_value = sidebar.get_by_test_id("stSlider").filter(has_text="Threshold").get_by_test_id("stSliderThumbValue")
    if not thumb_value.is_visible():
        advanced.get_by_text("Advanced", exact=True).first.click()
    expect(thumb_value).to_be_visible()
    assert _value(page, "Threshold") == 0.675 and _value(page, "Answerability cut") == 0.62
    assert _value(page, "Mention cut") == 0.27

    # keyboard nudges: the text describes the value the slider shows, never an earlier one
    thumb = _slider(page, "Threshold")
    for presses in (40, 7, 60):
        thumb.focus()
        for _ in range(presses):
            page.keyboard.press("ArrowRight")
        _idle(page)
        shown = _value(page, "Threshold")
        what_if = sidebar.get_by_text(re.compile(r"^At threshold")).first
        expect(what_if).to_contain_text(f"At threshold {shown:.3f},", timeout=60_000)
    assert shown > 0.675
    expect(thumb_value).to_be_visible()  # still open after all those reruns
    _shot(page, "42-1-what-if-after-nudges.png", at=what_if)

    # the answerability cut moved away and back: "Reset to defaults" returns every slider to its default
    cut = _slider(page, "Answerability cut")
    cut.focus()
    for _ in range(5):
        page.keyboard.press("ArrowLeft")
    _idle(page)
    assert abs(_value(page, "Answerability cut") - 0.57) < 1e-9
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    _idle(page)
    assert _value(page, "Answerability cut") == 0.62  # steps of 0.01 reach the default again
    sidebar.get_by_role("button", name="Reset to defaults").click()
    _idle(page)
    assert _value(page, "Threshold") == 0.675 and _value(page, "Answerability cut") == 0.62
    expect(sidebar.get_by_text(re.compile(r"^At threshold 0\.675, answerability cut 0\.62"))).to_be_visible()
    expect(sidebar.get_by_role("button", name="Reset to defaults")).to_be_disabled()
    _no_exception(page)
    _shot(page, "42-1-reset.png", at=sidebar.get_by_role("button", name="Reset to defaults"))

