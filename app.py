"""The app's entry point (``streamlit run app.py``, ``make run``): the navigation between its four pages.

* **Chat** (``app_pages/0_Chat.py``): ask the documents; answers cite their sources as [n];
* **Documents** (``app_pages/1_Documents.py``): add files, see what each one holds (its overview), retry, delete;
* **Source** (``app_pages/2_Source.py``): one document opened at a cited place (where a citation's new tab leads);
* **Quality** (``app_pages/3_Evaluation.py``): how well the app finds the answers to your own test questions.

The pages read as a person names them (issue 29: the chat page read "app" in the navigation); their URLs stay
``/``, ``/Documents``, ``/Source`` (every citation link) and ``/Quality``. They live in ``app_pages/``, never in a
folder named ``pages/`` (issue 42): until a process's first ``st.navigation`` call, Streamlit runs a ``pages/``
folder's scripts as pages of their own, so a session that started on ``/Documents`` right after the server started
ran ``pages/1_Documents.py`` without this file, and the sidebar listed "app", "Chat", ..., "Evaluation".
"""

import sys

import streamlit as st

st.set_page_config(page_title="Document QA", page_icon="📄", layout="wide")
# The server's first page imports the readers, the index and the answer pipeline before it can draw anything
# (3 s of imports alone on 2 quiet cores): a newcomer saw a blank page for 5 s (2026-12-02). Said only while
# those modules are not loaded yet in this process, so it never stays above a page that is drawing.
# The imports happen here, under the caption, which is gone before the page draws (issue 42: imported by the page, the
# caption stayed above a page that ended early with st.stop(), e.g. "Nothing indexed yet.": the cleanup after
# pages.run() never reached the screen).
if "ui.services" not in sys.modules:  # every page imports it (and the store with it)
    loading = st.empty()
    loading.caption("Starting up… (a few seconds, the first time)")
    import ui.chat  # noqa: F401  (the answer pipeline, the store, the readers: what the pages import)
    import ui.services  # noqa: F401
    loading.empty()
pages = st.navigation([
    st.Page("app_pages/0_Chat.py", title="Chat", icon=":material/chat:", default=True),
    st.Page("app_pages/1_Documents.py", title="Documents", icon=":material/folder_open:", url_path="Documents"),
    st.Page("app_pages/2_Source.py", title="Source", icon=":material/article:", url_path="Source"),
    st.Page("app_pages/3_Evaluation.py", title="Quality", icon=":material/fact_check:", url_path="Quality"),
])
pages.run()
