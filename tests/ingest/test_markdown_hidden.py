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
