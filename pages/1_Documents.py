"""Documents: upload PDF, Word, PowerPoint, Excel/CSV, HTML, EPUB, image, Markdown or text files, watch them index, see every document's status and what it holds (its overview), retry, delete (after asking).

The page calls the store (:class:`rag.store.store.Store`) and nothing else: it
extracts, chunks (strategy E), embeds and indexes. A bad file shows its reason
and nothing else is lost; the same bytes (or the same text) again say "already
indexed". Other bytes under a name already indexed wait for the user: replace
the current version (it leaves the index at once and is listed as a previous
version) or keep both (issue 16). The sidebar picks the collection.

Plain words first (issue 29): the table shows name, kind, pages, status and when it was added (human
dates); versions, sizes, chunk counts, the embedding model, OCR pages and ids sit under "Details". A
document's overview (its sections and a summary made of its own sentences) is shown when it is picked.
"""

import pandas as pd
import streamlit as st

from rag.answer.calibrated_gate import store_calibration
from rag.errors import RagError
from rag.store.writer import IngestStatus, OnConflict
from rag.types import DocStatus
from ui import overview, services, sidebar
from ui.access import require_access
from ui.format import md_escape
from ui.plain import STATUS, human_time, kind_label

st.set_page_config(page_title="Documents · Document QA", page_icon="📄", layout="wide")
services.init_state()
require_access()  # issue 26: a password first when served beyond this machine
MiB = services.MiB
STAGES = {"ocr": (0.0, 0.1), "extract": (0.0, 0.1), "chunk": (0.1, 0.2), "embed": (0.2, 0.95), "index": (0.95, 1.0)}

with st.sidebar:
    sidebar.collection_picker()
st.title("Documents")
limit_mb = services.upload_limit_mb()
try:
    store = services.store()
except RagError as e:
    st.error(md_escape(str(e)))
    st.stop()


def _progress_callback(bar, i: int, n: int, name: str):
    """A ``progress(stage, done, total)`` for the store that moves ``bar`` across file ``i`` of ``n``."""

    def cb(stage: str, done: int, total: int) -> None:
        lo, hi = STAGES.get(stage, (0.0, 1.0))
        frac = lo + (hi - lo) * (done / total if total else 1.0)
        unit = {"embed": " chunks", "ocr": " scanned pages read by OCR"}.get(stage, "")
        bar.progress(min(1.0, (i + frac) / n), text=f"{name}: {stage} {done}/{total}{unit}  (file {i + 1} of {n})")

    return cb


def _log_result(r) -> None:
    """One line per file in the session's ingest log (kept across reruns)."""
    name = r.name
    if r.status == IngestStatus.READY:
        # a notice to read (hidden text left out, pages read by OCR) is orange, never a green success (issue 29)
        extra = f"; to know: {'; '.join(r.warnings)}" if r.warnings else ""
        if r.replaced_id:
            extra += f"; replaced the version added {human_time(r.replaced_added_at)}"
        level = "warning" if r.warnings else "success"
        st.session_state.ingest_log.append((level, f"{name}: indexed, {r.chunk_count} chunk{'' if r.chunk_count == 1 else 's'}{extra}"))
    elif r.status == IngestStatus.DUPLICATE:
        other = r.existing_name and (r.existing_name != name or r.same_text)
        same = f" (same text as {r.existing_name})" if other else ""
        st.session_state.ingest_log.append(("info", f"{name}: already indexed{same}; nothing done"))
    elif r.status == IngestStatus.BUSY:
        st.session_state.ingest_log.append(("warning", f"{name}: being indexed by another process right now"))
    else:
        st.session_state.ingest_log.append(("error", f"{name}: failed: {r.reason}"))


def ingest_uploads(files) -> None:
    """Index the uploads this session has not handled yet, one progress bar across all of them."""
    new = [f for f in files if f.file_id not in st.session_state.ingested_ids]
    for f in new:
        st.session_state.ingested_ids.add(f.file_id)
    ingest_items([(f.file_id, f.name, f.size, f.getvalue) for f in new])


def ingest_items(items) -> None:
    """Index ``items`` (``(key, name, size in bytes, () -> bytes)``) with one progress bar and one index update.

    Opening another page or closing the tab stops this run (Streamlit); the file under way and those after it
    are then kept in the session (``unindexed``) and offered again on this page, never silently lost.
    """
    if not items:
        return
    st.session_state.ingest_log = []
    bar = st.progress(0.0, text=f"Indexing {len(items)} file(s)…")
    i = 0
    try:
        with store.batch():  # one index update for the whole upload, not one per file (issue 18)
            for i, (key, name, size, read) in enumerate(items):
                if size > limit_mb * MiB:
                    st.session_state.ingest_log.append(
                        ("error", f"{name}: refused: {size / MiB:.1f} MB is over the {limit_mb} MB limit"))
                    continue
                cb = _progress_callback(bar, i, len(items), name)
                data = read()
                # scanned pages: the bar moves page by page while OCR reads them (extraction's progress)
                r = store.ingest_bytes(data, name, progress=cb, on_conflict=OnConflict.ASK)
                if r.status == IngestStatus.EXISTS:  # other bytes under a name already indexed: the user decides below
                    st.session_state.pending_versions.append((key, name, data, r.existing_id))
                    continue
                _log_result(r)
            bar.progress(1.0, text="Updating the search indexes…")
    except BaseException:
        st.session_state.unindexed = [(key, name, size, read()) for key, name, size, read in items[i:]]
        raise
    if not store.is_empty:
        bar.progress(1.0, text="Calibrating the answer gate on these documents…")
        store_calibration(store)  # issue 15: once per batch of uploads, so the first question does not wait for it
    bar.progress(1.0, text="Done.")


