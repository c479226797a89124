"""Documents: upload PDF, Word, PowerPoint, Excel/CSV, HTML, EPUB, image, Markdown or text files, follow their
indexing, see every document's status, retry, cancel, delete.

An upload is accepted at once (issue 25): its bytes and a job are kept in the store
(:meth:`rag.store.store.Store.enqueue_bytes`) and the store's worker, a separate process started for the
user (:mod:`ui.jobs`), extracts, chunks, embeds and indexes it. Leaving the page, closing the tab or
restarting the app loses nothing; the sidebar's "Indexing" box on every page shows the progress. A bad
file shows its reason and whether a retry can help, and nothing else is lost; the same bytes (or the same
text) again say "already indexed". Other bytes under a name already indexed wait for the user: replace
the current version (it leaves the index once the new one is ready and is listed as a previous version)
or keep both (issue 16). Deleting a document asks first. The sidebar picks the collection.

Plain words first (issue 29): the table shows name, kind, pages, status and when it was added (human
dates); versions, ISO times, reasons, sizes, chunk counts, the embedding model, OCR pages and ids sit under
"Details". A file indexed with a notice (hidden text left out, pages read by OCR) is orange, not a green
success. The picked document's overview (its sections and a summary made of its own sentences,
:mod:`ui.overview`) is shown under "What it holds".
"""

import pandas as pd
import streamlit as st

from rag.errors import RagError
from rag.store.jobs import result_of
from rag.store.results import IngestStatus, OnConflict
from rag.types import DocStatus
from ui import jobs, overview, services, sidebar
from ui.access import require_access
from ui.format import md_escape
from ui.plain import STATUS, about, human_time, kind_label, length_label, named

st.set_page_config(page_title="Documents · Document QA", page_icon="📄", layout="wide")
services.init_state()
require_access()  # issue 26: a password first when served beyond this machine
MiB = services.MiB

with st.sidebar:
    sidebar.collection_picker()
st.title("Documents")
limit_mb = services.upload_limit_mb()
store = services.store_or_stop()


def _log_result(r) -> None:
    """One line per file in the session's log (kept across reruns): "queued for indexing", then its outcome in
    that line's place (a newcomer saw each file both queued and indexed, five blue boxes above five results,
    2026-12-02)."""
    name = r.name
    log = st.session_state.ingest_log
    if r.status == IngestStatus.QUEUED:
        log.append(("info", f"{name}: queued for indexing"))
        st.session_state.my_jobs[r.job_id] = name
        return
    if r.status == IngestStatus.READY:
        # a notice to read (hidden text left out, pages read by OCR) is orange, never a green success (issue 29)
        extra = f"; to know: {'; '.join(about(name, w) for w in r.warnings)}" if r.warnings else ""
        if r.replaced_id:
            extra += f"; replaced the version added {human_time(r.replaced_added_at)}"
        level = "warning" if r.warnings else "success"
        line = (level, f"{name}: indexed, {r.chunk_count} passage{'' if r.chunk_count == 1 else 's'}{extra}")
    elif r.status == IngestStatus.CANCELLED:
        line = ("info", f"{name}: cancelled")
    elif r.status == IngestStatus.DUPLICATE:
        other = r.existing_name and (r.existing_name != name or r.same_text)
        same = f" (same text as {r.existing_name})" if other else ""
        line = ("info", f"{name}: already indexed{same}; nothing done")
    else:
        hint = "" if r.retryable is None else " (a retry may help)" if r.retryable else " (a retry cannot help)"
        line = ("error", f"{name}: failed: {r.reason}{hint}")
    queued = ("info", f"{name}: queued for indexing")
    if queued in log:
        log[log.index(queued)] = line
    else:
        log.append(line)


def report_finished() -> None:
    """Say how each file this session queued ended (indexed, already there, failed, cancelled), once."""
    for job_id in list(st.session_state.my_jobs):
        job = store.jobs.get(job_id)
        if job is None or job.active:
            continue
        del st.session_state.my_jobs[job_id]
        _log_result(result_of(job))


