"""Issue 26: a URL, a ``www.`` name or an e-mail address quoted from a document is text in the chat, never a link.

``markdown_literal`` escapes them, but Streamlit's renderer (remark-gfm) links URLs in the parsed text after the
escapes are resolved: a quoted ``[x](https://...)`` was a live link on the chat page (first-hour walk,
2026-12-01). This renders the escaped text with Streamlit's own ``st.markdown`` in Chromium and reads the DOM.
"""

from __future__ import annotations

import pytest
from browser_app import ROOT, chromium, require_chromium, streamlit_app

pytestmark = [pytest.mark.browser]

QUOTED = ("see [Weights & Biases](https://wandb.example/x), mail ops@corp.example or visit www.evil.example, "
          ":red[REDTEXT] :smile: now")

PAGE = f'''
import streamlit as st
from rag.text import markdown_literal
from ui.format import blockquote
st.markdown(markdown_literal({QUOTED!r}, blocks=False))
st.markdown(blockquote({QUOTED!r}))
'''


def test_quoted_urls_and_addresses_are_no_links_in_streamlit(tmp_path):
    require_chromium()
    from playwright.sync_api import expect

    script = tmp_path / "page.py"
    script.write_text(PAGE, encoding="utf-8")
    with streamlit_app({"PYTHONPATH": str(ROOT)}, "inert-streamlit.log", script=script) as (base, _):
        with chromium() as browser:
            page = browser.new_page()
            page.goto(base)
            blocks = page.locator('[data-testid="stMarkdownContainer"]')
            expect(blocks.nth(1)).to_contain_text("now", timeout=60_000)
            for i in range(2):
                block = blocks.nth(i)
                assert block.locator("a").count() == 0, block.inner_html()
                shown = block.inner_text().replace("\u2060", "")
                assert "[Weights & Biases](https://wandb.example/x)" in shown  # the characters, as written
                assert "ops@corp.example" in shown and "www.evil.example" in shown
                # a directive and a shortcode are characters too (":red" vanished from a quote, 2026-12-02)
                assert ":red[REDTEXT] :smile: now" in shown, shown
