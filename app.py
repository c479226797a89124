"""Streamlit entry point: the chat page (placeholder until issue 6)."""

import streamlit as st

st.set_page_config(page_title="Document QA", page_icon="📄")
st.title("Document QA with honest citations")
st.write("The app is being built; `python -m rag --help` shows the command line.")