def accept_uploads(files) -> None:
    """Keep the uploads this session has not handled yet and queue them (instant: the worker indexes them)."""
    new = [f for f in files if f.file_id not in st.session_state.ingested_ids]
    if not new:
        return
    st.session_state.ingest_log = []
    for f in new:
        st.session_state.ingested_ids.add(f.file_id)
        if f.size > limit_mb * MiB:
            st.session_state.ingest_log.append(
                ("error", f"{f.name}: refused: {f.size / MiB:.1f} MB is over the {limit_mb} MB limit"))
            continue
        data = f.getvalue()
        r = store.enqueue_bytes(data, f.name, on_conflict=OnConflict.ASK)
        if r.status == IngestStatus.EXISTS:  # other bytes under a name already indexed: the user decides below
            st.session_state.pending_versions.append((f.file_id, f.name, data, r.existing_id))
            continue
        _log_result(r)
    jobs.ensure_worker(store.path)


def resolve_pending(i: int, policy: str | None) -> None:
    """Queue pending upload ``i`` with ``policy`` (replace / keep both), or drop it (``None``)."""
    _, name, data, _ = st.session_state.pending_versions.pop(i)
    if policy is None:
        st.session_state.ingest_log = [("info", f"{name}: not added")]
        return
    st.session_state.ingest_log = []
    _log_result(store.enqueue_bytes(data, name, on_conflict=policy))
    jobs.ensure_worker(store.path)


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
                        help="The new file becomes the current version; the old one leaves the index when it is ready."):
                resolve_pending(i, OnConflict.REPLACE)
                st.rerun()
            if b.button("Keep both", key=f"keepboth-{fid}"):
                resolve_pending(i, OnConflict.KEEP_BOTH)
                st.rerun()
            if c.button("Cancel", key=f"cancel-{fid}"):
                resolve_pending(i, None)
                st.rerun()


def confirm_delete(doc) -> None:
    """Ask before deleting (issue 25): what goes, then Delete or Keep it. Shown until one is clicked."""
    with st.container(border=True, key="confirm-delete-box"):
        st.warning(md_escape(f"Delete {doc.label}? Its chunks, vectors, stored file"
                             + (f" and {doc.versions} earlier version(s)" if doc.versions else "")
                             + " are removed; chats that cited it keep their quotes. This cannot be undone."))
        a, b = st.columns(2)
        if a.button("Delete", key="confirm-delete", type="primary", width="stretch"):
            st.session_state.pop("deleting", None)
            try:
                store.delete(doc.id)  # its served copy goes with it (rag.served, issue 26)
                st.session_state.ingest_log = [("info", f"{doc.name}: deleted")]
            except RagError as e:
                st.session_state.ingest_log = [("error", str(e))]
            st.rerun()
        if b.button("Keep it", key="cancel-delete", width="stretch"):
            st.session_state.pop("deleting", None)
            st.rerun()


def _job_row(job, ahead: int) -> None:
    """One file being indexed or waiting, in the upload list: its name, stage, bar and time left (measured,
    :meth:`rag.store.jobs.Job.eta_s`; none is promised before it can be), and Cancel."""
    a, b = st.columns([0.85, 0.15], vertical_alignment="center")
    with a:
        if job.state == "queued" and not job.deferred:  # deferred: searchable, its sentence units wait (issue 41)
            wait = f" ({ahead} ahead)" if ahead else " (next)"
            st.progress(0.0, text=md_escape(f"{job.name}: queued for indexing{wait}"))
        else:
            st.progress(job.fraction, text=md_escape(f"{job.name}: {job.stage_text()} · {job.fraction:.0%}"
                                                     f"{jobs.time_left(job)}"))
    if b.button("Cancel", key=f"cancel-job-{job.id}", width="stretch", help="Stop indexing this file; it is not added."):
        store.cancel_job(job.id)
        st.session_state.ingest_log = [("info", f"{job.name}: cancelled")]
        st.rerun(scope="app")


def _failed_row(doc, line: str | None) -> None:
    """A file that could not be indexed: why (its outcome ``line``, else the stored reason) and Remove (issue 42:
    failed files lingered on every page with no way to dismiss them)."""
    a, b = st.columns([0.85, 0.15], vertical_alignment="center")
    if line is None:
        hint = "" if doc.retryable is None else " (a retry may help)" if doc.retryable else " (a retry cannot help)"
        line = f"{doc.name}: failed: {doc.reason or 'no reason recorded'}{hint}"
    a.error(md_escape(line))
    if b.button("Remove", key=f"remove-failed-{doc.id}", width="stretch", icon=":material/close:",
                help="Nothing of it was indexed: removes it from this list, the table and the sidebar, with its kept "
                     "copy. Add the file again (fixed) at any time."):
        _remove_failed([doc])


