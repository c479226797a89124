"""What three new users' walks over public test files found (2026-12-07, sixth session: kreuzberg's and markitdown's
test documents, chardet's encodings, trafilatura's web pages, IDPF's and W3C's e-books), each on a small made-up
input of the same kind: text a reader sees kept, text in another encoding read as its characters, a formula read as
one, and a file of another kind refused with what it is."""

from __future__ import annotations

import io
import zipfile

import pytest
from lxml import etree

from rag.ingest.extract import extract_bytes
from rag.ingest.mathml import linear
from rag.ingest.textfile import split_front_matter
from rag.ingest.web.html_main import furniture_words

ARTICLE = ("The skate contest starts at noon on the floating ramp; warm-up is at eleven, and the final runs until "
           "six in the evening. ") * 8


def _html(body: str, head: str = "") -> bytes:
    return f"<!DOCTYPE html><html><head><title>T</title>{head}</head><body>{body}</body></html>".encode()


@pytest.mark.parametrize("names, words", [
    ("o-section--has-ads", []), ("TestReport__Section--Ads", []), ("entry-content no-share", []),
    ("content-with-sidebar-wrp", []), ("no-side-bar", []),
    ("l-sidebar-fixed l-segment", ["sidebar"]), ("share-buttons", ["share"]), ("skip-link", ["skip-link"]),
    ("cookie-banner", ["cookie", "banner"]),
])
def test_furniture_words_read_what_an_element_is_not_what_it_has(names, words):
    assert furniture_words(names) == words


def test_an_article_in_a_section_that_has_ads_is_read():
    """trafilatura's skateboardmsm.de page: both article sections carry ``o-section--has-ads``; the page was read as
    its tag list alone."""
    page = _html(f'<nav>Home | News</nav><section class="o-section o-section--has-ads"><h1>Contest</h1>'
                 f'<p>{ARTICLE}</p></section><div class="entry-content no-share"><p>Be there or be square!</p></div>')
    text = extract_bytes(page, "contest.html").canonical
    assert "warm-up is at eleven" in text and "Be there or be square!" in text and "Home | News" not in text


def test_a_page_hidden_until_its_script_runs_is_read():
    """politico's anti-flicker snippet, ``body { visibility: hidden !important }``, which a script removes: the page
    was refused as "no main text"."""
    page = _html(f"<main><h1>Retirement</h1><p>{ARTICLE}</p></main>",
                 "<style id='chartbeat-flicker-control-style'>body { visibility: hidden !important; }</style>")
    assert "warm-up is at eleven" in extract_bytes(page, "p.html").canonical
    page = _html(f"<main><h1>R</h1><p>{ARTICLE}</p></main>", "<style>html{visibility:hidden;opacity:0}</style>")
    assert "warm-up is at eleven" in extract_bytes(page, "p.html").canonical


def test_a_size_set_again_below_a_zero_font_size_is_seen():
    """minuto30's ``.g1-row-inner{font-size:0}`` around ``.g1-column{font-size:1rem}`` (a layout trick against the gaps
    between inline blocks): the columns were dropped as "font-size:0"; text directly in the zero-size row, and a
    zero-size element no descendant resets, are still hidden."""
    page = _html(f'<main><h1>News</h1><div class="row">junk between blocks<div class="col"><p>{ARTICLE}</p></div>'
                 f'</div><p class="tiny">Secret keyword stuffing here.</p></main>',
                 "<style>.row{font-size:0} .col{font-size:1rem} .tiny{font-size:0}</style>")
    doc = extract_bytes(page, "n.html")
    assert "warm-up is at eleven" in doc.canonical
    assert "junk between blocks" not in doc.canonical and "keyword stuffing" not in doc.canonical


def test_white_text_on_a_colour_the_css_names_or_computes_is_seen():
    """A header cell on ``Sienna``, a notice on ``var(--brand)``, on ``black``, ``red`` or ``hsl()``: all were left out
    as "white on white", and a table's values slid into its label column. White text with no background stays out."""
    page = _html('<main><h1>Notice board</h1>'
                 '<p class="a">Room 204 is the exam hall.</p><p style="background:red;color:white">Fire exit left.</p>'
                 '<p style="background:hsl(210, 50%, 20%);color:white">Parking permit code 7781.</p>'
                 '<table><tr><th style="background-color:Sienna;color:white">Headquarters</th><td>Redmond</td></tr>'
                 '</table><p class="b">Deadline: 15 March.</p><p style="color:#fff">hidden keywords</p></main>',
                 "<style>:root{--brand:#036} .a{background:var(--brand);color:#fff} .b{background:black;color:white}"
                 "</style>")
    text = extract_bytes(page, "b.html").canonical
    for seen in ("Room 204", "Fire exit", "7781", "| Headquarters | Redmond |", "15 March"):
        assert seen in text, seen
    assert "hidden keywords" not in text


