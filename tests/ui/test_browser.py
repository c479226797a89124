"""End to end in a real browser: Playwright drives Debian's chromium against `streamlit run app.py`.

Upload the DPR paper and a Markdown chapter through the Documents page, ask a
question answered in the PDF, click [1] in the answer: the in-app viewer
(PDF.js) opens at the cited page with the quote outlined, which a screenshot
read by tesseract confirms against every page's own words (PyMuPDF); the
secondary link opens Chromium's own PDF viewer at ``#page=N``, checked the same
way. Then the in-app preview dialog, a Markdown citation opening the Source
view with the quote highlighted, and (issue 17) a DOCX and a PPTX uploaded,
asked about, and their citations opened at the highlighted paragraph and on the
right slide. Screenshots go to test-artifacts/browser/.

Skips (with the reason) when chromium, tesseract, Playwright, llama-cpp-python
or ../shared are missing; `make test` installs chromium and tesseract first.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from browser_app import (
    ARTIFACTS,
    ROOT,
    chromium,
    expect_shown_once,
    new_context,
    require_chromium,
    require_model,
    streamlit_app,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PDF_NAME = "01-dpr-paper-two-column-13p.pdf"
MD_NAME = "04-learning-curves.md"
PDF_QUESTION = "What similarity function does DPR use between question and passage vectors?"
MD_QUESTION = "What does a learning curve show during training?"
# Generous: indexing and a local LLM on 2 shared CPU cores. No timing is asserted, these only bound waits.
SLOW_MS = 600_000


def _words(text: str) -> set[str]:
    """Lower-case alphabetic words of 4+ letters (what OCR and PyMuPDF agree on best)."""
    return set(re.findall(r"[a-z]{4,}", text.lower()))


def _ocr(png: Path) -> str:
    out = subprocess.run(["tesseract", str(png), "-", "--psm", "3"], capture_output=True, text=True, timeout=120)
    return out.stdout


def _ocr_element(locator, name: str) -> str:
    """OCR of one element's screenshot, binarised first (tesseract skips dark text on the yellow highlight)."""
    from PIL import Image

    shot = ARTIFACTS / name
    locator.screenshot(path=shot)
    img = Image.open(shot).convert("L")
    img = img.resize((img.width * 2, img.height * 2)).point(lambda v: 255 if v > 120 else 0)
    img.save(shot)
    out = subprocess.run(["tesseract", str(shot), "-", "--psm", "6"], capture_output=True, text=True, timeout=120)
    return out.stdout


def _best_page(ocr_text: str, pdf: Path) -> tuple[int, list[float]]:
    """1-based page whose own words the OCR text covers best, and the score of every page."""
    import pymupdf

    seen = _words(ocr_text)
    with pymupdf.open(pdf) as doc:
        scores = [len(seen & _words(p.get_text())) / max(1, len(_words(p.get_text()))) for p in doc]
    return max(range(len(scores)), key=scores.__getitem__) + 1, scores


@pytest.fixture(scope="module")
def requirements(corpus_dir):
    require_chromium()
    if shutil.which("tesseract") is None:
        pytest.skip("tesseract not installed (make browser installs tesseract-ocr as root)")
    require_model()
    return corpus_dir


@pytest.fixture(scope="module")
def server(requirements, tmp_path_factory):
    """`streamlit run app.py` on a free port with an empty store in a temporary folder; yields the base URL."""
    # the app publishes where Streamlit serves: <repo>/static
    env = {"RAG_STORE": str(tmp_path_factory.mktemp("browser-store")), "RAG_STATIC_DIR": None}
    with streamlit_app(env, "streamlit.log") as (base, _):
        yield base


@pytest.fixture(scope="module")
def browser_context(server):
    with chromium() as browser:
        context = new_context(browser, 1500, SLOW_MS)
        try:
            yield context
        finally:
            context.close()