def _remove_failed(docs) -> None:
    gone = []
    for d in docs:
        try:
            if store.delete(d.id):
                gone.append(d.name)
        except RagError as e:
            st.session_state.ingest_log.append(("error", str(e)))
    fails = {f"{n}: failed:" for n in gone}
    st.session_state.ingest_log = [(lvl, m) for lvl, m in st.session_state.ingest_log
                                   if not any(m.startswith(f) for f in fails)]
    if gone:
        st.session_state.ingest_log.append(("info", f"Removed {len(gone)} file(s) that could not be indexed: "
                                                    f"{', '.join(gone)}"))
    st.rerun(scope="app")


def upload_view() -> None:
    """:func:`_upload_view` as a fragment redrawn every few seconds while work is left (decided here, after this
    run's uploads were queued: a fragment defined before them never redrew, and the page stayed at "queued")."""
    st.fragment(_upload_view, run_every=jobs.REFRESH_S if store.jobs.active() else None)()


def _upload_view() -> None:
    """The one upload view (issue 42: the page said everything three times, six "queued" boxes, a progress list
    and the sidebar's box, with different figures): one line per file in upload order, each in its place from
    "queued" (with how many wait before it) through its stage, bar and time left to its outcome; then the
    files of this collection queued elsewhere; then every file that could not be indexed, each with Remove,
    and "Remove all". Redrawn every few seconds while work is left; the page (its table) when a file ends."""
    report_finished()
    active = store.jobs.active()
    order = {j.id: i for i, j in enumerate(active)}
    queued_line = {f"{name}: queued for indexing": i for i, name in st.session_state.my_jobs.items()}
    failed = {d.name: d for d in store.documents() if d.status == DocStatus.FAILED}
    shown_jobs, shown_failed = set(), set()
    if active:
        st.markdown(f"**Indexing: {jobs.left_text(active)}**")
    for level, msg in st.session_state.ingest_log:
        job_id = queued_line.get(msg)
        job = active[order[job_id]] if job_id in order else None
        if job is not None:
            _job_row(job, order[job_id])
            shown_jobs.add(job.id)
            continue
        name = msg.split(": failed:", 1)[0] if ": failed:" in msg else None
        if name in failed and name not in shown_failed:
            _failed_row(failed[name], msg)
            shown_failed.add(name)
            continue
        getattr(st, level)(md_escape(msg))
    for job in active:
        if job.id not in shown_jobs:
            _job_row(job, order[job.id])
    for msg in st.session_state.get("name_refusals", []):
        st.error(md_escape(msg))
    rest = [d for n, d in failed.items() if n not in shown_failed]
    if rest:
        st.markdown(f"**Could not be indexed ({len(rest)})**" if shown_failed or shown_jobs or
                    st.session_state.ingest_log else f"**Could not be indexed ({len(failed)})**")
    for d in rest:
        _failed_row(d, None)
    if len(failed) > 1 and st.button(f"Remove all {len(failed)} failed", key="remove_all_failed",
                                     icon=":material/delete_sweep:",
                                     help="Every file that could not be indexed leaves the list, the table and the "
                                          "sidebar (nothing of them was indexed)."):
        _remove_failed(list(failed.values()))
    key = f"upload_view_active_{store.path}"
    was = st.session_state.get(key, 0)
    st.session_state[key] = len(active)
    if len(active) < was:  # a file ended: the whole page again (its table, the fragment's refresh)
        st.rerun(scope="app")


