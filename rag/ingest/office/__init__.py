"""Office readers of stage 1 (issue 36, item 5): Word, PowerPoint, Excel and OpenDocument files -> canonical text.

:mod:`~rag.ingest.office.docx` (with :mod:`~rag.ingest.office.wordml`, :mod:`~rag.ingest.office.omml` (equations) and
:mod:`~rag.ingest.office.symbol_fonts`),
:mod:`~rag.ingest.office.pptx`,
:mod:`~rag.ingest.office.sheets` (XLSX, CSV; with :mod:`~rag.ingest.office.xlsx_package`: a package mended, comments counted; :mod:`~rag.ingest.office.numfmt`: cells as Excel shows them),
:mod:`~rag.ingest.office.xls` (Excel 97-2003, xlrd), :mod:`~rag.ingest.office.odf` (with
:mod:`~rag.ingest.office.odf_inline`, :mod:`~rag.ingest.office.odf_tables`, :mod:`~rag.ingest.office.odf_objects`,
:mod:`~rag.ingest.office.odf_numbers`, :mod:`~rag.ingest.office.odf_slides` and
:mod:`~rag.ingest.office.odf_hidden`), :mod:`~rag.ingest.office.ooxml`
(Strict OOXML read as Transitional), :mod:`~rag.ingest.office.office_hidden` (text no reader sees) and
:mod:`~rag.ingest.office.coverage_ooxml` (the independent coverage audit of DOCX, PPTX and XLSX).
"""
