"""Stages 1-2 of the design: file bytes -> canonical text + locator map -> chunks.

* :mod:`rag.ingest.extract` - the entry point: sniff the media type from the bytes, pick the reader;
  text and Markdown are read there;
* :mod:`rag.ingest.pdf` - the PDF reader (PyMuPDF);
* :mod:`rag.ingest.chunk` - strategy E of the design (and A-F for evaluation).

Every reader returns a :class:`rag.types.Document`; every offset is a 0-based
code point into its ``canonical`` text.
"""

#: Bumped whenever the canonical text of the same bytes could change.
EXTRACTOR_VERSION = "2"
