"""Stages 1-2 of the design: file bytes -> canonical text + locator map -> chunks.

* :mod:`rag.ingest.extract` - the entry point: sniff the media type from the bytes (:mod:`rag.ingest.sniff`),
  bound the work (:mod:`rag.ingest.limits`), pick the reader; text and Markdown are read there;
  :mod:`rag.ingest.contained` runs it in a child process with memory and time limits (issue 26), together with
  the text stages of :mod:`rag.ingest.read` (roles, chunks, sentence units), each under its time budget
  (:mod:`rag.ingest.budget`, issue 35);
* :mod:`rag.ingest.textfile` - text files: encodings (BOMs; :mod:`rag.ingest.charset`: chardet's guess, mojibake passed over), Markdown front matter (and
  :mod:`rag.ingest.web.markdown_hidden`: raw HTML under the hidden-text rules; :mod:`rag.ingest.web.markdown_render`:
  the inline markup rendered) and HTML comments;
* :mod:`rag.ingest.pdf` - the PDF reader (PyMuPDF), with its parts: :mod:`rag.ingest.pdf.pdf_page` (one page as
  read), :mod:`rag.ingest.pdf.pdf_text` (lines -> paragraphs -> canonical text), :mod:`rag.ingest.pdf.pdf_title`
  (sections and title), :mod:`rag.ingest.pdf.layout` (lines, reading order), :mod:`rag.ingest.pdf.hyphen` (line-end
  hyphens), :mod:`rag.ingest.pdf.tables` (ruled tables as Markdown), :mod:`rag.ingest.pdf.forms` (widgets,
  annotations), :mod:`rag.ingest.pdf.hidden` (text no reader sees, a scan's OCR layer), :mod:`rag.ingest.pdf.quality`
  (blank / scanned / unreadable pages), :mod:`rag.ingest.ocr` (OCR engine, also for images) and
  :mod:`rag.ingest.pdf.audit` (text coverage against PyMuPDF's own words);
* :mod:`rag.ingest.coverage` - the independent coverage audit of the other formats (issue 37), one simple
  auditor per format (:mod:`rag.ingest.office.coverage_ooxml`: DOCX, PPTX, XLSX from the raw XML;
  :mod:`rag.ingest.coverage_other`: ODT, ODS, ODP and EPUB, with the standard library), whose records (what an
  auditor saw, its bounds) are in :mod:`rag.ingest.seen`;
* the other formats, all writing through :mod:`rag.ingest.canonical`: :mod:`rag.ingest.office.docx` (with
  :mod:`rag.ingest.office.wordml`: WordprocessingML python-docx does not read),
  :mod:`rag.ingest.office.pptx`, :mod:`rag.ingest.office.sheets` (XLSX, CSV; cells as Excel shows them by :mod:`rag.ingest.office.numfmt`), :mod:`rag.ingest.web.html`, :mod:`rag.ingest.web.epub`,
  :mod:`rag.ingest.image` (OCR), :mod:`rag.ingest.office.odf` (OpenDocument, with :mod:`rag.ingest.office.odf_numbers` for
  outline numbers and list labels and :mod:`rag.ingest.office.odf_slides` for ODP), :mod:`rag.ingest.office.ooxml` (Strict OOXML);
  :mod:`rag.ingest.web.html_prepare` (note markers, formulas, heading decorations) before the HTML layout, with
  :mod:`rag.ingest.mathml` (MathML written as one line, also for OpenDocument's formula objects);
  hidden text left out by :mod:`rag.ingest.office.office_hidden` and :mod:`rag.ingest.web.css_hidden`;
* :mod:`rag.ingest.pdf.furniture` (running headers and footers), :mod:`rag.ingest.roles` (reference lists,
  tables of contents, navigation) and :mod:`rag.ingest.unit_roles` (each line and unit of a chunk: contents
  entries, page counters, title lines): what each stretch of a document is to a reader;
* :mod:`rag.ingest.chunk` - strategy E of the design (and A-F for evaluation), over the headings' sections of
  :mod:`rag.ingest.sections`; :mod:`rag.ingest.locate` - each
  chunk's locator and role, read from its document.

Every reader returns a :class:`rag.types.Document`; every offset is a 0-based
code point into its ``canonical`` text. Ingest imports only the ground floor (``tests/test_layers.py``).
"""

