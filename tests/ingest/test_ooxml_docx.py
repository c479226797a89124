"""Issue 37's DOCX kinds on small generated files: content controls, soft breaks, numbering, notes, headers and
footers, TOC fields, the visible title (rag/ingest/office/docx.py, rag/ingest/office/wordml.py)."""

from __future__ import annotations

import io
import zipfile

import ooxml_samples as S
from ooxml_samples import p

from rag.ingest.extract import extract_bytes
from rag.ingest.office.wordml import Numbering, format_number
from rag.types import TextRole


def _canon(d, name="guide.docx"):
    return extract_bytes(S.save(d), name)


def test_block_and_inline_content_controls_are_read_in_order():
    cover = (
        '<w:sdt><w:sdtPr><w:docPartObj><w:docPartGallery w:val="Cover Pages"/></w:docPartObj></w:sdtPr>'
        "<w:sdtContent>" + p("Forklift user guide", "Title") + p("Cover note: read before driving.")
        + "<w:sdt><w:sdtContent>" + p("Chapter one", "Heading1") + p("Charge the battery every night.")
        + "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Part</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Torque</w:t></w:r>"
        "</w:p></w:tc></w:tr><w:tr><w:tc><w:p><w:r><w:t>Wheel nut</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r>"
        "<w:t>180 Nm</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"
        "</w:sdtContent></w:sdt></w:sdtContent></w:sdt>"
        '<w:p><w:r><w:t xml:space="preserve">The operator is </w:t></w:r><w:sdt><w:sdtPr><w:alias w:val="Name"/>'
        "</w:sdtPr><w:sdtContent><w:r><w:t>Kim Lee</w:t></w:r></w:sdtContent></w:sdt>"
        "<w:r><w:t>, badge 7.</w:t></w:r></w:p>")
    doc = _canon(S.docx_with_body(cover))
    text = doc.canonical
    for piece in ("Cover note: read before driving.", "# Chapter one", "Charge the battery every night.",
                  "| Wheel nut | 180 Nm |", "The operator is Kim Lee, badge 7."):
        assert piece in text, piece
    assert text.index("Cover note") < text.index("Chapter one") < text.index("Wheel nut") < text.index("Kim Lee")
    assert doc.title == "Forklift user guide"


def test_soft_line_breaks_are_new_lines_and_tracked_insertions_stay():
    body = ('<w:p><w:r><w:t>Thank you</w:t><w:br/><w:t>OWASP Top-10 2013</w:t></w:r></w:p>'
            '<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Stock</w:t><w:cr/><w:t>rules</w:t></w:r></w:p>'
            '<w:p><w:r><w:t xml:space="preserve">Approved </w:t></w:r><w:ins w:id="1" w:author="a"><w:r>'
            '<w:t>today</w:t></w:r></w:ins><w:del w:id="2" w:author="a"><w:r><w:delText>yesterday</w:delText>'
            "</w:r></w:del></w:p>")
    text = _canon(S.docx_with_body(body)).canonical
    assert "Thank you\nOWASP Top-10 2013" in text and "Thank youOWASP" not in text
    assert "# Stock rules" in text
    assert "Approved today" in text and "yesterday" not in text


NUMBERING = S.strip_ns("""
<w:abstractNum w:abstractNumId="10">
  <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1"/></w:lvl>
  <w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2"/></w:lvl>
  <w:lvl w:ilvl="2"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2.%3"/></w:lvl>
</w:abstractNum>
<w:abstractNum w:abstractNumId="11">
  <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="upperLetter"/><w:lvlText w:val="%1)"/></w:lvl>
  <w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="lowerRoman"/><w:lvlText w:val="%2."/></w:lvl>
</w:abstractNum>
<w:abstractNum w:abstractNumId="12">
  <w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="\uf0b7"/></w:lvl>
</w:abstractNum>
<w:num w:numId="1"><w:abstractNumId w:val="10"/></w:num>
<w:num w:numId="2"><w:abstractNumId w:val="10"/></w:num>
<w:num w:numId="3"><w:abstractNumId w:val="11"/></w:num>
<w:num w:numId="4"><w:abstractNumId w:val="12"/></w:num>
<w:num w:numId="5"><w:abstractNumId w:val="11"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="1"/></w:lvlOverride></w:num>
""")