def test_a_ruby_reading_is_not_glued_to_the_word_it_annotates():
    page = _html("<main><h1>T</h1><p><ruby>山路<rp>(</rp><rt>やまみち</rt><rp>)</rp></ruby>を登りながら、"
                 "こう考えた。</p></main>")
    assert "山路を登りながら" in extract_bytes(page, "k.html").canonical


def test_mathml_is_written_as_one_line_and_a_shared_placeholder_alttext_is_passed_over():
    """IDPF's linear-algebra sample gives 10,281 formulas the alttext "Alternative text not available"; a formula
    without one was its leaves joined by spaces ("π 2 6" for π²/6)."""
    m = ('<math><mi>x</mi><mo>=</mo><mfrac><mrow><mo>−</mo><mi>b</mi><mo>±</mo><msqrt><msup><mi>b</mi><mn>2</mn>'
         '</msup><mo>−</mo><mn>4</mn><mi>a</mi><mi>c</mi></msqrt></mrow><mrow><mn>2</mn><mi>a</mi></mrow></mfrac></math>')
    assert linear(etree.fromstring(m)) == "x = (−b ± √(b^2 − 4ac))/(2a)"
    assert linear(etree.fromstring("<math><mn>2.2</mn><mo>×</mo><msup><mn>10</mn><mrow><mo>−</mo><mn>4</mn>"
                                   "</mrow></msup></math>")) == "2.2 × 10^(−4)"
    alt = 'alttext="Alternative text not available"'
    body = "".join(f"<p>Entry {k}: <math {alt}><msub><mi>A</mi><mn>{k}</mn></msub><mo>=</mo><mn>0</mn></math>.</p>"
                   for k in range(1, 5))
    text = extract_bytes(_html(f"<main><h1>Matrices</h1>{body}<p>{ARTICLE}</p></main>"), "m.html").canonical
    assert "Alternative text" not in text and "A_3 = 0" in text
    one = _html(f'<main><h1>M</h1><p>Area: <math alttext="pi r squared"><mi>π</mi></math>.</p><p>{ARTICLE}</p></main>')
    assert "pi r squared" in extract_bytes(one, "one.html").canonical  # a real description stays


def test_front_matter_closed_by_yaml_document_end_and_unparseable_front_matter_keep_the_text():
    meta, rest, problem = split_front_matter("---\ntitle: Spec\nversion: 0.31\n...\n\n# Introduction\n\ntext\n\n---\n")
    assert meta == {"title": "Spec", "version": 0.31} and rest.startswith("\n# Introduction") and problem is None
    bad = "---\n: : not yaml\n  - x\n---\n# Body\n"
    meta, rest, problem = split_front_matter(bad)
    assert meta == {} and rest == bad and "read as text" in problem
    assert split_front_matter("---\n\nA thematic break, then text.\n")[1] == "---\n\nA thematic break, then text.\n"
    warning = "---\n\nWarning: the pump must be off before cleaning.\n\n...\n\nStep 1. Unplug the unit.\n"
    assert split_front_matter(warning) == ({}, warning, None)  # a review's probe: a break, not metadata
    doc = extract_bytes(("---\ntitle: Spec\n...\n\n# Introduction\n\nMarkdown is a plain text format.\n\n"
                         "```\n---\n```\n\n# After\n\nMore text.\n").encode(), "spec.md")
    assert "Markdown is a plain text format." in doc.canonical and "More text." in doc.canonical


def test_utf16_without_a_byte_order_mark_and_iso2022_are_read_as_their_characters():
    text = "DateTime,Bid,Ask\n07/19/2015 21:00:15.469,1.083,1.08332\n" * 20
    doc = extract_bytes(text.encode("utf-16-be"), "ticks.txt")
    assert doc.canonical.startswith("DateTime,Bid,Ask") and "\x00" not in doc.canonical
    jp = "コンソール アプリケーション : プロジェクトの概要。このファイルには、アプリケーションの説明があります。\n" * 5
    doc = extract_bytes(jp.encode("iso2022_jp"), "readme.txt")
    assert "コンソール アプリケーション" in doc.canonical and "\x1b" not in doc.canonical
    assert not [w for w in doc.warnings if "coverage" in w]