def offer_unindexed() -> None:
    """Files whose indexing was stopped by leaving the page: say so, and index them again or forget them."""
    left = st.session_state.get("unindexed") or []
    if not left:
        return
    with st.container(border=True):
        st.warning(md_escape(f"{len(left)} file(s) were not indexed because the page was left while they were being "
                             f"indexed: {', '.join(name for _, name, _, _ in left)}."))
        a, b = st.columns(2)
        if a.button("Index them now", key="index-unindexed", type="primary"):
            st.session_state.unindexed = []
            ingest_items([(key, name, size, (lambda d=data: d)) for key, name, size, data in left])
            st.rerun()  # the warning above was drawn before the click: draw the page again without it
        if b.button("Forget them", key="forget-unindexed"):
            st.session_state.unindexed = []
            st.rerun()


def resolve_pending(i: int, policy: str | None) -> None:
    """Index pending upload ``i`` with ``policy`` (replace / keep both), or drop it (``None``)."""
    _, name, data, _ = st.session_state.pending_versions.pop(i)
    if policy is None:
        st.session_state.ingest_log = [("info", f"{name}: not added")]
        return
    st.session_state.ingest_log = []
    bar = st.progress(0.0, text=f"Indexing {name}…")
    cb = _progress_callback(bar, 0, 1, name)
    _log_result(store.ingest_bytes(data, name, progress=cb, on_conflict=policy))


def ask_pending() -> None:
    """For each upload under a name already indexed: which version is current, and replace / keep both / cancel."""
    for i, (fid, name, _, existing) in enumerate(st.session_state.pending_versions):
        cur = store.get_document(existing)
        when = f", added {human_time(cur.created_at)}" if cur else ""
        with st.container(border=True):
            st.warning(md_escape(f"{name} is already indexed (current version {existing[:8]}{when}) with other "
                                 "content. Replace it with the new file, or keep both as separate documents?"))
            a, b, c = st.columns(3)
            if a.button("Replace", key=f"replace-{fid}", type="primary",
                        help="The new file becomes the current version; the old one leaves the index now."):
                resolve_pending(i, OnConflict.REPLACE)
                st.rerun()
            if b.button("Keep both", key=f"keepboth-{fid}"):
                resolve_pending(i, OnConflict.KEEP_BOTH)
                st.rerun()
            if c.button("Cancel", key=f"cancel-{fid}"):
                resolve_pending(i, None)
                st.rerun()


#: File name endings the uploader offers (the type is then read from the bytes: rag.ingest.sniff).
UPLOAD_TYPES = ["pdf", "docx", "pptx", "xlsx", "csv", "tsv", "html", "htm", "epub", "png", "jpg", "jpeg", "tif",
                "tiff", "md", "markdown", "txt", "odt", "ods", "odp", "xps", "oxps", "fb2", "mobi", "cbz"]

def uploader():
    """The file uploader. No ``type=`` filter: Streamlit would check the names on the server and raise, before this
    page runs, for a name holding a NUL byte (issue 26: the user saw Streamlit's exception). The type is read from
    the bytes anyway (rag.ingest.sniff) and unsupported files are refused by name with a reason; names are checked
    by :func:`usable_uploads`."""
    return st.file_uploader(
        "Add PDF, Word, PowerPoint, Excel/CSV, OpenDocument, HTML, EPUB/FB2/MOBI, XPS, CBZ, PNG/JPEG/TIFF, Markdown or text files",
        accept_multiple_files=True, key="uploader", max_upload_size=limit_mb,
        help=f"Up to {limit_mb} MB per file (server.maxUploadSize). {', '.join(UPLOAD_TYPES)}.",
    )


def usable_uploads(files) -> list:
    """The uploads whose names can be stored; a name with a NUL byte or another control character is refused
    with a message (nothing of that file is read)."""
    ok = []
    for f in files or []:
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in f.name):
            if f.file_id not in st.session_state.ingested_ids:
                st.session_state.ingested_ids.add(f.file_id)
                st.session_state.setdefault("name_refusals", []).append(
                    f"{f.name.encode('unicode_escape').decode('ascii')}: refused: the file name holds a NUL byte or "
                    "another control character, which no file name may contain; rename the file and add it again")
            continue
        ok.append(f)
    return ok