#: Bumped whenever the canonical text of the same bytes could change. 2: issue 13 (reading order,
#: hyphens, tables, forms, OCR, text encodings, front matter, comments). 4: issue 26 (hidden text left out in
#: DOCX, PPTX, XLSX, HTML, EPUB and Markdown; Unicode tag characters dropped). 5: issue 27 (a PDF's bold title
#: lines split from the byline under them). 6: issue 37 (Office content controls, numbering, notes, headers and
#: footers, SmartArt, line breaks, builds, sheet captions). 7: issue 37 (ODF numbering, notes, headers, indexes,
#: builds; HTML captions, note markers, formulas, heading decorations; EPUB media over the ratio limit). 8: ODT
#: table cells whose text sits in lists (issue 37). 9: raw HTML a Markdown renderer hides left out (issue 37).
#: 10: a DOCX heading paragraph ends at an empty line, the byline after it is body text (issue 37). 11: Markdown's
#: inline markup rendered (links as their text, no emphasis marks: issue 37). 12: an HTML page whose text is all
#: inside <noscript> is read there (it was refused). 13: a Markdown file's HTML blocks are the text they show, read by
#: the HTML reader's writer, and an element a block leaves open and hides takes the Markdown up to its closing tag.
#: 14: the text an ODF image holds (drawn on it: a slide's "Shazam!") is read (a new user's walk, 2026-12-07).
#: 15: a PDF's spacing accents (a TeX font's "Mazi`eres") composed with their letter ("Mazi\u00e8res").
#: 16: ODF text a style hides (``text:display="none"``, under 2 pt) is left out (a new user's walk, 2026-12-07);
#: Excel 97-2003 workbooks (.xls) are read; an EPUB document the contents point into at two or more fragments is
#: cut into those chapters (its locators named chapter 1 for all of them). 17: a PDF paper's byline is no heading,
#: a long title's last line in a block of its own joins it, and numbered headings in small capitals are headings;
#: a page opening with a WHATWG HTML tag (``<script``) is HTML, its charset sought in its first 64 KiB; ODT paragraph
#: numbers skip empty paragraphs; a spreadsheet row of merged titles over side-by-side tables is a caption; an HTML
#: table cell keeps the columns its colspan/rowspan covers. 18: DOCX tables on their grid (vertically merged labels
#: repeated, spans keep columns, a table holding tables lays out the page); an HTML rowspan label repeated; EPUB
#: chapters cut where the contents point, nested sections and marked headings too; Markdown footnotes kept; chart
#: data labels read; PDF text "painted over" by a fill the rendered page does not show kept, en-dash numbers, URLs
#: and Chinese/Japanese lines joined without a space, outline titles matched across quotes and number words, a
#: check box named by the line it sits in, a chapter's running heads dropped (two new users' walks, 2026-12-07).
#: 19: an ODT table's labels merged down repeated in their rows and a table inside a cell read in that cell;
#: spreadsheet tables side by side read as tables of their own; Word's symbol-font ticks, boxes and Greek letters;
#: ODT cross-references show their text, a header or footer keeps its words beside a page number; TeX "ff"; a PDF
#: form's box before its option named by it; an HTML layout table read as the regions it holds; ODF embedded charts
#: and sheets read; OCR'd columns read column by column; a PDF title repeated over every page kept once.
#: 20: an HTML wrapper named like a sidebar that holds the article kept; a table in an HTML cell read as its rows; ODP
#: tables; DOCX nested list items indented; a row of years under merged labels a header row; PDF spaces inside a
#: ligature's box dropped ("fi elds"), text drawn twice (a shadow, a printed bold) read once, a decorative grid
#: behind prose no table, a web address not glued to the next line's label (two new users' walks, 2026-12-07).
#: 21: web furniture read by what an element is, not what it has ("has-ads"); an anti-flicker body, a size set again
#: under font-size 0, white on a named colour seen; ruby readings out; MathML as one line; ODF formulas; front matter
#: closed by "..."; UTF-16 without a BOM, ISO-2022, CSV encodings, WHATWG charset labels (the sixth session's walks).
#: 22: legacy encodings guessed by chardet 7 with mojibake passed over (rag/ingest/charset.py), a Windows-1251 CSV
#: read as Cyrillic (the seventh session). 23: web articles inside an ASP.NET form, an advert-named wrapper or an
#: aside read, comment <article>s outweigh no story, the byline and date above the main content read; PDF soft hyphens
#: drawn as hyphens kept, /ActualText spaces kept, a missing page no longer refuses the file, a choice field's option
#: text; Word for the web DOCX, Word's emoji, 3-D charts, chart sheets, Excel's rounding, a percent sign in place;
#: unsure languages in Latin letters English (the eighth session's walks).
EXTRACTOR_VERSION = "23"
