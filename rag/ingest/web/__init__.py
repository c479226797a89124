"""Web readers of stage 1 (issue 36, item 5): HTML pages, EPUB books and the raw HTML inside Markdown.

:mod:`~rag.ingest.web.html` (with :mod:`~rag.ingest.web.html_main`, :mod:`~rag.ingest.web.html_prepare` and :mod:`~rag.ingest.web.html_tables`), :mod:`~rag.ingest.web.epub`,
:mod:`~rag.ingest.web.css_hidden` (what a page's CSS hides), :mod:`~rag.ingest.web.markdown_hidden` (raw HTML in
Markdown under the same rules) and :mod:`~rag.ingest.web.markdown_render` (Markdown's inline markup rendered).
"""
