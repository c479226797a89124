"""Issue 26, item 5: quotes and exports are inert. Document text with script and HTML payloads, Markdown links and
bare URLs is written into a chat export (and the chat page's Markdown) as text: no raw tag, no link, no autolink."""

from __future__ import annotations

import re

from fakes import gate_result

from rag.answer.cite import Citation
from rag.answer.history import Turn, chat_markdown
from rag.answer.pipeline import Answer
from rag.text import markdown_literal

PAYLOAD = ('Refunds take 30 days. <script>window.__pwn="script"</script> <img src=x onerror="window.__pwn=1"> '
           "[phish](https://evil.example/login) www.evil.example/bare mail me@evil.example &lt;i&gt;")


def _turn() -> Turn:
    c = Citation(index=1, document_id="a" * 64, document_name="<b>x</b>.md", locator_label="<b>x</b>.md > Refunds",
                 fragment="#char=0,20", quote=PAYLOAD + "\n> not a quote\n- not a list", cosine_distance=0.2,
                 fused_rank=1, page=None, start=0, end=20, media_type="text/markdown", chunk_id=1)
    a = Answer(query="refund window?", gate=gate_result("refund window?"),
               text="Refunds take 30 days [1]. See [here](https://evil.example) <script>x</script>", citations=[c],
               model="m.gguf", raw_text="")
    return Turn(question="refund window? <img src=x onerror=alert(1)>", standalone="refund window?",
                       answer=a, created_at="2026-12-01T10:00:00+00:00")


def test_export_never_writes_raw_html_links_or_autolinks():
    md = chat_markdown("<script>t</script>", [_turn()], collection="A")
    assert "<script" not in md and "<img" not in md and "<b>" not in md
    assert "](https://" not in md and "https://" not in md  # written as https\://, which no viewer links
    assert "www.evil" not in md and "me@evil" not in md
    assert "&lt;script>window.\\_\\_pwn" in md  # still readable as what the document says
    assert "\n> \\> not a quote" in md and "\n> \\- not a list" in md
    assert "\\&lt;i\\&gt;" in md  # an entity in the document shows as written, not as <i>


def test_markdown_literal_breaks_every_link_form():
    out = markdown_literal("[a](https://x.example) <https://y.example> www.z.example u@v.example ![i](j) [r]: /k")
    assert not re.search(r"(?<!\\)\[|https://|www\.|(?<!\\)@|<https", out)


def test_markdown_literal_breaks_directives_and_shortcodes_but_not_ranges():
    """``:red[text]`` coloured a quote and dropped ``:red`` (2026-12-02); ``:smile:`` became an emoji. A colon that
    opens a word is escaped and followed by a WORD JOINER; one inside a word (a cell range, ``key:value``) stays."""
    out = markdown_literal(":red[REDTEXT] and :smile: in A1:E4, key:value")
    assert "\\:\u2060red" in out and "\\:\u2060smile:" in out
    assert "A1:E4" in out and "key:value" in out