def test_a_csv_in_another_encoding_is_read_as_a_text_file_is():
    """markitdown's ``test_mskanji.csv`` (Shift-JIS) was read as Windows-1252: "–¼‘O" for 名前."""
    rows = "名前,年齢,住所\n" + "".join(f"佐藤太郎{k},{30 + k},東京都港区{k}丁目\n" for k in range(12))
    doc = extract_bytes(rows.encode("cp932"), "staff.csv")
    assert "| 名前 | 年齢 | 住所 |" in doc.canonical and "| 佐藤太郎3 | 33 | 東京都港区3丁目 |" in doc.canonical
    assert doc.media_type == "text/csv"
    # a review's probe: a short Windows-1252 CSV, which the detector guesses as mac_latin2 ("JŁrgen MŁller")
    doc = extract_bytes("Name;Stadt;Betrag\nJürgen Müller;München;12,50 €\n".encode("cp1252"), "a.csv")
    assert "| Jürgen Müller | München | 12,50 € |" in doc.canonical


def test_a_page_s_charset_label_is_read_as_browsers_read_it():
    """``charset=x-sjis`` (a WHATWG label of Shift_JIS) was read as Windows-1252; ``iso-8859-1`` pages hold
    Windows-1252 bytes ("…", "–"), which Latin-1 turned into control characters."""
    sjis = ("<html><head><meta http-equiv='Content-Type' content='text/html; charset=x-sjis'></head><body><main>"
            "<h1>相手がまともに読めない字</h1><p>このページに使われている漢字コードはＳＪＩＳです。" * 3 + "</p></main></body></html>")
    assert "相手がまともに読めない字" in extract_bytes(sjis.encode("cp932"), "s.html").canonical
    latin = ("<html><head><meta charset='iso-8859-1'></head><body><main><h1>Demut</h1><p>Idealen (\u2026), 10\u201320 "
             "Jahre. " + ARTICLE + "</p></main></body></html>")
    assert "Idealen (\u2026), 10\u201320 Jahre." in extract_bytes(latin.encode("cp1252"), "d.html").canonical
    for label in ("x-user-defined", "replacement", "iso-2022-kr", "no-such-charset"):  # labels Python cannot decode
        page = f"<html><head><meta charset='{label}'></head><body><main><h1>T</h1><p>{ARTICLE}</p></main></body></html>"
        assert "warm-up is at eleven" in extract_bytes(page.encode(), "p.html").canonical, label


def test_an_odt_holding_a_formula_object_is_read_with_its_formula():
    """kreuzberg's ``formula.odt`` (LibreOffice Math's E = mc²) was refused whole as "damaged ODT (TypeError: No body
    found in 'Object 1/content.xml')"."""
    from odfdo import Document, Paragraph

    doc = Document("text")
    doc.body.append(Paragraph("Einstein showed in 1905 that mass and energy are equivalent, as the formula states."))
    doc.body.append(Paragraph("FORMULA"))
    bio = io.BytesIO()
    doc.save(bio)
    frame = ('<draw:frame draw:name="Object1" text:anchor-type="as-char"><draw:object xlink:href="./Object 1" '
             'xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame>')
    mathml = ('<?xml version="1.0" encoding="UTF-8"?><math xmlns="http://www.w3.org/1998/Math/MathML"><semantics>'
              '<mrow><mi>E</mi><mo>=</mo><mrow><mi>m</mi><mo>⋅</mo><msup><mi>c</mi><mn>2</mn></msup></mrow></mrow>'
              '<annotation encoding="StarMath 5.0">E = m cdot c^2</annotation></semantics></math>')
    out = io.BytesIO()
    with zipfile.ZipFile(bio) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            body = src.read(item.filename)
            if item.filename == "content.xml":
                body = body.replace(b">FORMULA<", f">{frame}<".encode())
            if item.filename == "META-INF/manifest.xml":
                body = body.replace(b"</manifest:manifest>", (
                    b'<manifest:file-entry manifest:media-type="text/xml" manifest:full-path="Object 1/content.xml"/>'
                    b'<manifest:file-entry manifest:media-type="application/vnd.oasis.opendocument.formula" '
                    b'manifest:full-path="Object 1/"/></manifest:manifest>'))
            dst.writestr(item, body)
        dst.writestr("Object 1/content.xml", mathml)
    text = extract_bytes(out.getvalue(), "physics.odt").canonical
    assert "mass and energy are equivalent" in text and "E = m ⋅ c^2" in text


