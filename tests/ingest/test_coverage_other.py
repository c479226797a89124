"""The coverage auditors of ODF and EPUB (issue 37): what a person sees, read from the raw XML, and the canonical
text's share of it; a lost table is named. Files are written here with odfdo and ebooklib."""

from __future__ import annotations

import io

import samples
from odfdo import Document, Element, Header, Paragraph

from rag.ingest.coverage import audit, auditors, judge
from rag.ingest.coverage_other import epub_seen, html_seen, markdown_seen, odf_seen, visible_pieces
from rag.ingest.extract import extract_bytes
from rag.ingest.limits import Limits
from rag.types import MediaType


def _odt() -> bytes:
    doc = Document("text")
    doc.body.append(Header(1, "Requirements"))
    doc.body.append(Paragraph("Every component is identified."))
    doc.body.append(Element.from_tag(
        '<table:table table:name="T"><table:table-column/><table:table-row><table:table-cell><text:list>'
        "<text:list-item><text:p>les composants de l'application sont identifiés</text:p></text:list-item>"
        "</text:list></table:table-cell></table:table-row></table:table>"))
    note = Paragraph("A claim")
    note.append(Element.from_tag('<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation>'
                                 '<text:note-body><text:p>The note the reader keeps.</text:p></text:note-body>'
                                 '</text:note>'))
    doc.body.append(note)
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def test_the_odf_auditor_sees_tables_lists_and_notes_and_the_reader_keeps_them():
    data = _odt()
    seen = odf_seen(data, Limits())
    assert {s.place for s in seen} >= {"body", "table", "footnote"}
    doc = extract_bytes(data, "req.odt")
    cov = audit(doc, data, Limits())
    assert cov is not None and cov.share == 1.0
    lost = judge(seen, doc.canonical.replace("les composants de l'application sont identifiés", ""))
    assert lost.share < 0.95 and lost.missed[0][0] == "table" and "in tables" in lost.warning()


def test_the_epub_auditor_reads_the_spine_and_html_rules_leave_hidden_text_out():
    data = samples.epub_bytes()
    assert any("The wind rose at dawn" in s.text for s in epub_seen(data, Limits()))
    assert judge(epub_seen(data, Limits()), extract_bytes(data, "storm.epub").canonical).share == 1.0
    assert visible_pieces("<body><main><p>Shown</p><p style='display: none'>Secret</p></main><nav>Menu</nav>"
                          "</body>") == ["Shown"]
    assert {MediaType.ODT.value, MediaType.EPUB.value, MediaType.HTML.value, MediaType.MARKDOWN.value,
            MediaType.CSV.value, MediaType.TEXT.value} <= set(auditors())


PAGE = b"""<!doctype html><html><head><style>.promo { display: none }</style></head><body>
<nav><a href="/">Home</a> <a href="/shop">Shop offers</a></nav>
<div class="sidebar">Related stories you might like</div>
<main><h1>Forklift charging</h1><p>Charge the forklift battery overnight in bay four.</p>
<p class="promo">Subscribe to the premium newsletter today</p>
<table><caption>Table 1: charging times</caption><tr><td>Lead acid</td><td>eight hours</td></tr></table></main>
<footer>Copyright the depot company</footer></body></html>"""


def test_the_html_audit_leaves_out_what_the_reader_reported_left_out_and_still_sees_a_loss():
    doc = extract_bytes(PAGE, "page.html")
    assert "newsletter" not in doc.canonical and "Related stories" not in doc.canonical
    assert any("newsletter" in t for t in doc.left_out)  # hidden by the page's style sheet, with its reason
    assert doc.coverage == 1.0 and not any(w.startswith("text coverage") for w in doc.warnings)
    cov = judge(html_seen(PAGE, Limits()), doc.canonical.replace("Table 1: charging times", ""), doc.left_out)
    assert cov.share < 1.0 and cov.missed[0][0] == "body"
    lost = judge(html_seen(PAGE, Limits()), doc.canonical[:doc.canonical.index("Charge")], doc.left_out)
    assert lost.share < 0.95 and lost.warning().startswith("text coverage")


def test_markdown_csv_and_text_are_audited():
    md = (b"---\ntitle: Depot guide\n---\n# Depot\n\nCharge the [forklift](https://x.org/f) battery "
          b"**overnight**.\n\n<div class='x'>\n<p>Bay <b>four</b> only</p>\n</div>\n\n"
          b"You need <span style='display:none'>the secret word</span> nothing else.\n")
    doc = extract_bytes(md, "guide.md")
    assert doc.coverage == 1.0, doc.canonical
    assert judge(markdown_seen(md, Limits()), doc.canonical.replace("Bay four only", ""), doc.left_out).share < 0.95
    csv_data = "name;city\nÅsa;Malmö\nBjörn;Göteborg\n".encode()
    assert extract_bytes(csv_data, "people.csv").coverage == 1.0
    assert extract_bytes(b"Plain notes about the depot.\n", "notes.txt").coverage == 1.0