files = usable_uploads(uploader())
st.caption(f"Files up to **{limit_mb} MB** each (server.maxUploadSize); bigger files are refused. "
           "Each file is extracted, cut into chunks and embedded locally; nothing leaves this machine.  \n"
           "Stay on this page until the bar says **Done.**: opening another page stops the indexing, and the files "
           "not yet indexed are offered again here when you come back; closing the tab loses them (the file "
           "under way is then marked failed, to retry).")
offer_unindexed()
if files:
    ingest_uploads(files)
ask_pending()

for level, msg in st.session_state.ingest_log:
    getattr(st, level)(md_escape(msg))
for msg in st.session_state.get("name_refusals", []):
    st.error(md_escape(msg))

# ---------------------------------------------------------------- the documents
docs = store.documents()
st.subheader(f"{len(docs)} document(s)")
if not docs:
    st.caption("Nothing indexed yet.")
    st.stop()

table = pd.DataFrame({
    "document": [d.label for d in docs],
    "kind": [kind_label(d.media_type) for d in docs],
    "pages": [str(d.pages) if d.pages else "–" for d in docs],
    "status": [STATUS.get(str(d.status), str(d.status)) for d in docs],  # plain words: no emoji font needed
    "added": [human_time(d.created_at) for d in docs],
})
st.dataframe(table, hide_index=True, width="stretch", key="documents_table")
with st.expander("Details", icon=":material/info:"):
    st.dataframe(pd.DataFrame({
        "document": [d.label for d in docs],
        "version": [d.versions + 1 for d in docs],
        "added (UTC)": [d.created_at for d in docs],
        "previous versions (added)": [", ".join(v.added_at for v in store.versions(d.id)) if d.versions else ""
                                      for d in docs],
        "reason": [d.reason or "" for d in docs],
        "chunks": [d.chunk_count for d in docs],
        "type": [d.media_type or "" for d in docs],
        "size (KB)": [round(d.size_bytes / 1024, 1) for d in docs],
        "embedding model": [f"{d.embed_model} ({d.embed_dim}-d)" for d in docs],
        "read by OCR (pages)": [", ".join(map(str, d.ocr_pages)) for d in docs],
        "warnings": ["; ".join(d.warnings) for d in docs],
        "id": [d.id[:12] for d in docs],
    }), hide_index=True, width="stretch", key="documents_details")

by_id = {d.id: d for d in docs}
left, mid, right = st.columns([0.6, 0.2, 0.2], vertical_alignment="bottom")
pick = left.selectbox("Document", list(by_id), key="doc_pick",
                      format_func=lambda i: f"{by_id[i].label} · {STATUS.get(str(by_id[i].status), by_id[i].status)}")
doc = by_id[pick]
if doc.status == DocStatus.FAILED:
    st.error(md_escape(f"{doc.label} could not be indexed: {doc.reason or 'no reason recorded'}"))
for w in doc.warnings:  # text coverage, OCR'd and unreadable pages, encodings (issue 13)
    st.warning(md_escape(f"{doc.label}: {w}"))
if mid.button("Retry", key="retry", disabled=doc.status != DocStatus.FAILED or not doc.has_file,
              help="Index a failed document again from its stored original.", width="stretch"):
    bar = st.progress(0.0, text=f"Retrying {doc.name}…")
    try:
        _log_result(store.retry(doc.id, progress=_progress_callback(bar, 0, 1, doc.name)))
    except RagError as e:
        st.session_state.ingest_log.append(("error", str(e)))
    st.rerun()
if right.button("Delete", key="delete", width="stretch", icon=":material/delete:",
                help="Remove the document, its chunks, vectors and stored file (you are asked first)."):
    st.session_state.confirm_delete = doc.id
if st.session_state.get("confirm_delete") == doc.id:  # Delete asks first (issue 29)
    with st.container(border=True):
        st.warning(md_escape(f"Delete {doc.label}? Its passages, its stored file and its overview are removed "
                             "from this collection; saved chats keep the quotes they showed."))
        yes, no = st.columns(2)
        if yes.button(f"Yes, delete {doc.label}", key="confirm-delete", type="primary", width="stretch"):
            st.session_state.confirm_delete = None
            try:
                store.delete(doc.id)  # its served copy goes with it (rag.served, issue 26)
                st.session_state.ingest_log = [("info", f"{doc.name}: deleted")]
            except RagError as e:
                st.session_state.ingest_log = [("error", str(e))]
            st.rerun()
        if no.button("Cancel", key="cancel-delete", width="stretch"):
            st.session_state.confirm_delete = None
            st.rerun()
elif st.session_state.get("confirm_delete") not in by_id:
    st.session_state.confirm_delete = None
failed = [d for d in docs if d.status == DocStatus.FAILED and d.has_file]
if failed and st.button(f"Retry all {len(failed)} failed", key="retry_all"):
    bar = st.progress(0.0, text="Retrying…")
    st.session_state.ingest_log = []
    for i, d in enumerate(failed):
        _log_result(store.retry(d.id, progress=_progress_callback(bar, i, len(failed), d.name)))
    st.rerun()
if doc.status == DocStatus.READY:
    st.subheader("What it holds")
    overview.show(store, doc, heading=False)
