"""Stages 1-2 of the design: file bytes -> canonical text + locator map -> chunks.

* :mod:`rag.ingest.extract` - the entry point: sniff the media type from the bytes, pick the reader;
  text and Markdown are read there;
* :mod:`rag.ingest.textfile` - text files: encodings (BOMs, charset-normalizer), Markdown front matter
  and HTML comments;
* :mod:`rag.ingest.pdf` - the PDF reader (PyMuPDF), with its parts: :mod:`rag.ingest.layout` (lines,
  reading order), :mod:`rag.ingest.hyphen` (line-end hyphens), :mod:`rag.ingest.tables` (ruled tables
  as Markdown), :mod:`rag.ingest.forms` (widgets, annotations), :mod:`rag.ingest.quality` (blank /
  scanned / unreadable pages), :mod:`rag.ingest.ocr` (OCR engine, also for images) and
  :mod:`rag.ingest.audit` (text coverage against PyMuPDF's own words);
* :mod:`rag.ingest.chunk` - strategy E of the design (and A-F for evaluation).

Every reader returns a :class:`rag.types.Document`; every offset is a 0-based
code point into its ``canonical`` text.
"""

#: Bumped whenever the canonical text of the same bytes could change. 2: issue 13 (reading order,
#: hyphens, tables, forms, OCR, text encodings, front matter, comments). 4: issue 26 (hidden text left out in
#: DOCX, PPTX, XLSX, HTML, EPUB and Markdown; Unicode tag characters dropped).
EXTRACTOR_VERSION = "4"