def _ocr_page_check(tab, pdf: Path, cited_page: int, quote_words: set[str], shot_name: str) -> None:
    """Screenshots of ``tab`` read by tesseract until they match ``cited_page`` best; most quote words visible."""
    best, scores, seen_text = 0, [], ""
    for _attempt in range(20):
        time.sleep(1.0)
        shot = ARTIFACTS / shot_name
        tab.screenshot(path=shot)
        seen_text = _ocr(shot)
        best, scores = _best_page(seen_text, pdf)
        if best == cited_page and scores[best - 1] > 0.2:
            break
    assert best == cited_page, f"the tab shows page {best}, [1] cites page {cited_page}; scores {scores}"
    assert scores[best - 1] > 0.2, scores
    found = len(quote_words & _words(seen_text)) / max(1, len(quote_words))
    assert found > 0.5, f"only {found:.0%} of the quote's words are on the opened page {cited_page}"


def _ask(page, question: str, key_passage_shot: str | None = None):
    """Type a question in the chat input; return the last assistant message once its sources are shown.

    With ``key_passage_shot``: first wait for the key passage (issue 14), check that it is on screen before
    the answer is finished (the sources are listed only then), and save a screenshot under that name.
    """
    from playwright.sync_api import expect

    before = page.get_by_test_id("stChatMessage").count()
    page.get_by_test_id("stChatInputTextArea").fill(question)
    page.get_by_test_id("stChatInputTextArea").press("Enter")
    answer = page.get_by_test_id("stChatMessage").nth(before + 1)
    if key_passage_shot:
        expect(answer).to_contain_text("Key passage", timeout=SLOW_MS)
        early = answer.inner_text()
        page.screenshot(path=ARTIFACTS / key_passage_shot, full_page=True)
        assert "Sources" not in early, "the key passage came only with the finished answer"
        kp = answer.get_by_test_id("stMarkdownContainer").filter(has_text="Key passage").first
        assert re.search(r"\[\d\]", kp.inner_text()) and kp.locator("blockquote").count() == 1
    expect(answer).to_contain_text("Sources", timeout=SLOW_MS)
    return answer


def _open_quotes(answer) -> None:
    """Unfold every source's "Quote [n]" (issue 42: the quotes are folded, each text said once)."""
    # The answer is redrawn once when it ends, closing what was unfolded before: unfold until every quote is open.
    deadline = time.monotonic() + 20
    while True:
        folded = answer.locator("details:not([open]) > summary").filter(has_text="Quote [").all()
        for summary in folded:
            try:
                summary.click(timeout=2_000)
            except Exception:  # redrawn under the click: the next round finds it again
                pass
        if not folded and answer.locator("blockquote:visible").count():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the quotes did not unfold: {len(folded)} still folded")
        time.sleep(0.3)


def _source_quote(answer):
    """The verbatim quote of the first source listed under the answer (not the key passage's quote)."""
    _open_quotes(answer)
    return answer.get_by_test_id("stMarkdownContainer").filter(has_not_text="Key passage").locator("blockquote").first


def test_upload_ask_and_open_cited_pdf_page(server, browser_context, requirements):
    corpus = requirements
    pdf = corpus / "pdfs" / PDF_NAME
    page = browser_context.new_page()
    try:
        _pdf_flow(page, browser_context, server, corpus, pdf)
    except Exception:
        page.screenshot(path=ARTIFACTS / "failure-pdf-flow.png", full_page=True)
        raise


