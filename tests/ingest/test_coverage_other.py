"""The coverage auditors of ODF and EPUB (issue 37): what a person sees, read from the raw XML, and the canonical
text's share of it; a lost table is named. Files are written here with odfdo and ebooklib."""

from __future__ import annotations

import io

import samples
from odfdo import Document, Element, Header, Paragraph

from rag.ingest.coverage import audit, auditors, judge
from rag.ingest.coverage_other import epub_seen, odf_seen, visible_pieces
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
    assert MediaType.ODT.value in auditors() and MediaType.EPUB.value not in auditors()  # CSS not read yet
