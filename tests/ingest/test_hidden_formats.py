"""Issue 26, item 2: hidden text is never read, in DOCX, PPTX, XLSX, HTML, EPUB and Markdown (PDF: test_hidden.py).

Each file is made here with the format's own library and holds a visible sentence plus the same sentence with a
fake password hidden the way that format hides text; visible look-alikes (white text on a dark fill, speaker
notes) must stay. What was left out is reported on the document."""

from __future__ import annotations

import io
import re

import hostile_files as hf
import pytest

from rag.ingest.extract import extract_bytes, extract_path

CANARY = re.compile(r"CANARY-[A-Z0-9-]+")


def _secret(tag: str) -> str:
    return f"The guest wifi password is CANARY-{tag}."


def _docx() -> bytes:
    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from docx.oxml import parse_xml
    from docx.shared import Pt, RGBColor

    d = docx.Document()
    d.add_paragraph(hf.VISIBLE)
    p = d.add_paragraph("Visible start. ")
    p.add_run(_secret("VANISH")).font.hidden = True
    p.add_run(_secret("WHITE")).font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
    p.add_run(_secret("TINY")).font.size = Pt(1)
    style = d.styles.add_style("Ghost", WD_STYLE_TYPE.CHARACTER)
    style.font.hidden = True
    p.add_run(_secret("STYLE"), style="Ghost")
    dark = d.add_paragraph()
    dark.paragraph_format.element.get_or_add_pPr().append(parse_xml(
        '<w:shd xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" w:val="clear" w:fill="1F3864"/>'))
    dark.add_run("White on navy is read: the lobby opens at 7.").font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
    table = d.add_table(rows=1, cols=1)
    table.cell(0, 0).paragraphs[0].add_run(_secret("CELL")).font.hidden = True
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def test_docx_hidden_runs_are_left_out_and_counted():
    doc = extract_bytes(_docx(), "wifi.docx")
    assert not CANARY.findall(doc.canonical)
    assert hf.VISIBLE in doc.canonical and "Visible start." in doc.canonical
    assert "White on navy is read: the lobby opens at 7." in doc.canonical
    assert doc.warnings == ("hidden text left out: 5 runs (3 hidden (w:vanish), 1 white on white, 1 under 2 pt); "
                            "never indexed or read by the model",)


def _pptx() -> bytes:
    import pptx
    from pptx.dml.color import RGBColor
    from pptx.util import Inches, Pt

    deck = pptx.Presentation()
    s1 = deck.slides.add_slide(deck.slide_layouts[5])
    s1.shapes.title.text = "Guest wifi"
    box = s1.shapes.add_textbox(Inches(1), Inches(2), Inches(8), Inches(1)).text_frame
    box.text = hf.VISIBLE
    run = box.paragraphs[0].add_run()
    run.text = " " + _secret("WHITE")
    run.font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
    tiny = box.add_paragraph().add_run()
    tiny.text, tiny.font.size = _secret("TINY"), Pt(1)
    off = s1.shapes.add_textbox(Inches(20), Inches(2), Inches(3), Inches(1))
    off.text_frame.text = _secret("OFFSLIDE")
    banner = s1.shapes.add_shape(1, Inches(1), Inches(4), Inches(8), Inches(1))  # a filled rectangle
    banner.fill.solid()
    banner.fill.fore_color.rgb = RGBColor(0x1F, 0x38, 0x64)
    banner.text_frame.text = "White on navy is read: the lobby opens at 7."
    banner.text_frame.paragraphs[0].runs[0].font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
    s1.notes_slide.notes_text_frame.text = "Presenter: remind guests the network name is GUEST-5G."
    s2 = deck.slides.add_slide(deck.slide_layouts[5])
    s2.shapes.title.text = _secret("HIDDENSLIDE")
    s2._element.set("show", "0")
    s3 = deck.slides.add_slide(deck.slide_layouts[5])
    s3.shapes.title.text = "Parking"
    buf = io.BytesIO()
    deck.save(buf)
    return buf.getvalue()