def _pdf_flow(page, browser_context, server, corpus, pdf):
    from playwright.sync_api import expect

    # 1. Documents: upload both files through the page, wait until both are indexed.
    page.goto(f"{server}/Documents")
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        [str(pdf), str(corpus / "docs" / MD_NAME)])
    try:  # the progress bar while indexing (best effort: a fast machine may finish before the screenshot)
        expect(page.get_by_text(re.compile(r"\(file \d of 2\)"))).to_be_visible(timeout=60_000)
        page.screenshot(path=ARTIFACTS / "00-indexing.png")
    except AssertionError:
        pass
    expect_shown_once(page, f"{PDF_NAME}: indexed", SLOW_MS)
    expect_shown_once(page, f"{MD_NAME}: indexed", SLOW_MS)
    expect(page.get_by_text("50 MB").first).to_be_visible()  # the upload limit is shown
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    expect(page.get_by_role("button", name="Delete")).to_be_visible()
    time.sleep(1.0)  # let the data grid paint its cells before the screenshot
    page.screenshot(path=ARTIFACTS / "01-documents.png", full_page=True)

    # 2. Chat: a question answered in the PDF; [1] links to the in-app viewer at the cited page.
    page.goto(server)
    answer = _ask(page, PDF_QUESTION, key_passage_shot="02-key-passage.png")
    # the figures are folded (issue 29): open "Advanced"; a rerun still drawing the finished answer can fold it
    # again under load (CI: the chart stayed hidden after one click), so open it until the chart shows
    sidebar = page.get_by_test_id("stSidebar")
    chart = sidebar.get_by_test_id("stVegaLiteChart")
    for _ in range(3):
        if not chart.is_visible():
            sidebar.get_by_text("Advanced").click()
        try:
            expect(chart).to_be_visible(timeout=15_000)
            break
        except AssertionError:
            continue
    expect(chart).to_be_visible()
    time.sleep(1.5)  # let Vega draw the bars before the screenshot
    page.screenshot(path=ARTIFACTS / "02-answer.png", full_page=True)
    # the finished answer: the key passage, then the model's checked claims or the note that the passage stands
    text = answer.inner_text()
    # (issue 42: a model answer is shown once, without the key passage above it)
    assert "Key passage" in text or "Answer" in text or "stands as the answer" in text, text[:600]
    quote_words = _words(_source_quote(answer).inner_text())  # source [1]'s verbatim quote
    # [1] in the answer jumps to its source row (issue 29); the row's "new tab" link opens the viewer in a tab
    assert answer.locator('a[href$="src-t0-1"]').count() >= 1
    link = answer.locator('a[href*="/Source?"][href*="n=1"]').first
    href = link.get_attribute("href")
    m = re.search(r"/Source\?doc=([0-9a-f]{64})&chunk=\d+&start=\d+&end=\d+&n=1&page=(\d+)$", href or "")
    assert m, f"[1] does not link to the in-app viewer at a PDF page: {href!r}"
    cited_page = int(m.group(2))

    # 3. The new tab opens the app's Source view: PDF.js at that page, the quote's lines outlined, in view.
    with browser_context.expect_page() as info:
        link.click()
    tab = info.value
    tab.wait_for_load_state()
    expect(tab.get_by_text(f"Page {cited_page} of 13")).to_be_visible(timeout=120_000)
    viewer = tab.frame_locator('iframe[title*="streamlit_pdf_viewer"]')
    outline = viewer.locator('[id^="annotation-"]').first
    expect(outline).to_be_visible(timeout=120_000)
    expect(outline).to_be_in_viewport()
    _ocr_page_check(tab, pdf, cited_page, quote_words, "03-viewer-pdf.png")
    tab.close()

    # 4. The secondary action: the browser's own PDF viewer at #page=N in a new tab, read back by OCR.
    secondary = answer.locator(f'a[href$="#page={cited_page}"]', has_text="PDF at page").first
    assert re.search(r"/app/static/[0-9a-f]{32}/[0-9a-f]{32}\.pdf#page=\d+$", secondary.get_attribute("href") or "")
    with browser_context.expect_page() as info:
        secondary.click()
    tab = info.value
    tab.wait_for_load_state()
    _ocr_page_check(tab, pdf, cited_page, quote_words, "03-pdf-tab.png")
    tab.close()

    # 5. In-app preview of the same citation: the same viewer in a dialog.
    answer.get_by_role("button", name="Open [1]").first.click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_text(f"Page {cited_page} of 13")).to_be_visible(timeout=60_000)
    expect(dialog.frame_locator("iframe").first.locator('[id^="annotation-"]').first).to_be_visible(timeout=60_000)
    page.screenshot(path=ARTIFACTS / "04-preview.png")
    page.keyboard.press("Escape")


