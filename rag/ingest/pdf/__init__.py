"""The PDF branch of stage 1 (issue 36, item 5: one sub-package), through PyMuPDF.

* :mod:`rag.ingest.pdf.extract` - the reader: PDF bytes -> canonical text + page map + headings;
* :mod:`rag.ingest.pdf.pdf_page` (one page as read), :mod:`rag.ingest.pdf.pdf_text` (lines -> paragraphs ->
  canonical text), :mod:`rag.ingest.pdf.pdf_title` (sections and title);
* :mod:`rag.ingest.pdf.layout` (lines, reading order), :mod:`rag.ingest.pdf.hyphen` (line-end hyphens),
  :mod:`rag.ingest.pdf.spaces` (spaces the page shows no gap for), :mod:`rag.ingest.pdf.overprint` (text drawn
  twice: a shadow, a printed bold),
  :mod:`rag.ingest.pdf.tables` (ruled tables as Markdown), :mod:`rag.ingest.pdf.forms` (widgets, annotations),
  :mod:`rag.ingest.pdf.hidden` (text no reader sees, a scan's OCR layer, with :mod:`rag.ingest.pdf.boxindex`: a
  page's boxes filed by strips), :mod:`rag.ingest.pdf.quality` (blank /
  scanned / unreadable pages), :mod:`rag.ingest.pdf.furniture` (running headers and footers, slide decks);
* :mod:`rag.ingest.pdf.audit` - text coverage against PyMuPDF's own words.

The package itself imports nothing: the Strict OOXML reader (and through it the answer layer's citations) reads
:func:`rag.ingest.pdf.audit.words` without loading PyMuPDF or the OCR engine.
"""