def test_numbering_is_rendered_as_word_shows_it():
    body = (p("Package", "Heading1", (1, 0)) + p("Parts", "Heading2", (1, 1)) + p("Manifest", "Heading2", (2, 1))
            + p("OpenDocument Package", "Heading3", (2, 2))
            + p("First option", num=(3, 0)) + p("Second option", num=(3, 0)) + p("Detail", num=(3, 1))
            + p("A dot", num=(4, 0)) + p("Again from A", num=(5, 0)) + p("see 1.2.1 (B)"))
    text = _canon(S.docx_with_body(body, numbering=NUMBERING)).canonical
    assert "# 1 Package" in text and "## 1.1 Parts" in text
    assert "## 1.2 Manifest" in text, "two w:num of one abstract list continue each other"
    assert "### 1.2.1 OpenDocument Package" in text
    assert "A) First option\nB) Second option\n  i. Detail" in text  # a nested item indented under its parent
    assert "- A dot" in text and "\uf0b7" not in text
    assert "A) Again from A" in text, "startOverride restarts the list"


def test_nested_bullets_stay_under_their_item():
    """docx4j's Getting Started (a new user's walk, 2026-12-07): "Java 11" and "Java 17", indented under "It supports
    the recent Java long term releases:" (``w:ilvl`` 1), read as items of the outer list."""
    body = (p("Runs on Linux", num=(4, 0)) + p("Supports the long term releases:", num=(4, 0))
            + p("Java 11", num=(4, 1)) + p("Java 17", num=(4, 1)) + p("Ships as one jar", num=(4, 0)))
    numbering = NUMBERING.replace('<w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="\uf0b7"/></w:lvl>',
                                  '<w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="\uf0b7"/></w:lvl>'
                                  '<w:lvl w:ilvl="1"><w:numFmt w:val="bullet"/><w:lvlText w:val="o"/></w:lvl>')
    text = _canon(S.docx_with_body(body, numbering=numbering)).canonical
    assert ("- Runs on Linux\n- Supports the long term releases:\n  - Java 11\n  - Java 17\n- Ships as one jar"
            in text)


def test_number_formats():
    assert [format_number(n, "upperLetter") for n in (1, 2, 27)] == ["A", "B", "AA"]
    assert format_number(14, "lowerRoman") == "xiv" and format_number(3, "decimalZero") == "03"
    assert Numbering(None).label("1", 0) is None


def _with_notes(body: str, footnotes: dict[int, str], endnotes: dict[int, str]) -> bytes:
    data = S.save(S.docx_with_body(body))
    return S.add_parts(
        data, {"word/footnotes.xml": S.notes_part("footnote", footnotes),
               "word/endnotes.xml": S.notes_part("endnote", endnotes)},
        [("rIdFn", S.FOOTNOTES_TYPE, "footnotes.xml"), ("rIdEn", S.ENDNOTES_TYPE, "endnotes.xml")],
        [("word/footnotes.xml", S.FOOTNOTES_CT), ("word/endnotes.xml", S.ENDNOTES_CT)])


def test_footnotes_and_endnotes_keep_their_number():
    body = ('<w:p><w:r><w:t>Memes circulate through networks.</w:t></w:r>' + S.ref("footnote", 7)
            + '<w:r><w:t xml:space="preserve"> They leave traces.</w:t></w:r>' + S.ref("footnote", 3)
            + S.ref("endnote", 2) + "</w:p>")
    doc = extract_bytes(_with_notes(body, {3: "Second note, on traces.", 7: "Dean, Affect and Drive, 2016."},
                                    {2: "An endnote in roman numbering."}), "essay.docx")
    text = doc.canonical
    assert "Memes circulate through networks.[^1] They leave traces.[^2][^i]" in text
    assert "# Footnotes\n\n[^1]: Dean, Affect and Drive, 2016.\n\n[^2]: Second note, on traces." in text
    assert "# Endnotes\n\n[^i]: An endnote in roman numbering." in text
    assert "separator" not in text