def test_markdown_citation_opens_highlighted_range(server, browser_context, requirements):
    import unicodedata

    from playwright.sync_api import expect

    page = browser_context.new_page()
    page.goto(server)
    try:
        answer = _ask(page, MD_QUESTION)
    except Exception:
        page.screenshot(path=ARTIFACTS / "failure-md-flow.png", full_page=True)
        raise
    # the [n] of the chapter's source row (PDF citations lead to /Source too, since issue 17)
    row = answer.locator('[data-testid="stMarkdownContainer"]', has_text=MD_NAME).filter(
        has=page.locator('a[href*="/Source?"]')).first
    link = row.locator('a[href*="/Source?"]').first
    expect(link).to_be_visible()
    href = link.get_attribute("href")
    m = re.search(r"start=(\d+)&end=(\d+)", href)
    assert m and "page=" not in href, href
    with browser_context.expect_page() as info:
        link.click()
    tab = info.value
    frame = tab.frame_locator("iframe").first
    mark = frame.locator("mark#cited")
    expect(mark).to_be_visible(timeout=120_000)
    expect(mark).to_be_in_viewport()  # scrolled into view
    from rag.ingest.extract import extract_path

    # offsets are into the canonical text: the Markdown as a reader sees it (issue 37: its markup rendered)
    text = unicodedata.normalize("NFC", extract_path(requirements / "docs" / MD_NAME).canonical)
    cited = text[int(m.group(1)):int(m.group(2))]
    assert " ".join(mark.inner_text().split()) == " ".join(cited.split())
    tab.screenshot(path=ARTIFACTS / "05-markdown-source.png")
    tab.close()


def _open_source_of(answer, browser_context, name: str):
    """Click the [n] of the source row naming ``name`` (the citation link); return the tab that opens."""
    from playwright.sync_api import expect

    row = answer.locator('[data-testid="stMarkdownContainer"]', has_text=name).filter(
        has=answer.page.locator('a[href*="/Source?"]')).first
    expect(row).to_be_visible()
    link = row.locator('a[href*="/Source?"]').first
    for attempt in range(3):  # a click the page redraws under opens no tab (CI, 2026-12-04): click again
        try:
            with browser_context.expect_page(timeout=60_000) as info:
                link.click()
            break
        except Exception:  # noqa: BLE001 - playwright's TimeoutError; the third miss fails below
            if attempt == 2:
                raise
    tab = info.value
    tab.wait_for_load_state()
    return tab


def test_docx_and_pptx_citations_open_at_the_passage(server, browser_context, requirements):
    """Issue 17: a Word file and a slide deck uploaded, asked about; each citation opens in the app's viewer
    at the highlighted paragraph (DOCX) and on the right slide (PPTX)."""

    from playwright.sync_api import expect

    sys.path.insert(0, str(ROOT / "tests"))
    import samples

    page = browser_context.new_page()
    try:
        page.goto(f"{server}/Documents")
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files([
            {"name": "manual.docx", "mimeType": "application/octet-stream", "buffer": samples.docx_bytes()},
            {"name": "induction.pptx", "mimeType": "application/octet-stream", "buffer": samples.pptx_bytes()}])
        expect_shown_once(page, "manual.docx: indexed", SLOW_MS)
        expect_shown_once(page, "induction.pptx: indexed", SLOW_MS)

        page.goto(server)
        answer = _ask(page, samples.DOCX_QUESTION)
        page.screenshot(path=ARTIFACTS / "06-docx-answer.png", full_page=True)
        tab = _open_source_of(answer, browser_context, "manual.docx")
        expect(tab.get_by_text("manual.docx > Cranes > Inspections, ¶")).to_be_visible(timeout=120_000)
        frame = tab.frame_locator("iframe").first
        mark = frame.locator("mark#cited")
        expect(mark).to_be_visible(timeout=120_000)
        expect(mark).to_be_in_viewport()
        marked = " ".join(frame.locator("mark.cited").all_inner_texts())
        assert samples.DOCX_NEEDLE in " ".join(marked.split())
        expect(frame.locator("h2", has_text="Inspections")).to_be_visible()
        tab.screenshot(path=ARTIFACTS / "07-docx-source.png")
        tab.close()

        answer = _ask(page, samples.PPTX_QUESTION)
        page.screenshot(path=ARTIFACTS / "08-pptx-answer.png", full_page=True)
        tab = _open_source_of(answer, browser_context, "induction.pptx")
        expect(tab.get_by_text("induction.pptx, slide 2 (Driving in the cold store)")).to_be_visible(timeout=120_000)
        frame = tab.frame_locator("iframe").first
        expect(frame.get_by_text("Slide 2 of 3")).to_be_visible(timeout=120_000)
        slide = frame.locator(".rag-slide")
        expect(slide.locator("h1")).to_have_text("Driving in the cold store")
        mark = slide.locator("mark#cited")
        expect(mark).to_be_in_viewport()
        assert samples.PPTX_NEEDLE in " ".join(slide.locator("mark.cited").all_inner_texts())
        tab.screenshot(path=ARTIFACTS / "09-pptx-source.png")
        # the slide on screen shows the cited words (read back from its pixels by OCR, not only from the DOM)
        seen = _words(_ocr_element(slide, "10-pptx-slide-binarised.png"))
        assert {"forklifts", "cold", "store", "drive", "driving"} <= seen, seen
        tab.close()
    except Exception:
        page.screenshot(path=ARTIFACTS / "failure-formats-flow.png", full_page=True)
        raise