def test_a_word_equation_is_written_as_one_line():
    """markitdown's equations.docx: "sinθ=mλa=(1)550×10-6 mm2.5 mm" was its leaves joined, "10-6" reading as ten minus
    six; kreuzberg's "A=πr2"."""
    import docx
    from docx.oxml import parse_xml

    m = 'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"'
    omml = (f'<m:oMath {m}><m:r><m:t>A=π</m:t></m:r><m:sSup><m:e><m:r><m:t>r</m:t></m:r></m:e><m:sup><m:r><m:t>2</m:t>'
            '</m:r></m:sup></m:sSup><m:r><m:t>, x=</m:t></m:r><m:f><m:num><m:r><m:t>1</m:t></m:r></m:num><m:den><m:r>'
            '<m:t>2.5 mm</m:t></m:r></m:den></m:f><m:r><m:t>=2.2×</m:t></m:r><m:sSup><m:e><m:r><m:t>10</m:t></m:r>'
            '</m:e><m:sup><m:r><m:t>-4</m:t></m:r></m:sup></m:sSup></m:oMath>')
    d = docx.Document()
    p = d.add_paragraph("The area of the disc is ")
    p._p.append(parse_xml(omml))
    d.add_paragraph("Nothing else on this page is a formula, and the rest is prose a reader reads as usual.")
    bio = io.BytesIO()
    d.save(bio)
    doc = extract_bytes(bio.getvalue(), "eq.docx")
    assert "The area of the disc is A=πr^2, x=1/(2.5 mm)=2.2×10^(-4)" in doc.canonical
    assert doc.coverage == 1.0


