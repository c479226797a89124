"""Markdown rendered to the text a reader sees (issue 37, rag/ingest/web/markdown_render.py): link text without its
URL, no emphasis marks, code spans kept as code, the blocks line for line, offsets into the rendered text."""

from __future__ import annotations

from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes
from rag.ingest.web.markdown_render import render_markdown

MD = """# The *clearance* guide

You _do not_ need [GSA's generic clearance](https://www.gsa.gov/clearance) for **internal** surveys.
See <https://example.org/faq>, the ~~old~~ rules, ![a flow chart](flow.png) and [the form][f].
Press <kbd>Ctrl</kbd>+<kbd>S</kbd>; escape \\*stars\\* &amp; keep snake_case_names.

- **Time to First Token (TTFT)**: how quickly
  the `first token` comes
> quoted *words*

| Option | Meaning |
|---|---|
| `batched=True` | **fast** map |

    indented *code* stays

```python
x = a * b  # `ticks` and **stars** stay in code
```

$$A_i = \\frac{r_i - \\text{mean}(\\{r_1\\})}{\\sigma}$$

[f]: https://example.org/form
"""


def test_inline_markup_is_rendered_and_blocks_stay_line_for_line():
    text = render_markdown(MD)
    assert text.count("\n") == MD.count("\n")
    for seen in ("# The clearance guide",
                 "You do not need GSA's generic clearance for internal surveys.",
                 "See https://example.org/faq, the old rules, a flow chart and the form.",
                 "Press Ctrl+S; escape *stars* & keep snake_case_names.",
                 "- Time to First Token (TTFT): how quickly\n  the `first token` comes",  # code stays code
                 "> quoted words",
                 "| `batched=True` | fast map |",
                 "    indented *code* stays",
                 "x = a * b  # `ticks` and **stars** stay in code",
                 "$$A_i = \\frac{r_i - \\text{mean}(\\{r_1\\})}{\\sigma}$$"):
        assert seen in text, seen
    for gone in ("https://www.gsa.gov", "flow.png", "_do not_", "**internal**", "<kbd>", "~~"):
        assert gone not in text, gone


def test_the_markdown_reader_stores_the_rendered_text_and_points_into_it():
    doc = extract_bytes(MD.encode(), "clearance.md")
    assert doc.title == "The clearance guide"
    assert [h.title for h in doc.headings] == ["The clearance guide"]
    assert "You do not need GSA's generic clearance for internal surveys." in doc.canonical
    assert "[f]: https://example.org/form" not in doc.canonical  # a reference definition is no text (issue 26)
    for c in chunk_document(doc, "E"):
        assert doc.canonical[c.start:c.end] == c.content
    assert any("generic clearance for internal" in c.content for c in chunk_document(doc, "E"))


def test_text_without_markup_is_unchanged():
    plain = "# Notes\n\nPlain words, a trailing space \nand 3 < 4 > 2 stay.\n"
    assert render_markdown(plain) == plain


def test_footnotes_of_one_word_are_kept_and_their_marks_too():
    """A new user's walk (2026-12-07): footnotes holding one URL or file name each were read as link reference
    definitions, dropped as "comments", and ``[^2][^3]`` rendered as "^2"."""
    src = ("# Plan\n\nRoles filter the content.[^1] Checks run first.[^2][^3]\n\n"
           "[^1]: Inventory-and-Schema.csv\n\n[^2]: https://example.org/rbac-guide\n\n"
           "[^3]: https://example.com/what-is-rbac\n\n[docs]: https://example.net/hidden-target\n")
    doc = extract_bytes(src.encode(), "plan.md")
    text = doc.canonical
    assert "content.[^1] Checks run first.[^2][^3]" in text
    for line in ("[^1]: Inventory-and-Schema.csv", "[^2]: https://example.org/rbac-guide",
                 "[^3]: https://example.com/what-is-rbac"):
        assert line in text
    assert "hidden-target" not in text  # a real link reference definition is still no text a reader sees
    # a footnote line ends where it ends: the definitions under it stay definitions (a reviewer's probe)
    src = ("See [the site][site] and a note[^1].\n\n[^1]: https://example.com/note\n[site]: https://example.com/site\n"
           "[//]: # (secret comment)\n")
    text = extract_bytes(src.encode(), "fn.md").canonical
    assert "See the site and a note[^1]." in text and "secret" not in text and "[^1]: https://example.com/note" in text
