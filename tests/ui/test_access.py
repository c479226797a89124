"""Issue 26, item 3: private by default. On 127.0.0.1 no login; served beyond the machine every page asks for the
password (none set: nothing is shown); wrong passwords are throttled; the hash never holds the password."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag import access
from rag.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["app.py", "app_pages/1_Documents.py", "app_pages/2_Source.py", "app_pages/3_Evaluation.py"]


def test_loopback_rules():
    assert access.is_loopback("127.0.0.1") and access.is_loopback("localhost") and access.is_loopback("::1")
    assert not access.is_loopback("0.0.0.0") and not access.is_loopback("") and not access.is_loopback(None)
    assert not access.is_loopback("192.168.1.5")
    assert not access.login_required("127.0.0.1") and access.login_required("127.0.0.1", True)
    assert access.login_required("0.0.0.0")


def test_password_is_stored_as_a_salted_hash_and_verified(tmp_path):
    with pytest.raises(ValueError):
        access.set_password(tmp_path, "short")
    path = access.set_password(tmp_path, "correct horse battery")
    assert path.stat().st_mode & 0o777 == 0o600
    assert "correct horse" not in path.read_text() and json.loads(path.read_text())["scheme"] == "scrypt"
    assert access.verify(tmp_path, "correct horse battery") and not access.verify(tmp_path, "correct horse")
    assert access.clear_password(tmp_path) and not access.verify(tmp_path, "correct horse battery")


def test_throttle_locks_after_five_wrong_passwords():
    t = access.Throttle()
    for _ in range(access.MAX_FAILURES):
        assert t.wait_s(now=100.0) == 0
        t.record(False, now=100.0)
    assert t.wait_s(now=101.0) == pytest.approx(access.LOCKOUT_S - 1)
    assert t.wait_s(now=100.0 + access.LOCKOUT_S) == 0


def test_config_and_make_run_serve_on_loopback():
    assert 'address = "127.0.0.1"' in (ROOT / ".streamlit" / "config.toml").read_text()
    make = (ROOT / "Makefile").read_text()
    assert "ADDRESS ?= 127.0.0.1" in make and "--server.address $(ADDRESS)" in make


@pytest.mark.parametrize("page", PAGES)
def test_every_page_asks_for_the_password_beyond_the_machine(page, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("RAG_STORE", str(tmp_path / "data"))
    at = AppTest.from_file(str(ROOT / page), default_timeout=300)
    at.run()  # on loopback (the test's default config): no login
    assert not at.exception and not [f for f in at.get("form")]
    monkeypatch.setenv("RAG_REQUIRE_LOGIN", "true")
    at = AppTest.from_file(str(ROOT / page), default_timeout=300).run()
    assert any("no password is set" in e.value for e in at.error) and not at.exception
    access.set_password(tmp_path / "data", "correct horse battery")
    at = AppTest.from_file(str(ROOT / page), default_timeout=300).run()
    assert [t.label for t in at.text_input] == ["Password"] and not at.sidebar.selectbox
    at.text_input(key="access_password").set_value("wrong password!")
    at.button[0].click().run()
    assert any("Wrong password" in e.value for e in at.error)
    at.text_input(key="access_password").set_value("correct horse battery")
    at.button[0].click().run()
    assert at.session_state["access_ok"] and not at.exception


def test_cli_sets_and_clears_the_password(tmp_path):
    r = CliRunner().invoke(main, ["access", "set-password", "--store", str(tmp_path), "--password-stdin"],
                           input="correct horse battery\n")
    assert r.exit_code == 0 and access.verify(tmp_path, "correct horse battery")
    r = CliRunner().invoke(main, ["access", "clear", "--store", str(tmp_path)])
    assert r.exit_code == 0 and not access.password_set(tmp_path)