#: File name endings the uploader offers (the type is then read from the bytes: rag.ingest.sniff).
UPLOAD_TYPES = ["pdf", "docx", "pptx", "xlsx", "xls", "csv", "tsv", "html", "htm", "epub", "png", "jpg", "jpeg", "tif",
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
st.caption(f"Files up to **{limit_mb} MB** each; bigger files are refused. "
           "Each file is kept, then read, cut into passages and indexed locally by a background worker; nothing "
           "leaves this machine. You can open other pages or close the tab meanwhile: indexing goes on, and the "
           "sidebar shows its progress on every page.")
if files:
    accept_uploads(files)
with st.sidebar:  # after the uploads were queued; here it points to this page's list, with no figures of its own
    jobs.progress_panel(store, on_documents_page=True)
ask_pending()
upload_view()

# ---------------------------------------------------------------- the documents
docs = store.documents()
st.subheader(f"{len(docs)} document(s)")
if not docs:
    st.caption("Nothing indexed yet.")
    st.stop()
counts = {s: sum(d.status == s for d in docs) for s in DocStatus}
st.caption(", ".join(f"{counts[s]} {STATUS.get(str(s), s)}" for s in DocStatus if counts[s] or s == DocStatus.READY),
           help="waiting: for the worker; being read: now; ready: you can ask about it; failed: see why under the "
                "table.")

@st.cache_data(show_spinner=False, max_entries=512)
def _length_of(path: str, doc_id: str, updated: str, pages: int) -> str:
    try:
        return length_label(pages, store.parts(doc_id), len(store.canonical_text(doc_id).split()))
    except RagError:
        return length_label(pages)


def _length(d) -> str:
    """"13 pages", "22 slides", "3 sheets", "4,210 words" (a ready document; "–" otherwise)."""
    if d.status != DocStatus.READY:
        return length_label(d.pages)
    return _length_of(str(store.path), d.id, d.updated_at, d.pages)


table = pd.DataFrame({
    "document": [d.label for d in docs],
    "kind": [kind_label(d.media_type, d.name) for d in docs],
    "length": [_length(d) for d in docs],
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
        "status": [d.status for d in docs],
        "reason": [d.reason or "" for d in docs],
        "retry can help": [("yes" if d.retryable else "no") if d.status == DocStatus.FAILED else "" for d in docs],
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
pick = left.selectbox("Document", list(by_id), key="doc_pick", format_func=lambda i: by_id[i].label)
doc = by_id[pick]
# the status beside, not in the option's label: the browser kept a picked option's old label ("queued") after
# its document had failed
if doc.status == DocStatus.FAILED:  # red: it failed (issue 29), with why and whether a retry can help
    hint = "" if doc.retryable is None else " A retry may help." if doc.retryable else " A retry cannot help."
    st.error(md_escape(f"{doc.label} could not be indexed: {doc.reason or 'no reason recorded'}.{hint}"))
else:
    st.caption(md_escape(f"{doc.label} · {STATUS.get(str(doc.status), doc.status)}"))
for w in doc.warnings:  # text coverage, OCR'd and unreadable pages, encodings (issue 13); the name once
    st.warning(md_escape(w if w.startswith(doc.name + " ") else named(doc.label, w)))
if mid.button("Retry", key="retry", disabled=doc.status != DocStatus.FAILED or not doc.has_file,
              help="Index a failed document again from its stored original.", width="stretch"):
    try:
        _log_result(store.enqueue_retry(doc.id))
        jobs.ensure_worker(store.path)
    except RagError as e:
        st.session_state.ingest_log = [("error", str(e))]
    st.rerun()
if right.button("Delete", key="delete", width="stretch", icon=":material/delete:",
                help="Remove the document, its chunks, vectors and stored file (asks first)."):
    st.session_state.deleting = doc.id
if st.session_state.get("deleting") in by_id:
    confirm_delete(by_id[st.session_state.deleting])
failed = [d for d in docs if d.status == DocStatus.FAILED and d.has_file]
transient = [d for d in failed if d.retryable is not False]
if transient:  # (why each one failed, and Remove, are in the upload list above)
    label = (f"Retry all {len(transient)} failed that a retry can help" if len(transient) < len(failed)
             else f"Retry all {len(failed)} failed")
    if st.button(label, key="retry_all",
                 help="Queues again the documents that failed on a transient fault (interrupted, internal error); "
                      "a damaged, refused or too large file fails the same way again and is left as it is."):
        st.session_state.ingest_log = []
        for d in transient:
            _log_result(store.enqueue_retry(d.id))
        jobs.ensure_worker(store.path)
        st.rerun()
if doc.status == DocStatus.READY:
    st.subheader("What it holds")
    overview.show(store, doc, heading=False)