def test_pptx_hidden_slides_off_slide_and_white_text_are_left_out_notes_stay():
    doc = extract_bytes(_pptx(), "wifi.pptx")
    assert not CANARY.findall(doc.canonical)
    assert hf.VISIBLE in doc.canonical and "White on navy is read" in doc.canonical
    assert "network name is GUEST-5G" in doc.canonical  # speaker notes are content
    assert [p.number for p in doc.parts] == [1, 3]  # slide numbers stay PowerPoint's
    assert "hidden slides left out: 2; never indexed or read by the model" in doc.warnings
    assert ("hidden text left out: 3 pieces of text (1 off the slide, 1 white on white, 1 under 2 pt); never indexed "
            "or read by the model") in doc.warnings


def _xlsx() -> bytes:
    import openpyxl
    from openpyxl.styles import Font, PatternFill

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Wifi"
    ws.append(["Topic", "Note"])
    ws.append(["Guest wifi", hf.VISIBLE])
    ws.append(["Hidden row", _secret("ROW")])
    ws.row_dimensions[3].hidden = True
    ws["C2"] = _secret("COLUMN")
    ws.column_dimensions["C"].hidden = True
    ws["B4"] = _secret("WHITEFONT")
    ws["B4"].font = Font(color="FFFFFF")
    ws["B5"] = _secret("FORMAT")
    ws["B5"].number_format = ";;;"
    ws["B6"] = "White on navy is read: the lobby opens at 7."
    ws["B6"].font = Font(color="FFFFFF")
    ws["B6"].fill = PatternFill("solid", fgColor="1F3864")
    for title, state in (("Secret", "hidden"), ("Deep", "veryHidden")):
        extra = wb.create_sheet(title)
        extra["A1"] = _secret(title.upper())
        extra.sheet_state = state
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def test_xlsx_hidden_sheets_rows_columns_and_cells_are_left_out():
    doc = extract_bytes(_xlsx(), "wifi.xlsx")
    assert not CANARY.findall(doc.canonical)
    assert hf.VISIBLE in doc.canonical and "White on navy is read" in doc.canonical
    assert "hidden sheets left out: Secret, Deep; never indexed or read by the model" in doc.warnings
    counts = next(w for w in doc.warnings if w.startswith("hidden text left out"))
    for part in ("5 cells", "2 in hidden rows", "1 in hidden columns", "1 white font", "1 number format ;;;"):
        assert part in counts


HTML = f"""<!doctype html><html><head><style>
.ghost {{ display: none }} #far {{ position: absolute; left: -10000px }}
@media print {{ .printonly {{ display: none }} }}
.dark {{ background: #102040 }} .dark p {{ color: #fff }}
</style></head><body><main><h1>Guest wifi</h1><p>{hf.VISIBLE}</p>
<p><span style="font-size:0">{_secret('FONT0')}</span><span style="opacity: 0">{_secret('OPACITY')}</span>
<span style="visibility:hidden">{_secret('VISIBILITY')}</span><span style="color:#FFFFFF">{_secret('WHITE')}</span>
<span style="color: rgba(0,0,0,0)">{_secret('TRANSPARENT')}</span><span class="ghost">{_secret('CLASS')}</span>
<span id="far">{_secret('OFFSCREEN')}</span><span hidden>{_secret('ATTR')}</span>
<span style="text-indent:-9999px;display:block">{_secret('INDENT')}</span>
<span style="position:absolute;clip:rect(0,0,0,0)">{_secret('CLIP')}</span></p>
<p class="printonly">Kept on screen: the lobby opens at 7.</p>
<div class="dark"><p>White on navy is read: breakfast is at 8.</p></div></main></body></html>"""


