"""Raw HTML inside Markdown under the HTML reader's hidden-text rules (issue 37): a display:none span's text, a
class its <style> hides and a hidden block are not indexed; code spans and fences keep what they show."""

from __future__ import annotations

from rag.ingest.extract import extract_bytes

MD = """# Title

<style>.secret { display: none }</style>

You need <span style="display:none">the admin password is hunter2</span> nothing else. Also <b>bold</b> here.

A <span class="secret">class-hidden words</span> and `<span style="display:none">code stays</span>`.

<div hidden>
block secret
</div>

```html
<span style="display:none">fenced stays</span>
```
"""


def test_hidden_raw_html_is_left_out_of_markdown_and_counted():
    doc = extract_bytes(MD.encode(), "guide.md")
    for gone in ("hunter2", "class-hidden words", "block secret"):
        assert gone not in doc.canonical
    assert "You need  nothing else. Also bold here." in doc.canonical  # the tags of visible HTML are not shown
    assert "code stays" in doc.canonical and "fenced stays" in doc.canonical
    assert any(w.startswith("hidden text left out: 3 elements") for w in doc.warnings)
    assert [h.title for h in doc.headings] == ["Title"]


BLOCKS = """# Guide

<div style="display:none">

The admin password is hunter2, in **Markdown** between the hidden div's tags.

</div>

Visible paragraph one.

<details markdown="1">
  <summary>Table of Contents</summary>

- Setup

</details>

<table class="dataframe">
  <tr><th>drug</th><th>rating</th></tr>
  <tr><td>Lybrel</td><td>5.0 <span style="display:none">and a hidden note</span></td></tr>
</table>

> <p align="center">A quoted <b>block</b></p>

<Youtube id="x1"/>

<h2 align="center">Centred section</h2>

Last words.
"""


def test_markdown_html_blocks_read_as_html_with_hidden_text_out_and_offsets_exact():
    from rag.ingest.chunk import chunk_document

    doc = extract_bytes(BLOCKS.encode(), "blocks.md")
    text = doc.canonical
    for gone in ("hunter2", "hidden div", "hidden note", "<", "dataframe", "Youtube", "align="):
        assert gone not in text
    for shown in ("Visible paragraph one.", "Table of Contents\n", "- Setup", "| drug | rating |",
                  "| Lybrel | 5.0 |", "> A quoted block", "## Centred section", "Last words."):
        assert shown in text
    assert [h.title for h in doc.headings] == ["Guide", "Centred section"]
    assert any(w.startswith("hidden text left out: 2 elements (2 display:none)") for w in doc.warnings)
    chunks = chunk_document(doc, "E")
    assert chunks and all(text[c.start:c.end] == c.content for c in chunks)
    assert not any("hunter2" in c.content or "<" in c.text for c in chunks)
