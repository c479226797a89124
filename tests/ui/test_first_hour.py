"""A first hour that feels like a product (issue 29), through AppTest with fakes (fast tier): no real model.

The pages run against a store whose embedder is the hash fake and whose answers come from the scripted
generator (the one generator seam); the gate is the distance gate, so what is answered is predictable. The
real browser walk (upload, overview, a suggested question, a citation, a follow-up, the export) is
``tests/ui/test_browser.py::test_first_hour_walk``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
CHAT = str(ROOT / "app_pages" / "0_Chat.py")
DOCS_PAGE = str(ROOT / "app_pages" / "1_Documents.py")

GUIDE = b"""# Bike shed guide

## Opening hours

The bike shed opens at seven in the morning and closes at ten at night on weekdays.
On Sundays the shed stays closed all day because the caretaker is away.

## Keys and badges

Every cyclist collects a badge from the front desk before using the shed for the first time.
Lost badges cost five pounds to replace at the front desk.
"""

SOUPS = b"""# Soup book

## Tomato soup

Tomato soup needs ripe tomatoes, one onion, garlic and a litre of vegetable stock.
Simmer the tomatoes with the onion for twenty minutes before blending the soup smooth.
"""


@pytest.fixture()
def app_store(tmp_path, monkeypatch, fake_generator):
    """The app's store (the default collection of a fresh data folder) with the hash embedder; empty."""
    from fakes import HashEmbedder

    from rag.settings import get_settings
    from rag.store.store import Store
    from ui import services

    monkeypatch.setenv("RAG_STORE", str(tmp_path / "data"))
    monkeypatch.setenv("RAG_GATE", "distance")
    monkeypatch.delenv("RAG_COLLECTION", raising=False)
    opened: dict[str, Store] = {}

    def fake_store(path: str) -> Store:
        if path not in opened:
            opened[path] = Store(Path(path), get_settings(store=path), embedder=HashEmbedder())
        return opened[path]

    fake_store.clear = opened.clear
    monkeypatch.setattr(services, "_store", fake_store)
    store = fake_store(str((tmp_path / "data").resolve()))
    yield store
    for s in opened.values():
        s.close()


@pytest.fixture()
def two_docs(app_store):
    assert app_store.ingest_bytes(GUIDE, "bike-shed.md").status == "ready"
    assert app_store.ingest_bytes(SOUPS, "soups.md").status == "ready"
    return app_store


def _app(path: str = APP):
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(path, default_timeout=300)


def test_an_empty_store_says_where_to_start(app_store):
    at = _app().run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Ask your documents"]  # app.py's navigation opens the chat
    assert any("No document is indexed yet" in i.value and "Documents" in i.value for i in at.info)
    assert not at.error


def test_the_model_choice_reads_fast_and_better_with_figures(app_store, tmp_path, monkeypatch):
    from rag.models import KNOWN_GGUF

    models = tmp_path / "models"  # the two shipped file names (the page lists files; nothing is loaded)
    models.mkdir()
    for name in KNOWN_GGUF:
        (models / name).write_bytes(b"")
    monkeypatch.setenv("RAG_MODELS_DIR", str(models))
    at = _app(CHAT).run()  # (alone, the empty page's link to Documents raises: no navigation; the sidebar is drawn)
    choice = at.sidebar.radio(key="model_file")
    assert "Fast (0.5B)" in choice.options and not any(o.endswith(".gguf") for o in choice.options[:2])
    sidebar = " ".join(c.value for c in at.sidebar.caption) + " ".join(m.value for m in at.sidebar.markdown)
    assert "cosine" not in " ".join(s.label for s in at.sidebar.slider if not s.proto.label.startswith("Threshold"))
    assert at.sidebar.expander and any(e.label == "Advanced" for e in at.sidebar.expander)
    assert "AWQ" not in sidebar


def test_the_first_view_says_whats_in_the_documents_and_offers_questions_they_answer(two_docs, fake_generator):
    at = _app(CHAT).run()
    assert not at.exception, at.exception
    panel = next(e for e in at.expander if e.label.startswith("What's in your documents"))
    text = " ".join(m.value for m in panel.markdown)
    assert "bike-shed.md" in text and "soups.md" in text and "(Markdown)" in text
    assert "**Sections:**" in text and "Opening hours" in text  # the picked document's overview
    assert "/Source?doc=" in text  # each summary sentence links to its place
    suggested = [b for b in at.button if (b.key or "").startswith("suggest-")]
    assert suggested, "no suggested question"
    question = suggested[0].label
    suggested[0].click().run()
    assert not at.exception, at.exception
    user, reply = at.chat_message[0], at.chat_message[1]
    assert user.markdown[0].value == question
    assert not reply.error and not any("No answer" in i.value for i in reply.info)  # answered, nothing failed
    texts = [m.value for m in reply.markdown]
    # [1] jumps to its source row on the page, and previews it (its title: the locator and the quote, issue 42)
    assert any('](#src-t0-1 "bike\\-shed\\.md \\> ' in t for t in texts), texts
    assert "Open [1]" in [b.label for b in reply.button]  # which opens the app's viewer
    assert any("/Source?doc=" in t and "new tab" in t for t in texts)  # the new tab stays, as a second link
    assert not any("cosine distance" in t for t in texts)  # the figures are in the answer's Details
    details = next(e for e in reply.expander if e.label == "Details")
    assert "cosine distance" in details.dataframe[0].value.columns
    assert not [b for b in at.button if (b.key or "").startswith("suggest-")]  # the chat has begun