def test_html_css_hidden_elements_are_left_out_visible_lookalikes_stay():
    doc = extract_bytes(HTML.encode(), "wifi.html")
    assert not CANARY.findall(doc.canonical)
    assert hf.VISIBLE in doc.canonical
    assert "Kept on screen: the lobby opens at 7." in doc.canonical  # a print-only rule hides nothing on screen
    assert "White on navy is read: breakfast is at 8." in doc.canonical
    assert doc.warnings[0].startswith("hidden text left out: 10 elements (")


def test_epub_chapters_follow_their_linked_style_sheets():
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("wifi")
    book.set_title("Hotel guide")
    book.set_language("en")
    css = epub.EpubItem(uid="style", file_name="style/main.css", media_type="text/css",
                        content=b".note { color: white } .small { font-size: 1px }")
    c1 = epub.EpubHtml(title="Wifi", file_name="text/c1.xhtml", lang="en")
    c1.content = (f'<html><head><link rel="stylesheet" href="../style/main.css"/></head><body><h1>Wifi</h1>'
                  f'<p>{hf.VISIBLE}</p><p class="note">{_secret("EPUBWHITE")}</p>'
                  f'<p class="small">{_secret("EPUBSMALL")}</p></body></html>')
    c1.add_item(css)
    book.add_item(css)
    book.add_item(c1)
    book.toc = (epub.Link("text/c1.xhtml", "Wifi", "c1"),)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", c1]
    buf = io.BytesIO()
    epub.write_epub(buf, book)
    doc = extract_bytes(buf.getvalue(), "guide.epub")
    assert not CANARY.findall(doc.canonical) and hf.VISIBLE in doc.canonical
    assert doc.warnings == ("hidden text left out: 2 elements (1 white on white, 1 tiny font); never indexed or read "
                            "by the model",)


def test_markdown_reference_comments_and_tag_characters_are_left_out():
    smuggled = "".join(chr(0xE0000 + ord(c)) for c in "password CANARY-TAGS")
    text = (f"# Wifi\n\n{hf.VISIBLE}{smuggled}\n\n[//]: # ({_secret('MDCOMMENT')})\n[comment]: <> ({_secret('MD2')})\n\n"
            "```\n[//]: # (a definition inside code is shown as code)\n```\n")
    doc = extract_bytes(text.encode(), "wifi.md")
    assert not CANARY.findall(doc.canonical) and "password CANARY" not in doc.canonical
    assert hf.VISIBLE in doc.canonical and "[//]: # (a definition inside code is shown as code)" in doc.canonical
    assert doc.warnings == ("hidden text left out: 2 link reference definition(s) (Markdown comments such as "
                            "[//]: # (...)); never indexed or read by the model",)


@pytest.mark.parametrize("name", ["r3_e1_inject.docx", "r3_e2_inject.pptx", "r3_e3_inject.xlsx", "r3_e4_inject.html"])
def test_handed_injection_files_keep_only_what_a_reader_sees(cases_dir, name):
    doc = extract_path(cases_dir / "round3" / name)
    assert "Guest wifi: the password rotates every Monday" in doc.canonical
    assert set(CANARY.findall(doc.canonical)) <= {"CANARY-PPTX-NOTES"}  # speaker notes are the deck's content
    assert any(w.startswith("hidden") for w in doc.warnings)


def test_a_deck_whose_slides_are_all_hidden_says_so():
    # 29 of ShapeCrawler's decks hide every slide (a walk, 2026-12-07): the refusal said "they hold 0 shape(s)"
    import pptx

    from rag.errors import ExtractionError

    deck = pptx.Presentation()
    for title in ("Chapter 23 Health Records", "Chapter 24 Privacy"):
        s = deck.slides.add_slide(deck.slide_layouts[5])
        s.shapes.title.text = title
        s._element.set("show", "0")
    buf = io.BytesIO()
    deck.save(buf)
    with pytest.raises(ExtractionError, match=r"every slide of this PPTX is hidden \(2 slide\(s\)\)"):
        extract_bytes(buf.getvalue(), "records.pptx")