# --------------------------------------------------------------------------- issue 16 in the browser

LEAVE = "leave-policy.md"
DAYS_QUESTION = "How many days of annual leave do full-time staff get?"
FOLLOW_UP = "And can they carry unused days over?"


def _sidebar(page):
    return page.get_by_test_id("stSidebar")


def _upload(page, paths):
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files([str(p) for p in paths])


def test_versions_follow_up_scope_history_and_collections(server, browser_context, cases_dir, tmp_path):
    """Issue 16 end to end: a new version asked about and replacing the old one (c25), a follow-up shown as
    searched, a question scoped to one document, the chat saved, reopened and exported as Markdown, and a
    collection created, switched to and deleted, all through the pages."""
    page = browser_context.new_page()
    try:
        _issue16_flow(page, server, cases_dir, tmp_path)
    except Exception:
        page.screenshot(path=ARTIFACTS / "failure-issue16.png", full_page=True)
        raise


def _issue16_flow(page, server, cases_dir, tmp_path):
    from playwright.sync_api import expect

    # 1. Versions: v1 and the c26 files, then v2 under the same name: the page asks, "Replace" replaces.
    page.goto(f"{server}/Documents")
    v1 = cases_dir / "c25_versions" / "v1" / LEAVE
    _upload(page, [v1, cases_dir / "c26_bike_shed.md", cases_dir / "c26_visitor_guide.md"])
    expect_shown_once(page, f"{LEAVE}: indexed", SLOW_MS)
    expect_shown_once(page, "c26_visitor_guide.md: indexed", SLOW_MS)
    v2 = tmp_path / "v2" / LEAVE  # same name, other bytes, from another folder
    v2.parent.mkdir()
    v2.write_bytes((cases_dir / "c25_versions" / "v2" / LEAVE).read_bytes())
    _upload(page, [v2])
    expect(page.get_by_text(f"{LEAVE} is already indexed")).to_be_visible(timeout=SLOW_MS)
    page.screenshot(path=ARTIFACTS / "20-version-asked.png", full_page=True)
    page.get_by_role("button", name="Replace").click()
    expect(page.get_by_text("replaced the version added")).to_be_visible(timeout=SLOW_MS)
    time.sleep(1.0)  # let the data grid paint (version columns) before the screenshot
    page.screenshot(path=ARTIFACTS / "21-version-replaced.png", full_page=True)

    # 2. The chat answers from the current version only; a follow-up is shown as searched.
    page.goto(server)
    answer = _ask(page, DAYS_QUESTION)
    # one snapshot of every quote (the answer is redrawn when it ends: a locator taken before can vanish, and a
    # redraw between the unfolding and the reading left nothing to read under CI's load, 2026-12-06)
    sources = ""
    for _ in range(5):
        _open_quotes(answer)
        sources = " ".join(answer.locator("blockquote").all_inner_texts())
        if sources.strip():
            break
        time.sleep(1.0)
    assert "28 days" in sources and "25 days" not in sources and "abbatical" not in sources, sources
    follow = _ask(page, FOLLOW_UP)
    user = page.get_by_test_id("stChatMessage").nth(2)
    expect(user).to_contain_text("Read as a follow-up, searched as:")
    expect(user).to_contain_text(FOLLOW_UP)
    assert "Carry-over" in follow.inner_text() or "carried over" in follow.inner_text()
    page.screenshot(path=ARTIFACTS / "22-follow-up.png", full_page=True)

    # 3. Scope: within the visitor guide only, the bike-shed question is refused.
    side = _sidebar(page)
    side.get_by_test_id("stMultiSelect").click()
    page.get_by_role("option", name="c26_visitor_guide.md").click()
    page.keyboard.press("Escape")
    before = page.get_by_test_id("stChatMessage").count()
    page.get_by_test_id("stChatInputTextArea").fill("When does the bike shed close?")
    page.get_by_test_id("stChatInputTextArea").press("Enter")
    refusal = page.get_by_test_id("stChatMessage").nth(before + 1)
    expect(refusal).to_contain_text("No answer: within c26_visitor_guide.md", timeout=SLOW_MS)
    expect(page.get_by_test_id("stChatMessage").nth(before)).to_contain_text("Asked within c26_visitor_guide.md")
    page.screenshot(path=ARTIFACTS / "23-scoped-refusal.png", full_page=True)

    # 4. History: a new chat empties the page; the saved one comes back with its sources; export as Markdown.
    side.get_by_role("button", name="New chat").click()
    expect(page.get_by_test_id("stChatMessage")).to_have_count(0)
    side.get_by_role("button", name=DAYS_QUESTION).click()
    expect(page.get_by_test_id("stChatMessage")).to_have_count(6)
    expect(page.get_by_test_id("stChatMessage").nth(1)).to_contain_text("28 days")
    expect(page.get_by_test_id("stChatMessage").nth(2)).to_contain_text("Read as a follow-up")
    with page.expect_download() as info:
        side.get_by_role("button", name="Export chat (Markdown)").click()
    md = Path(info.value.path()).read_text(encoding="utf-8")
    assert md.startswith(f"# {DAYS_QUESTION}") and f"## 2. {FOLLOW_UP}" in md and "*Standalone question:*" in md
    assert f"{LEAVE} > " in md and "`#char=" in md and "NO ANSWER" in md
    page.screenshot(path=ARTIFACTS / "24-reopened.png", full_page=True)

    # 5. Collections: create one (empty, its own store), switch back, delete it.
    # (the default store also holds what the other browser tests uploaded: compare with the count before)
    indexed = re.match(r"\d+ document\(s\) indexed",
                       page.get_by_text(re.compile(r"^\d+ document\(s\) indexed")).inner_text()).group(0)
    side.get_by_text("Manage collections").click()
    side.get_by_label("New collection").fill("Client A")
    side.get_by_label("New collection").press("Enter")
    side.get_by_role("button", name="Create").click()
    expect(page.get_by_text("No document is indexed in collection Client A")).to_be_visible(timeout=SLOW_MS)
    expect(side.get_by_text("Created collection Client A")).to_be_visible()  # the expander stays open to say so
    page.screenshot(path=ARTIFACTS / "25-collection.png", full_page=True)
    side.get_by_text("Yes, delete Client A").click()
    expect(side.get_by_test_id("stCheckbox").locator("input")).to_be_checked()
    side.get_by_role("button", name="Delete collection").click()
    expect(page.get_by_text("Deleted collection Client A")).to_be_visible(timeout=SLOW_MS)
    expect(page.get_by_text(indexed)).to_be_visible()
