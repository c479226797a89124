"""Source: one stored document opened at a cited place, in the app, for every format (issue 17).

Where a ``[n]`` leads: ``/Source?doc=<id>&chunk=<chunk id>&start=S&end=E&n=N`` (0-based code points into the
canonical text, end exclusive; design stage 9's ``#char=S,E``), plus ``&page=P`` (1-based) for a PDF. The view
is :func:`ui.viewer.show`, the same as the chat's preview dialog: the PDF.js viewer at the page with the quote
outlined, the slide, the sheet's rows, the picture's region, or the rendered text with the passage
highlighted. Without a cited range the document opens at its start; a cited document no longer indexed
(deleted, or replaced by a newer version) is said so above the document picker.
"""

import streamlit as st

from rag.answer.cite import locator_label
from rag.errors import RagError
from rag.types import DocStatus
from ui import jobs, services, viewer
from ui.access import require_access
from ui.format import md_escape
from ui.plain import kind_label

st.set_page_config(page_title="Source · Document QA", page_icon="📄", layout="wide")
services.init_state()
require_access()  # issue 26: a password first when served beyond this machine
store = services.store_or_stop()
with st.sidebar:
    jobs.progress_panel(store)

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


def _target(doc_id: str) -> viewer.Target:
    """What the URL asks for: the cited chunk (its locator and quote) when given, else the range, else the start."""
    doc = ready[doc_id]
    start, end, n, page, chunk_id = _int("start"), _int("end"), _int("n") or 0, _int("page"), _int("chunk")
    if doc_id == wanted and chunk_id is not None:
        try:
            row = store.chunk(chunk_id)
        except RagError:
            row = None
        if row is not None and row.document_id == doc_id:
            return viewer.Target.from_chunk(row, n, page, locator_label(row))
    if doc_id == wanted and start is not None and end is not None:
        text = store.canonical_text(doc_id)
        quote = text[start:end] if 0 <= start <= end <= len(text) else ""  # a PDF outlines it on its page
        where = f"{doc.label}, p. {page}" if page is not None and doc.pages else f"characters {start}–{end}"
        return viewer.Target(doc_id, doc.media_type or "", start, end, quote, page=page, index=n, label=where)
    return viewer.Target(doc_id, doc.media_type or "", 0, 0, page=1)


wanted = params.get("doc")
if wanted and wanted not in ready:  # an old chat's [n] after its document was deleted or replaced (tryout 2026-11-30)
    st.warning(md_escape(f"The cited document ({wanted[:12]}) is no longer indexed: it was deleted or replaced by a "
                         "newer version. Pick a document below; ask again to cite the current one."))
ids = list(ready)
doc_id = st.selectbox("Document", ids, index=ids.index(wanted) if wanted in ready else 0, key="source_doc",
                      format_func=lambda i: ready[i].label)
st.title(ready[doc_id].label)
target = _target(doc_id)
if target.end == 0 and target.start == 0:
    st.caption(f"{kind_label(ready[doc_id].media_type)} · {ready[doc_id].chunk_count} passages indexed")
viewer.show(target, height=760, key="source")
