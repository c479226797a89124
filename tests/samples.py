"""Tiny real files of every format of issue 17, made with the same libraries the readers use (python-docx,
python-pptx, openpyxl, ebooklib, Pillow) or written by hand (HTML, CSV). Shared by the ingest, UI and browser
tests. Each holds a few facts found nowhere else, so a question about one retrieves that file first.
"""

from __future__ import annotations

import datetime as dt
import io

#: Facts the browser test asks about, and the words its answer's quote must hold.
DOCX_QUESTION = "How often must the harbour crane's wire rope be inspected?"
DOCX_NEEDLE = "The wire rope of the harbour crane is inspected every 90 days by a certified rigger."
PPTX_QUESTION = "What is the speed limit for forklifts in the cold store?"
PPTX_NEEDLE = "Forklifts in the cold store drive at 6 km/h at most."


def docx_bytes() -> bytes:
    """A Word file: title, headings on two levels, paragraphs, a bulleted list, a table."""
    import docx

    d = docx.Document()
    d.add_paragraph("Harbour operations manual", style="Title")
    d.add_paragraph("This manual covers the quay, the cranes and the cold store.")
    d.add_heading("Cranes", level=1)
    d.add_paragraph("Only trained operators drive the cranes, and never in winds above 20 m/s.")
    d.add_heading("Inspections", level=2)
    d.add_paragraph("Every lifting device has a logbook kept in the crane cabin.")
    d.add_paragraph(DOCX_NEEDLE)
    d.add_paragraph("Check the hook latch", style="List Bullet")
    d.add_paragraph("Check the limit switches", style="List Bullet")
    table = d.add_table(rows=3, cols=3)
    for i, row in enumerate([["Device", "Interval", "Who"], ["Wire rope", "90 days", "rigger"],
                             ["Brakes", "30 days", "mechanic"]]):
        for j, value in enumerate(row):
            table.cell(i, j).text = value
    d.add_heading("Quay", level=1)
    d.add_paragraph("Mooring lines are checked at every change of shift.")
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def pptx_bytes() -> bytes:
    """A deck of three slides: a title slide, a bulleted slide with speaker notes, a slide with a table."""
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    s1 = deck.slides.add_slide(deck.slide_layouts[0])
    s1.shapes.title.text = "Cold store induction"
    s1.placeholders[1].text = "Warehouse team, spring intake"
    s2 = deck.slides.add_slide(deck.slide_layouts[1])
    s2.shapes.title.text = "Driving in the cold store"
    frame = s2.placeholders[1].text_frame
    frame.text = "Wear the insulated gloves at all times."
    p = frame.add_paragraph()
    p.text = PPTX_NEEDLE
    p.level = 1
    s2.notes_slide.notes_text_frame.text = "Tell the story of the 2023 collision near door 4."
    s3 = deck.slides.add_slide(deck.slide_layouts[5])
    s3.shapes.title.text = "Temperatures"
    table = s3.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(1.5)).table
    for i, row in enumerate([["Room", "Set point"], ["Chiller", "2 °C"], ["Freezer", "-24 °C"]]):
        for j, value in enumerate(row):
            table.cell(i, j).text = value
    buf = io.BytesIO()
    deck.save(buf)
    return buf.getvalue()


def xlsx_bytes() -> bytes:
    """A workbook: a sales sheet with number formats and a date, an empty sheet, a sheet starting at B2."""
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Q1 sales"
    ws.append(["Region", "Units", "Price", "Share", "Date"])
    ws.append(["North", 1200, 2.5, 0.125, dt.date(2026, 3, 1)])
    ws.append([])
    ws.append(["South", 950, 1234.5, 0.3, dt.datetime(2026, 3, 2, 14, 30)])
    ws["C2"].number_format = "0.00"
    ws["C4"].number_format = '"$"#,##0.00'
    ws["D2"].number_format = "0.0%"
    ws["D4"].number_format = "0%"
    wb.create_sheet("Empty")
    notes = wb.create_sheet("Notes")
    notes["B2"] = "Remark"
    notes["B3"] = "Forecast holds"
    notes["C3"] = 0.1 + 0.2
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


