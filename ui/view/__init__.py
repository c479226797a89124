"""The viewer's rendering (design stage 9, issue 17): a citation shown at its place, as pure helpers (no Streamlit).

* :mod:`ui.view.pdf` - a PDF citation: the quote located on its page, a page rendered with the quote
  highlighted, the PDF.js window (``streamlit-pdf-viewer``), the link to the stored original's served copy
  (:mod:`rag.served`, ``/app/static/<key>/<token>.pdf#page=N``);
* :mod:`ui.view.text` - the other formats: Markdown and text, DOCX, slides, sheets and images as HTML with the
  passage highlighted.

:mod:`ui.viewer` draws them with Streamlit (the Source page and the chat's preview dialog). Until issue 23 these
lived in ``rag/answer/`` (``preview.py``, ``text_view.py``): the answer layer now holds stages 7-9 only.
"""
