"""Source: one stored document, with a cited range highlighted and scrolled into view.

Where a ``[n]`` of a text or Markdown document leads: ``/Source?doc=<id>&start=S&end=E``
(0-based code points into the canonical text, end exclusive; design stage 9's
``#char=S,E``). A PDF's ``[n]`` opens the browser's viewer at
``/app/static/<id>.pdf#page=N`` instead; picked here, a PDF shows a link to that
viewer (at ``?page=N``, default 1) and its extracted canonical text. The rendered
page with the quote highlighted is the chat's Preview dialog (:func:`ui.chat.show_source`).
"""

import streamlit as st

from rag.answer.preview import static_url
from rag.errors import RagError
from rag.types import DocStatus
from ui import chat, services
from ui.format import md_escape

st.set_page_config(page_title="Source · Document QA", page_icon="📄", layout="wide")
services.init_state()
try:
    store = services.store()
except RagError as e:
    st.error(md_escape(str(e)))
    st.stop()

params = st.query_params
ready = {d.id: d for d in store.documents() if d.status == DocStatus.READY}
if not ready:
    st.title("Source")
    st.info("No document is indexed yet: add some on the Documents page.")
    st.stop()


def _int(name: str) -> int | None:
    try:
        return int(params[name]) if name in params else None
    except ValueError:
        return None


wanted = params.get("doc")
ids = list(ready)
doc_id = st.selectbox("Document", ids, index=ids.index(wanted) if wanted in ready else 0, key="source_doc",
                      format_func=lambda i: ready[i].label)
doc = ready[doc_id]
st.title(doc.label)
start, end, n = _int("start"), _int("end"), _int("n")
canonical = store.canonical_text(doc_id)
cited = doc_id == wanted and start is not None and end is not None and 0 <= start <= end <= len(canonical)
if wanted and doc_id == wanted and (start is not None or end is not None) and not cited:
    st.error(f"The cited range {start}:{end} is outside this document (0:{len(canonical)}).")
if doc.media_type == "application/pdf":
    services.publish_pdf(doc_id)
    page = _int("page") or 1
    st.markdown(f"[Open the PDF in the browser's viewer at page {page}]({static_url(doc_id, page)})")
if cited:
    label = f"\\[{n}\\] " if n else ""
    st.caption(f"{label}characters {start}–{end} highlighted ({end - start} characters)")
    chat.render_text_source(canonical, start, end, doc.name, height=700)
else:
    st.caption(f"{len(canonical):,} characters of canonical text")
    chat.render_text_source(canonical, 0, 0, doc.name, height=700)