CSV_TEXT = "id,item,price\n1,bolt,007\n2,\"nut, hex\",3.10\n\n4,washer,1e3\n"


HTML_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Install | Acme docs</title>
<style>p {color: red}</style><script>var tracking = 1;</script></head><body>
<header class="site-header"><a href="/">Acme</a><nav><ul><li><a>Home page</a></li><li><a>All docs</a></li></ul></nav>
</header><div class="cookie-banner">We use cookies on this site. <button>OK</button></div>
<main><h1 id="install">Installing Acme</h1><p>Acme runs on   Linux
and macOS.<br>It needs Python 3.11.</p>
<h2>On Linux</h2><ol><li>Download the <b>tarball</b>.</li><li>Unpack it<ul><li>with tar</li></ul></li></ol>
<pre>  tar xf acme.tgz
  ./install --prefix /opt/acme</pre>
<table><tr><th>Distribution</th><th>Oldest release</th></tr><tr><td>Debian</td><td>12</td></tr></table>
<section id="mac"><h2>On macOS</h2><p>Use the brew formula named acme-cli.</p></section>
</main><aside class="sidebar">Related posts you may like</aside><footer>(c) Acme Corp, all rights reserved</footer>
</body></html>"""


def epub_bytes() -> bytes:
    """An EPUB 3 book: a navigation document (not a chapter) and two chapters, one with a sub-heading."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("storm-almanac")
    book.set_title("Storm Almanac")
    book.set_language("en")
    c1 = epub.EpubHtml(title="The first storm", file_name="c1.xhtml", lang="en")
    c1.content = ("<html><body><h1>The first storm</h1><p>The wind rose at dawn over the harbour.</p>"
                  "<p>By noon the boats were in.</p><h2>Aftermath</h2><p>Three roofs were lost.</p></body></html>")
    c2 = epub.EpubHtml(title="Calm", file_name="c2.xhtml", lang="en")
    c2.content = ("<html><body><p>The sea lay flat for a week.</p>"
                  "<ul><li>no wind</li><li>no rain</li></ul></body></html>")
    book.add_item(c1)
    book.add_item(c2)
    book.toc = (epub.Link("c1.xhtml", "The first storm", "c1"), epub.Link("c2.xhtml", "Calm", "c2"))
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", c1, c2]
    buf = io.BytesIO()
    epub.write_epub(buf, book)
    return buf.getvalue()


IMAGE_LINES = ["Crane inspection record", "The hook latch was replaced on 12 March.",
               "Load test passed at 5 tonnes.", "Inspector: Morgan Ellery"]


def png_bytes(fmt: str = "PNG") -> bytes:
    """A picture of typed text (black on white, Pillow's own font): a title, a paragraph of two lines, a
    signature line after a gap."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (900, 400), "white")
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=32)
    for (x, y), text in zip([(40, 40), (40, 120), (40, 170), (40, 280)], IMAGE_LINES):
        draw.text((x, y), text, fill="black", font=font)
    buf = io.BytesIO()
    img.save(buf, fmt)
    return buf.getvalue()


GARDEN_PAGE1 = ("Garden rules\n\nThe garden behind the hall is open to residents from April to October. "
                "Every night porter keeps a torch.")
GARDEN_PAGE2 = ("Visitors leave by the side path. The porter must lock it at ten. "
                "The garden gate stays shut until six in the morning.")
GARDEN_QUESTION = "When does the night porter lock the garden gate?"


def garden_pdf() -> bytes:
    """A two-page PDF (issue 42), one section across the break: page 1 ends with a sentence that shares as many of
    :data:`GARDEN_QUESTION`'s words as any single sentence of page 2, whose sentences together answer it."""
    import pymupdf

    d = pymupdf.open()
    for top, text in ((440, GARDEN_PAGE1), (40, GARDEN_PAGE2)):
        p = d.new_page(width=420, height=600)
        p.insert_textbox(pymupdf.Rect(40, top, 380, 590), text, fontsize=11)
    return d.tobytes()
