"""Quality ("Evaluation" before issue 29): measure retrieval on the user's own store with their questions file.

In plain words first: how often the passage that holds the answer is among the first ones found; the
strategies, modes, recall@k, Wilson intervals and sign tests sit under "Advanced" and in the report.

The page only gathers inputs and shows results: the documents come from the
store (``rag.evaluation.data.store_documents``), the work is
``rag.evaluation.runner.run_evaluation`` and the report and plots are
``rag.evaluation.report.write_report``. Nothing in the store changes: every strategy is
indexed in memory, embeddings cached by text in ``~/.cache/rag``.
"""

import tempfile
from pathlib import Path

import streamlit as st

from rag.errors import RagError
from rag.evaluation.data import load_ood, load_questions, store_documents
from rag.evaluation.report import headline, write_report
from rag.evaluation.runner import run_evaluation
from rag.ingest.chunk import STRATEGIES
from ui import jobs, services
from ui.access import require_access
from ui.format import md_escape
from ui.plain import plain_results

st.set_page_config(page_title="Quality · Document QA", page_icon="📏", layout="wide")
services.init_state()
require_access()  # issue 26: a password first when served beyond this machine
for key in ("eval_result", "eval_dir", "eval_report"):
    if key not in st.session_state:
        st.session_state[key] = None

st.title("Quality")
st.markdown(
    "How well does the app find the answers in **your** documents? Give it a file of test questions, each with "
    "the exact sentence of your documents that answers it. The app searches each question and says how often "
    "that sentence is among the first passages it finds, and, with questions your documents do **not** answer "
    "(optional), how often it would still offer an answer instead of saying it has none.")
st.caption("A question counts as found only if a passage the app returns contains the whole answering sentence "
           "(the \"needle\"). Nothing in your documents changes; it takes a few minutes.")
with st.expander("File formats (JSON Lines, one object per line)"):
    st.code('{"id": "q01", "doc": "guide.md", "needle": "exact sentence from the document", '
            '"query_doc": "the question in the document\'s words", "query_user": "the same need in a user\'s words"}',
            language="json")
    st.caption("`query_course` / `query_ticket` are accepted for the two wordings too. Recall is reported for both "
               "wordings together and for each apart.")
    st.code('{"id": "o01", "query": "a question your documents do not answer", "kind": "near"}   # or "far"',
            language="json")

store = services.store_or_stop()
with st.sidebar:
    jobs.progress_panel(store)
if store.is_empty:
    st.info("The store is empty: add documents on the Documents page first.")
    st.stop()

c1, c2 = st.columns(2)
q_file = c1.file_uploader("Questions (JSONL)", type=["jsonl", "json", "txt"], key="eval_questions")
o_file = c2.file_uploader("Out-of-domain questions (JSONL, optional)", type=["jsonl", "json", "txt"], key="eval_ood")
with st.expander("Advanced: what is compared", icon=":material/tune:"):
    c3, c4 = st.columns(2)
    strategies = c3.multiselect("Chunking strategies", list(STRATEGIES), default=["A", "C", "E"],
                                key="eval_strategies",
                                help="A blind 512, B blind + overlap, C boundaries, D boundaries + overlap, "
                                     "E boundaries + header (the product's), F E + overlap.")
    modes = c4.multiselect("Retrieval modes", ["dense", "bm25", "hybrid"], default=["dense", "bm25", "hybrid"],
                           key="eval_modes")


def _load(upload, loader, workdir: Path):
    """Parse an uploaded JSONL with ``loader`` (``load_questions`` / ``load_ood``) under its own name."""
    path = workdir / Path(upload.name).name
    path.write_bytes(upload.getvalue())
    return loader(path)


def run(q_upload, o_upload) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="rag-eval-"))
    try:
        questions = _load(q_upload, load_questions, workdir)
        ood = _load(o_upload, load_ood, workdir) if o_upload is not None else []
    except RagError as e:
        st.error(md_escape(str(e)))
        return
    bar = st.progress(0.0, text="Reading the documents of the store…")
    docs, failed = store_documents(store)
    if not docs:
        st.error("No ready document in the store to evaluate.")
        return

    def progress(fraction: float, message: str) -> None:
        bar.progress(min(1.0, max(0.0, fraction)), text=message)

    try:
        result = run_evaluation(docs, questions, ood, strategies=strategies, modes=modes,
                                   embedder=services.embedder(), settings=services.settings(),
                                   failed_documents=failed, progress=progress)
    except (RagError, ValueError) as e:
        st.error(md_escape(str(e)))
        return
    md = write_report(result, workdir / "report")
    st.session_state.eval_result = result
    st.session_state.eval_dir = str(workdir / "report")
    st.session_state.eval_report = md.read_text(encoding="utf-8")
    bar.progress(1.0, text=f"Done in {result.timings_s['total']:.1f} s.")


ready = q_file is not None and strategies and modes
if st.button("Run evaluation", type="primary", disabled=not ready, key="eval_run"):
    run(q_file, o_file)

result = st.session_state.eval_result
if result is not None:
    out = Path(st.session_state.eval_dir)
    st.subheader("In short")
    for line in plain_results(result):
        st.markdown(f"- {md_escape(line)}")
    with st.expander("The figures (recall@k, sign tests)", icon=":material/info:"):
        for line in headline(result).values():
            st.markdown(f"- {md_escape(line)}")
    plots = [(p, cap) for p, cap in (("recall.png", "Recall@k with 95 % Wilson intervals"),
                                     ("sweep.png", "Refusal sweep: bluffs and answerable questions lost"),
                                     ("distances.png", "Nearest cosine distance: in-domain vs out-of-domain"))
             if (out / p).exists()]
    for p, cap in plots:
        st.image(str(out / p), caption=cap)
    d1, d2 = st.columns(2)
    d1.download_button("Download report (Markdown)", st.session_state.eval_report, file_name="evaluation.md",
                       key="eval_dl_md")
    d2.download_button("Download results (JSON)", (out / "report.json").read_text(encoding="utf-8"),
                       file_name="evaluation.json", key="eval_dl_json")
    with st.expander("Full report", expanded=False):
        body = st.session_state.eval_report.split("## Cost")[0]
        st.markdown("\n".join(line for line in body.splitlines() if not line.startswith("![")))