def test_headers_and_footers_once_with_the_furniture_role():
    import docx
    from docx.enum.section import WD_SECTION

    d = docx.Document()
    d.sections[0].header.paragraphs[0].text = "DRAFT VERSION – COMMENTS WELCOME"
    d.sections[0].footer.paragraphs[0].text = "Appendix of CSF conference"
    d.add_paragraph("Body of the first section.")
    d.add_section(WD_SECTION.NEW_PAGE)  # linked to the previous: same header
    d.add_paragraph("Body of the second section.")
    doc = _canon(d)
    text = doc.canonical
    assert text.count("DRAFT VERSION – COMMENTS WELCOME") == 1 and text.count("Appendix of CSF conference") == 1
    start = text.index("# Page headers and footers")
    assert text.index("Body of the second section.") < start
    assert [(r.role, r.start) for r in doc.roles] == [(TextRole.FURNITURE, start)]
    assert doc.roles[0].end == len(text)


def test_a_toc_field_is_tagged_as_table_of_contents():
    toc = ('<w:p><w:pPr><w:pStyle w:val="TOC1"/></w:pPr><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r>'
           '<w:instrText xml:space="preserve"> TOC \\o "1-3" \\h \\z \\u </w:instrText></w:r><w:r>'
           '<w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>Goals</w:t></w:r><w:r><w:tab/></w:r><w:r><w:t>1</w:t>'
           "</w:r></w:p>"
           '<w:p><w:r><w:t>Non-Goals</w:t></w:r><w:r><w:tab/></w:r><w:r><w:t>2</w:t></w:r></w:p>'
           '<w:p><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>')
    doc = _canon(S.docx_with_body(p("Contents list") + toc + p("Goals", "Heading1") + p("Be useful.")))
    text = doc.canonical
    spans = [(r.role, text[r.start:r.end]) for r in doc.roles]
    assert spans == [(TextRole.TOC, "Goals 1\n\nNon-Goals 2")]
    assert "\\o" not in text and "TOC" not in text


def test_the_visible_title_wins_over_stale_metadata():
    stale = _canon(S.docx_with_body(p("Annual fee table 2005", "Title") + p("Fees rose."),
                                    title="Annual fee table 2002"))
    assert stale.title == "Annual fee table 2005"
    agreeing = _canon(S.docx_with_body(p("Retention handbook for staff") + p("Keep records."),
                                       title="Retention handbook"))
    assert agreeing.title == "Retention handbook"
    unseen = _canon(S.docx_with_body(p("Chapter", "Heading1") + p("Keep records."), title="Some other talk"))
    assert unseen.title == "Chapter"


def test_hidden_runs_in_footnotes_are_left_out():
    body = '<w:p><w:r><w:t>Visible body.</w:t></w:r>' + S.ref("footnote", 1) + "</w:p>"
    data = _with_notes(body, {1: "Seen note."}, {})
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body_xml = src.read(info)
            if info.filename == "word/footnotes.xml":
                body_xml = body_xml.replace(b"</w:p></w:footnote></w:footnotes>",
                                            b'<w:r><w:rPr><w:vanish/></w:rPr><w:t>SECRET-NOTE</w:t></w:r>'
                                            b"</w:p></w:footnote></w:footnotes>")
            dst.writestr(info, body_xml)
    doc = extract_bytes(out.getvalue(), "n.docx")
    assert "Seen note." in doc.canonical and "SECRET-NOTE" not in doc.canonical
    assert any(w.startswith("hidden text left out: 1 runs") for w in doc.warnings)


def test_charts_and_smartart_in_a_docx_are_read_after_their_paragraph():
    from rag.ingest.limits import Limits
    from rag.ingest.office.coverage_ooxml import docx_seen

    body = p("Results follow.") + S.docx_graphics_paragraph("rIdCh", "rIdDgm") + p("After the figure.")
    data = S.add_parts(
        S.save(S.docx_with_body(body)),
        {"word/charts/chart1.xml": S.chart_part("Incidents per quarter", "2024", ["Q1", "Q2"]),
         "word/diagrams/data1.xml": S.smartart_data([("Report", ["Triage"]), ("Fix", [])])},
        [("rIdCh", S.CHART_TYPE, "charts/chart1.xml"), ("rIdDgm", S.DIAGRAM_DATA_TYPE, "diagrams/data1.xml")],
        [("word/charts/chart1.xml", S.CHART_CT), ("word/diagrams/data1.xml", S.DIAGRAM_DATA_CT)])
    doc = extract_bytes(data, "report.docx")
    text = doc.canonical
    assert ("Results follow.\n\nChart: Incidents per quarter\nSeries: 2024\nCategories: Q1; Q2\n\n"
            "Report\n- Triage\nFix\n\nAfter the figure.") in text
    assert doc.coverage == 1.0
    places = {(s.place, s.text) for s in docx_seen(data, Limits())}
    assert {("chart", "Incidents per quarter"), ("SmartArt", "Triage")} <= places