def test_a_slide_table_label_merged_down_is_repeated_in_its_rows():
    """kreuzberg's powerpoint_sample.pptx: "R3" merged over two rows left the second "|  |  | True |" (DOCX, ODT and
    HTML tables repeat such a label)."""
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Results"
    table = slide.shapes.add_table(4, 3, Inches(1), Inches(2), Inches(6), Inches(2)).table
    for r, row in enumerate([["Run", "Metric", "Value"], ["R3", "accuracy", "0.91"], ["", "recall", "0.87"],
                             ["R4", "accuracy", "0.88"]]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    table.cell(1, 0).merge(table.cell(2, 0))
    bio = io.BytesIO()
    prs.save(bio)
    text = extract_bytes(bio.getvalue(), "results.pptx").canonical
    assert "| R3 | accuracy | 0.91 |" in text and "| R3 | recall | 0.87 |" in text and "| R4 | accuracy | 0.88 |" in text


@pytest.mark.parametrize("markup", [
    '<div style="visibility:hidden">A <span style="visibility:inherit">SECRET</span></div>',
    '<div style="visibility:hidden">A <span style="visibility:unset">SECRET</span></div>',
    '<div style="color:#fff">A <span style="color:currentColor">SECRET</span></div>',
    '<div style="font-size:0">A <span style="font-size:calc(1em)">SECRET</span></div>',
    '<div style="font-size:0">A <span style="font-size:larger">SECRET</span></div>',
    '<div style="visibility:hidden">A <!-- x -->SECRET <span style="visibility:visible">shown</span></div>',
    '<p style="color:#fff;background:var(--undefined)">SECRET</p>',
    '<p style="color:#fff;background:mintcream">SECRET</p>',
    '<p style="color:#fff;background:hwb(0 100% 0%)">SECRET</p>',
    '<p style="color:#fff;background:oklch(100% 0 0)">SECRET</p>',
])
def test_hidden_text_stays_hidden_under_the_new_css_rules(markup):
    """A review's probes (2026-12-07) of the rules above: a reset to a value that is no value (inherit, unset,
    currentColor, calc(), larger), a comment's tail, white on a white the CSS names in another way."""
    page = _html(f"<main><h1>G</h1><p>{ARTICLE}</p>{markup}<p>{ARTICLE}</p></main>")
    text = extract_bytes(page, "p.html").canonical
    assert "SECRET" not in text and ("shown" in text or "shown" not in markup)


def test_furniture_named_only_in_a_modifier_goes_when_it_holds_little_text():
    """A review's probes: "l-region--sidebar-first", "block--newsletter", "region--footer" were kept once BEM
    modifiers were not read; an article section named "--Ads" that holds the article stays."""
    page = _html(f'<main><h1>G</h1><div class="l-region l-region--sidebar-first"><a href="/a">Archive</a> '
                 f'<a href="/b">Tags</a></div><div class="block block--newsletter">Sign up for our letter</div>'
                 f'<section class="TestReport__Section TestReport__Section--Ads"><p>{ARTICLE}</p></section>'
                 f'<div class="region--footer">Imprint and privacy</div></main>')
    text = extract_bytes(page, "p.html").canonical
    assert "warm-up is at eleven" in text
    assert "Archive" not in text and "Sign up" not in text and "Imprint" not in text


def test_a_binomial_and_a_cube_root_are_not_written_as_a_division_or_a_product():
    m = 'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"'
    from rag.ingest.office.omml import linear as omml

    binom = etree.fromstring(f'<m:oMath {m}><m:d><m:e><m:f><m:fPr><m:type m:val="noBar"/></m:fPr><m:num><m:r>'
                             '<m:t>10</m:t></m:r></m:num><m:den><m:r><m:t>3</m:t></m:r></m:den></m:f></m:e></m:d>'
                             '<m:r><m:t>=120</m:t></m:r></m:oMath>')
    assert omml(binom) == "(10 3)=120"
    root = etree.fromstring(f'<m:oMath {m}><m:rad><m:deg><m:r><m:t>3</m:t></m:r></m:deg><m:e><m:r><m:t>8</m:t></m:r>'
                            '</m:e></m:rad></m:oMath>')
    assert omml(root) == "√[3](8)"
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    tracked = etree.fromstring(f'<m:oMath {m} {w}><m:r><m:t>E=m</m:t></m:r><w:ins><m:r><m:t>c</m:t></m:r></w:ins>'
                               '</m:oMath>')
    assert omml(tracked) == "E=mc"
    assert linear(etree.fromstring("<math><mroot><mn>8</mn><mn>3</mn></mroot></math>")) == "√[3](8)"
    assert linear(etree.fromstring("<math><mn>1</mn><mtext> if </mtext><mi>x</mi><mo>&gt;</mo><mn>0</mn></math>")) \
        == "1 if x > 0"


def test_svg_text_an_epub_hides_is_not_read():
    from rag.ingest.web.epub import svg_text_as_paragraphs

    svg = etree.fromstring('<div><svg xmlns="http://www.w3.org/2000/svg"><text>Shown line.</text>'
                           '<text visibility="hidden">SECRET one</text><text fill="none">SECRET two</text>'
                           '<defs><text>SECRET three</text></defs><g opacity="0"><text>SECRET four</text></g>'
                           '<text style="display: none">SECRET five</text></svg></div>')
    assert svg_text_as_paragraphs(svg) == 1
    assert "".join(svg.itertext()) == "Shown line."


def test_a_slide_s_auto_numbered_list_keeps_its_numbers():
    """kreuzberg's powerpoint_sample.pptx and OWASP's webinar deck in ``../shared``: a list PowerPoint numbers
    (``a:buAutoNum``) read as bare lines, so "the fifth control" was in no passage. Another paragraph ends the count;
    ``startAt`` and the number schemes are honoured."""
    from pptx import Presentation
    from pptx.oxml.ns import qn
    from pptx.util import Inches

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    frame = slide.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(4)).text_frame
    items = [("Define security requirements", "arabicPeriod", None), ("Encode and escape data", "arabicPeriod", None),
             ("A note between the lists.", None, None), ("Validate all inputs", "alphaLcParenR", "3"),
             ("Protect data everywhere", "alphaLcParenR", None), ("Handle all errors", "romanUcPeriod", "4")]
    for k, (text, kind, start) in enumerate(items):
        para = frame.paragraphs[0] if k == 0 else frame.add_paragraph()
        para.text = text
        if kind:
            auto = para._p.get_or_add_pPr().makeelement(qn("a:buAutoNum"), {"type": kind})
            if start:
                auto.set("startAt", start)
            para._p.get_or_add_pPr().append(auto)
    bio = io.BytesIO()
    prs.save(bio)
    text = extract_bytes(bio.getvalue(), "controls.pptx").canonical
    for line in ("1. Define security requirements", "2. Encode and escape data", "A note between the lists.",
                 "c) Validate all inputs", "d) Protect data everywhere", "IV. Handle all errors"):
        assert f"\n{line}" in f"\n{text}", line