def test_a_refusal_is_plain_neutral_and_names_the_scope(two_docs, fake_generator):
    soups = next(d.id for d in two_docs.documents() if d.name == "soups.md")
    at = _app(CHAT).run()
    at.multiselect(key="scope_docs").set_value([soups]).run()
    at.chat_input(key="question").set_value("When does the bike shed close on weekdays?").run()
    assert not at.exception, at.exception
    user, reply = at.chat_message[0], at.chat_message[1]
    assert "Asked within soups.md" in [c.value for c in user.caption]
    assert not reply.error  # red is for failures only
    (info,) = reply.info
    assert info.value.startswith("**Refused** · No answer: within soups.md, the documents do not seem to say this")
    assert any("Ask within" in c.value and "all of them" in c.value for c in reply.caption)
    details = next(e for e in reply.expander if e.label == "Details")
    assert any("NO ANSWER" in c.value for c in details.caption)  # the gate's own line, for a specialist
    assert fake_generator.prompts == []  # the model was never asked


def test_the_documents_table_is_plain_and_delete_asks_first(two_docs):
    at = _app(DOCS_PAGE).run()
    assert not at.exception, at.exception
    df = at.dataframe[0].value
    assert list(df.columns) == ["document", "kind", "length", "status", "added"]
    assert set(df["kind"]) == {"Markdown"} and set(df["status"]) == {"ready"}
    assert all(a == "just now" or a.endswith("min ago") or a.startswith("today") for a in df["added"])
    assert "embedding model" in at.dataframe[1].value.columns  # the rest, under Details
    assert any("**Sections:**" in m.value for m in at.markdown)  # the picked document's overview
    at.button(key="delete").click().run()
    assert any(w.value.startswith("Delete bike-shed.md?") for w in at.warning)
    assert len(at.dataframe[0].value) == 2  # nothing deleted yet
    at.button(key="cancel-delete").click().run()
    assert not any(w.value.startswith("Delete ") for w in at.warning) and len(at.dataframe[0].value) == 2
    at.button(key="delete").click().run()
    at.button(key="confirm-delete").click().run()
    assert any("bike-shed.md: deleted" in i.value for i in at.info)
    assert list(at.dataframe[0].value["document"]) == ["soups.md"]


def test_a_misnamed_file_says_what_it_is_and_rtf_is_refused_with_why(app_store, monkeypatch):
    """Issue 42, item 5: a text file named report.docx was 'indexed, 1 passage' in green; RTF read as text."""
    from rag.store.worker import Worker
    from ui import jobs

    def drain(store_path) -> bool:  # the worker on the test's own (hash-embedder) store
        Worker(app_store, contained=False).run(until=lambda: not app_store.jobs.active())
        return True

    monkeypatch.setattr(jobs, "ensure_worker", drain)
    at = _app(DOCS_PAGE).run()
    files = [("report.docx", b"Quarterly report. Sales grew by ten percent in the north.\n", "application/octet-stream"),
             ("memo.rtf", b"{\\rtf1\\ansi Dear team, the shed closes early on Friday.}", "application/rtf")]
    at.file_uploader(key="uploader").set_value(files).run()
    assert not at.exception
    warned = [w.value for w in at.warning]
    assert not any("report.docx" in s.value for s in at.success)
    # the name once in each line, and the table's kind says what the name claimed (it read "Text")
    assert any("report.docx: indexed, 1 passage; to know: it is plain text, not a Word document" in w
               for w in warned), warned
    assert "report.docx is plain text, not a Word document: read as text" in warned  # the picked document's notice
    df = at.dataframe[0].value
    assert df.loc[df["document"] == "report.docx", "kind"].iloc[0] == "Text (named .docx)"
    errors = [e.value for e in at.error]
    assert any(e.startswith("memo.rtf: failed:") and "RTF (Rich Text Format) is not read here" in e
               for e in errors), errors
