"""The app's gate (issue 26, item 3): every page calls :func:`require_access` first; the rules are in
:mod:`rag.access` (private by default; a password when served beyond this machine)."""

from __future__ import annotations

import time

import streamlit as st

from rag.access import Throttle, login_required, password_set, verify
from ui import services
from ui.format import md_escape


@st.cache_resource
def _throttle() -> Throttle:
    return Throttle()


def require_access() -> None:
    """Return when this browser session may use the app; otherwise draw the login (or the reason none can be
    made) and stop the page. Nothing of the documents is read before this returns."""
    cfg = services.settings()
    address = st.get_option("server.address")
    if not login_required(address, cfg.require_login) or st.session_state.get("access_ok"):
        return
    root = cfg.store
    st.title("Document QA")
    if not password_set(root):
        st.error(md_escape(f"This app is served beyond this machine (server.address = {address or 'every interface'}) "
                           "and no password is set, so it shows nothing. On the server, run: python -m rag access "
                           "set-password, then reload this page; or serve it on 127.0.0.1 only."))
        st.stop()
    with st.form("login"):
        password = st.text_input("Password", type="password", key="access_password")
        submitted = st.form_submit_button("Log in", type="primary")
    if submitted:
        throttle = _throttle()
        wait = throttle.wait_s()
        if wait:
            st.error(f"Too many wrong passwords: try again in {wait:.0f} s.")
        elif verify(root, password or ""):
            throttle.record(True)
            st.session_state.access_ok = True
            st.session_state.pop("access_password", None)
            st.rerun()
        else:
            throttle.record(False)
            time.sleep(1.0)
            st.error("Wrong password.")
    st.stop()