def test_a_byline_after_a_break_in_the_title_paragraph_is_not_the_title():
    body = ('<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Wojak’s lament</w:t></w:r><w:r><w:br/><w:br/>'
            "<w:t>Anthony Glyn Burton</w:t></w:r></w:p>" + p("Body."))
    doc = _canon(S.docx_with_body(body))
    assert doc.title == "Wojak’s lament"
    assert doc.canonical.startswith("# Wojak’s lament\n\nAnthony Glyn Burton\n\nBody.")


def test_a_heading_paragraph_ends_at_an_empty_line_and_the_byline_is_body_text():
    # The real essays (corpus/real/docx/essay-critical-meme-reader-chapter1/3.docx): one Heading 1 paragraph
    # holds the title, two <w:br/> and the author, the breaks in one run or in runs of their own.
    body = ('<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>‘A Vaguely Erotic Mime’: M</w:t></w:r>'
            "<w:r><w:t>imetic Text</w:t></w:r><w:r><w:br/></w:r><w:r><w:br/></w:r>"
            "<w:r><w:t>Sabrina Ward-Kimola</w:t></w:r></w:p>" + p("TikTok dances assemble fragments.")
            + '<w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t>Two lines</w:t><w:br/>'
            "<w:t>one heading</w:t><w:br/></w:r></w:p>" + p("Second body."))
    doc = _canon(S.docx_with_body(body), "chapter3.docx")
    text = doc.canonical
    assert text.startswith("# ‘A Vaguely Erotic Mime’: Mimetic Text\n\nSabrina Ward-Kimola\n\nTikTok dances")
    assert [(h.level, h.title) for h in doc.headings] == [(1, "‘A Vaguely Erotic Mime’: Mimetic Text"),
                                                          (2, "Two lines one heading")]
    assert doc.title == "‘A Vaguely Erotic Mime’: Mimetic Text"
    byline = next(part for part in doc.parts if text[part.start:part.end] == "Sabrina Ward-Kimola")
    assert (byline.number, byline.scope) == (1, "‘A Vaguely Erotic Mime’: Mimetic Text")
    body_part = next(part for part in doc.parts if text[part.start:part.end].startswith("TikTok"))
    assert body_part.number == 2


def test_a_word_for_the_web_docx_whose_body_is_document2_is_read():
    # Word for the web saves the body as word/document2.xml, named in _rels/.rels; docx-rs's fixtures (a walk,
    # 2026-12-07) were refused as "a ZIP archive that is not one of the formats read here"
    data = S.save(S.docx_with_body(p("The lease runs for 24 months from signing.")))
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            body = zin.read(info)
            name = "word/document2.xml" if info.filename == "word/document.xml" else info.filename
            if info.filename in ("_rels/.rels", "[Content_Types].xml"):
                body = body.replace(b"word/document.xml", b"word/document2.xml")
            if info.filename == "word/_rels/document.xml.rels":
                name = "word/_rels/document2.xml.rels"
            zout.writestr(name, body)
    doc = extract_bytes(out.getvalue(), "lease.docx")
    assert "The lease runs for 24 months from signing." in doc.canonical
    assert not any("coverage" in w for w in doc.warnings), doc.warnings


def test_an_emoji_written_as_a_symbol_extension_is_read():
    # Word 2016 writes an emoji as w16se:symEx in mc:Choice, its w:t only in mc:Fallback (skipped); docx-rs's
    # image.docx (a walk, 2026-12-07) read "Hello inline" for "Hello inline 🐱"
    run = ('<w:r><w:t xml:space="preserve">Status: </w:t></w:r><w:r>'
           '<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
           'xmlns:w16se="http://schemas.microsoft.com/office/word/2015/wordml/symex">'
           '<mc:Choice Requires="w16se"><w16se:symEx w16se:font="Segoe UI Emoji" w16se:char="2705"/></mc:Choice>'
           '<mc:Fallback><w:t>\u2705</w:t></mc:Fallback></mc:AlternateContent></w:r>'
           '<w:r><w:t xml:space="preserve"> approved</w:t></w:r>')
    doc = _canon(S.docx_with_body(f"<w:p>{run}</w:p>"), "status.docx")
    assert "Status: \u2705 approved" in doc.canonical
