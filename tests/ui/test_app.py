"""The Streamlit pages through `streamlit.testing.v1.AppTest` (no browser): real store, real embedder, real 0.5B model.

One store in a temporary folder for the module: the Documents page indexes a
corpus chapter and the DPR paper through its uploader; the chat page then
answers from them, refuses, and flips with the threshold slider.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
DOCS_PAGE = str(ROOT / "app_pages" / "1_Documents.py")
SOURCE_PAGE = str(ROOT / "app_pages" / "2_Source.py")
PDF_NAME = "01-dpr-paper-two-column-13p.pdf"
MD_NAME = "04-learning-curves.md"
TIMEOUT = 900  # seconds; a bound on waiting (indexing on 2 shared cores), never an assertion
OFF_TOPIC = "how do I renew my passport"
PDF_QUESTION = "What similarity function does DPR use between question and passage vectors?"


def _app(path: str):
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(path, default_timeout=TIMEOUT)


def _no_raw_html(at) -> None:
    """Nothing on the page is rendered as raw HTML (user text is escaped, never unsafe_allow_html)."""
    for m in at.markdown:
        assert not m.proto.allow_html, m.value


def _llm_or_skip():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed: the answer needs the local model")
    from rag.models import QWEN_05B
    from rag.settings import get_settings

    if not (get_settings().models_dir / QWEN_05B.file_name).is_file():
        pytest.skip("the default GGUF is not provisioned (make models)")


@pytest.fixture(scope="module")
def store_env(tmp_path_factory):
    """RAG_STORE pointing at a fresh folder for this module (the pages read settings from the environment)."""
    mp = pytest.MonkeyPatch()
    store = tmp_path_factory.mktemp("app-store")
    mp.setenv("RAG_STORE", str(store))
    mp.delenv("RAG_THRESHOLD", raising=False)
    yield store
    mp.undo()


@pytest.fixture(scope="module")
def indexed(store_env, corpus_dir):
    """The Documents page after uploading the chapter and the DPR paper in one go."""
    at = _app(DOCS_PAGE).run()
    assert not at.exception
    files = [
        (MD_NAME, (corpus_dir / "docs" / MD_NAME).read_bytes(), "text/markdown"),
        (PDF_NAME, (corpus_dir / "pdfs" / PDF_NAME).read_bytes(), "application/pdf"),
    ]
    at.file_uploader(key="uploader").set_value(files).run()
    assert not at.exception
    return at


def _table(at):
    return at.dataframe[0].value


@pytest.mark.slow
def test_upload_indexes_both_files_and_lists_them(indexed):
    at = indexed
    ok = [s.value for s in at.success] + [w.value for w in at.warning]  # indexed with a notice: orange (issue 29)
    assert any(f"{MD_NAME}: indexed" in s for s in ok), ok
    assert any(f"{PDF_NAME}: indexed" in s for s in ok), ok
    # each file's outcome took the place of its "queued for indexing" line (both were shown, 2026-12-02)
    assert not [i.value for i in at.info if "queued for indexing" in i.value]
    df = _table(at)
    assert list(df["document"]) == [MD_NAME, PDF_NAME]
    assert set(df["status"]) == {"ready"} and list(df["kind"]) == ["Markdown", "PDF"]
    # each document's length in its own unit (issue 42: "-" for a deck, a DOCX, an EPUB)
    assert df.loc[df["document"] == PDF_NAME, "length"].iloc[0] == "13 pages"
    assert df.loc[df["document"] == MD_NAME, "length"].iloc[0].endswith(" words")
    details = at.dataframe[1].value  # the figures, under "Details" (issue 29)
    assert (details["chunks"] > 0).all()
    assert details["embedding model"].str.contains("384-d").all()
    assert any("50 MB" in c.value for c in at.caption)  # the upload limit is shown
    _no_raw_html(at)


@pytest.mark.slow
def test_same_file_again_says_already_indexed(indexed, corpus_dir):
    at = _app(DOCS_PAGE).run()
    data = (corpus_dir / "docs" / MD_NAME).read_bytes()
    at.file_uploader(key="uploader").set_value([("copy-of-chapter.md", data, "text/markdown")]).run()
    assert any("already indexed" in i.value and MD_NAME in i.value for i in at.info), [i.value for i in at.info]
    assert len(_table(at)) == 2


@pytest.mark.slow
def test_bad_file_shows_reason_and_can_be_retried_and_deleted(indexed, cases_dir):
    at = _app(DOCS_PAGE).run()
    bad = (cases_dir / "c08_encrypted_userpw.pdf").read_bytes()
    at.file_uploader(key="uploader").set_value([("locked.pdf", bad, "application/pdf")]).run()
    errors = [e.value for e in at.error]
    assert any(e.startswith("locked.pdf: failed:") and "password" in e for e in errors), errors
    df = _table(at)
    assert len(df) == 3 and (df["status"] == "ready").sum() == 2  # nothing else lost
    row = df[df["document"] == "locked.pdf"].iloc[0]
    assert row["status"] == "failed"
    details = at.dataframe[1].value
    assert "password" in details[details["document"] == "locked.pdf"].iloc[0]["reason"]

    value = hashlib.sha256(bad).hexdigest()  # a document's id is the sha256 of its bytes
    at.selectbox(key="doc_pick").set_value(value).run()
    assert not at.button(key="retry").disabled
    at.button(key="retry").click().run()
    assert any("locked.pdf: failed:" in e.value for e in at.error)
    at.selectbox(key="doc_pick").set_value(value).run()
    at.button(key="delete").click().run()  # asks first (issue 25): nothing is deleted yet
    assert any("Delete locked.pdf?" in w.value for w in at.warning) and len(_table(at)) == 3
    at.button(key="cancel-delete").click().run()
    assert len(_table(at)) == 3 and not any("Delete locked.pdf?" in w.value for w in at.warning)
    at.button(key="delete").click().run()
    at.button(key="confirm-delete").click().run()
    assert any("locked.pdf: deleted" in i.value for i in at.info)
    assert list(_table(at)["document"]) == [MD_NAME, PDF_NAME]


@pytest.mark.slow
def test_oversize_upload_is_refused_before_indexing(indexed, monkeypatch):
    monkeypatch.setenv("RAG_MAX_UPLOAD_MB", "1")
    at = _app(DOCS_PAGE).run()
    assert any("1 MB" in c.value for c in at.caption)
    big = b"# Big\n\n" + b"word " * 300_000  # 1.5 MB
    at.file_uploader(key="uploader").set_value([("big.md", big, "text/markdown")]).run()
    assert any("big.md: refused" in e.value and "over the 1 MB limit" in e.value for e in at.error)
    assert len(_table(at)) == 2


@pytest.mark.slow
def test_hostile_file_name_and_content_are_escaped(indexed):
    at = _app(DOCS_PAGE).run()
    payload = b"# Notes\n\n<script>alert('x')</script> **not bold** [link](javascript:alert(1))\n"
    at.file_uploader(key="uploader").set_value([("<img src=x onerror=alert(1)>.md", payload, "text/markdown")]).run()
    msgs = [s.value for s in at.success]
    assert any(m.startswith("&lt;img src=x onerror=alert(1)>.md: indexed") for m in msgs), msgs
    _no_raw_html(at)
    at.selectbox(key="doc_pick").set_value(hashlib.sha256(payload).hexdigest()).run()
    at.button(key="delete").click().run()
    _no_raw_html(at)  # the question names the file, escaped
    at.button(key="confirm-delete").click().run()
    assert len(_table(at)) == 2


@pytest.mark.slow
def test_refusal_shows_no_answer_and_never_calls_the_model(indexed):
    from rag.answer import generate

    loads, gens = generate.STATS.loads, generate.STATS.generations
    at = _app(APP).run()
    assert not at.exception
    at.chat_input(key="question").set_value(OFF_TOPIC).run()
    assert not at.exception
    reply = at.chat_message[1]
    assert reply.name == "assistant"
    assert not reply.error  # a refusal is no failure: not red (issue 29)
    assert "No answer: your documents do not seem to say this" in reply.info[0].value
    # in plain words what the user can do; the gate's line and evidence under "Details"
    captions = [c.value for c in reply.caption]
    assert captions[0].startswith("Searched all 2 documents")  # what was searched (issue 39, Deliver 3)
    assert any(c.startswith("If you think they do") for c in captions)
    captions = [c.value for c in reply.caption]
    assert f'The gate: NO ANSWER: nothing under cosine distance 0.675 for "{OFF_TOPIC}" (the model was not called)' \
        in captions
    assert any(c.startswith("The gate's evidence: ") for c in captions)
    nearest = reply.dataframe[0].value
    assert len(nearest) > 0 and (nearest["cosine distance"] >= 0.675).all()
    assert (generate.STATS.loads, generate.STATS.generations) == (loads, gens)
    # the conversation survives a rerun
    at.run()
    assert [m.name for m in at.chat_message] == ["user", "assistant"]
    assert at.chat_message[0].markdown[0].value == OFF_TOPIC
    _no_raw_html(at)


@pytest.mark.slow
def test_slider_flips_the_same_question_from_refused_to_answered(indexed):
    """At a tiny threshold the PDF question is refused; raising the slider flips the gate, and asking
    again at the new threshold gives an answer with linked citations (the real 0.5B model)."""
    at = _app(APP).run()
    at.slider(key="threshold").set_value(0.05).run()
    at.chat_input(key="question").set_value(PDF_QUESTION).run()
    assert any("NO ANSWER: nothing under cosine distance 0.05" in c.value for c in at.chat_message[1].caption)
    verdicts = [m.value for m in at.sidebar.markdown]
    assert any("refused" in v for v in verdicts), verdicts
    assert at.sidebar.get("arrow_vega_lite_chart") or at.sidebar.get("vega_lite_chart")  # the distance chart
    at.slider(key="threshold").set_value(0.675).run()
    verdicts = [m.value for m in at.sidebar.markdown]
    # answered, or (issue 15) "mention this but may not answer it" with its sources: either way no longer refused
    assert any(re.search(r"(answered\*\* from|may not answer it\*\*: .*, ) ?[1-4] source", v) for v in verdicts), verdicts

    _llm_or_skip()
    at.button(key="reask").click().run()
    assert not at.exception, at.exception
    assert [m.name for m in at.chat_message] == ["user", "assistant"] * 2
    reply = at.chat_message[3]
    assert not reply.error, [e.value for e in reply.error]
    texts = [m.value for m in reply.markdown]
    # the sources: [n] and locator label, "Open [n]" (the app's viewer), the viewer in a new tab and the
    # browser's own PDF viewer as secondary links, the verbatim quote; [1] in the answer jumps to its row
    assert any(re.search(r"\[new tab ↗\]\(/Source\?doc=[0-9a-f]{64}&chunk=\d+&start=\d+&end=\d+&n=1&page=\d+\)", t)
               for t in texts), texts
    # the secondary link: the PDF's served copy, a capability of this collection and publication (issue 26)
    assert any(re.search(r"\[PDF at page \d+ ↗\]\(/app/static/[0-9a-f]{32}/[0-9a-f]{32}\.pdf#page=\d+\)", t)
               for t in texts), texts
    assert any("](#src-t1-1" in t for t in texts), texts  # the link also carries its preview as a title (issue 42)
    assert "Open [1]" in [b.label for b in reply.button]
    assert not any("cosine distance" in t for t in texts), texts  # the figures are in Details
    assert "cosine distance" in reply.dataframe[0].value.columns
    assert any(t.startswith("> ") for t in texts), texts
    # issue 14 and 42: the model's checked claims, each linked to the source that supports it (shown once,
    # without the key passage above them), or the key passage (verbatim, linked) with the note that it stands
    answer = [t for t in texts if t.startswith("**Answer**")]
    assert answer or (texts[0].startswith("**Key passage** [\\[") and "\n\n> " in texts[0]), texts[0]
    assert (answer and "[\\[" in answer[0]) or any("stands as the answer" in i.value for i in reply.info), texts
    from rag.settings import get_settings

    static = get_settings().static_dir
    for served in set(re.findall(r"/app/static/([0-9a-f]{32}/[0-9a-f]{32}\.pdf)#page=", "\n".join(texts))):
        assert (static / served).is_file()  # every linked PDF is published for static serving
    _no_raw_html(at)
    # the first turn (refused) is still there, unchanged
    assert "No answer" in at.chat_message[1].info[0].value
    # the in-app preview of [1] renders without error (AppTest does not expose dialog contents;
    # tests/test_browser.py looks at the dialog's image)
    at.button(key="preview-t1-1").click().run()
    assert not at.exception, at.exception


@pytest.mark.slow
def test_source_page_highlights_a_text_range(indexed, corpus_dir):
    md_id = hashlib.sha256((corpus_dir / "docs" / MD_NAME).read_bytes()).hexdigest()
    src = _app(SOURCE_PAGE)
    src.query_params.update({"doc": md_id, "start": "10", "end": "40", "n": "2"})
    src.run()
    assert not src.exception
    assert src.title[0].value == MD_NAME
    assert any("characters 10–40" in m.value and "\\[2\\]" in m.value for m in src.markdown)
    src = _app(SOURCE_PAGE)
    src.query_params.update({"doc": md_id, "start": "10", "end": "99999999"})
    src.run()
    assert any("outside this document" in e.value for e in src.error)


@pytest.mark.slow
def test_store_is_shared_and_not_reembedded_on_rerun(indexed):
    """Reruns and a second session reuse the one cached store: no chunk is embedded again."""
    from ui import services  # noqa: F401  (imported by the pages; cache lives in this process)

    at = _app(DOCS_PAGE).run()
    count = len(_table(at))
    calls = []
    import rag.index.embed as embed

    orig = embed.Embedder.encode

    def spy(self, texts, **kw):
        calls.append(len(texts))
        return orig(self, texts, **kw)

    embed.Embedder.encode = spy
    try:
        at.run()
        _app(DOCS_PAGE).run()  # a second browser session
    finally:
        embed.Embedder.encode = orig
    assert calls == [] and len(_table(at)) == count
    assert os.environ["RAG_STORE"]


# ------------------------------------------------------------------ ui.format: pure, fast


def _cite(index, media_type="application/pdf", page=3, start=0, end=10):
    from rag.answer.cite import Citation

    return Citation(index=index, document_id="ab" * 32, document_name="p.pdf", locator_label="p.pdf, p. 3",
                    fragment=f"#page={page}", quote="q", cosine_distance=0.3, fused_rank=index, page=page,
                    start=start, end=end, media_type=media_type, chunk_id=index)


def test_answer_links_markers_and_escapes_model_text():
    from ui.format import answer_markdown

    pdf, md = _cite(1), _cite(2, "text/markdown", None, 5, 42)
    out = answer_markdown('Uses <img src=x onerror=alert(1)> and $x$ **b** [1], also [2][9].', None, [pdf, md])
    assert "[\\[1\\]](/Source?doc=" + "ab" * 32 + "&chunk=1&start=0&end=10&n=1&page=3)" in out
    assert "[\\[2\\]](/Source?doc=" + "ab" * 32 + "&chunk=2&start=5&end=42&n=2)" in out
    assert "9" not in out  # [9] has no source: dropped, never shown as a link
    assert "&lt;img" in out and "<img" not in out and "\\$x\\$" in out and "\\*\\*b\\*\\*" in out
    assert answer_markdown("See [1].", None, [pdf], {1: 7}).endswith("&page=7).")  # best page override
    from ui.format import pdf_url

    served = "/app/static/" + "0" * 32 + "/" + "f" * 32 + ".pdf"
    assert pdf_url(pdf, served) == served + "#page=3" and pdf_url(pdf, served, 7) == served + "#page=7"
    assert pdf_url(pdf, None) is None and pdf_url(md, served) is None


def test_unsupported_and_inferred_sentences_are_marked():
    from rag.answer.check.attribute import SentenceAttribution
    from ui.format import answer_markdown

    sents = [
        SentenceAttribution("Paris is in France [1].", (1,), (), True, False),
        SentenceAttribution("DPR uses dot products.", (), (1,), False, True),
    ]
    out = answer_markdown("", sents, [_cite(1)])
    assert out.startswith(":orange-background[⚠️ Paris is in France.]")
    assert "(unsupported" in out
    assert "DPR uses dot products [\\[1\\]](/Source?doc=" in out and "*(source found by the app)*" in out
    assert "inferred" not in out  # issue 39: plain words, not the claim check's code


def test_echoes_never_carry_a_citation_and_left_out_sentences_say_why():
    """Issue 14: a sentence that restates the question is shown (if at all) without any [n] link."""
    from rag.answer.check.attribute import attribute, lexical_support
    from ui.format import answer_markdown, removed_markdown

    q = "What is the risk of using a lower beta in GRPO?"
    sents = ["The risk of using a lower beta in GRPO is [1].", "A lower beta in GRPO is risky [1].",
             "A lower beta lets the policy drift from the reference model [1]."]
    quotes = ["With a lower beta the policy can drift further from the reference model."]
    att = attribute(sents, [1], lexical_support(sents, quotes, q), question=q, quotes=quotes)
    assert [a.verdict for a in att] == ["dangling", "unsupported", "supported"]
    out = answer_markdown(" ".join(sents), att, [_cite(1)])
    first, second = out.split("(points at a source without saying what it says)")[0], out
    assert "[\\[1\\]]" not in first and "The risk of using a lower beta in GRPO is" in first
    assert second.count("[\\[1\\]]") == 1  # only the supported claim links its source
    left = removed_markdown(att[:2])
    assert left.startswith("- The risk of using a lower beta in GRPO is. :gray[*(points at a source without saying what it says")
    assert "[1]" not in left and "\\[" not in left


def test_key_passage_markdown_links_its_source_and_quotes_verbatim():
    from rag.answer.key_passage import KeyPassage, KeySentence
    from ui.format import key_passage_markdown

    kp = KeyPassage((KeySentence(1, "Scores use *dot* products.", 0, 26, "p.pdf, p. 3", 1.0),), 0.4,
                    "Scores use *dot* products.")
    md = key_passage_markdown(kp, [_cite(1)], {1: 4})
    assert md.startswith("**Key passage** [\\[1\\]](/Source?doc=" + "ab" * 32) and ") p.pdf, p. 3\n\n> " in md
    assert md.endswith("> Scores use \\*dot\\* products.")
    assert key_passage_markdown(KeyPassage(()), [_cite(1)]) == ""


def test_a_key_passage_of_a_table_shows_its_rows_under_their_column_names():
    """A piece of a wide CSV row, cut mid-row, was shown as bare cells ("KEN | 254 | KEN | ..."): now as a table
    of the columns it fills, cells verbatim (a walk over a 56-column CSV, 2026-12-07)."""
    from dataclasses import replace

    from rag.answer.key_passage import KeyPassage, KeySentence
    from ui.format import key_passage_markdown

    quote = "254 | Kenya | Nai*robi* |\n| MLI | 223 | Mali | Bamako |"
    cite = replace(_cite(1, "text/csv", None, 0, len(quote)), quote=quote, columns=("Code", "Dial", "Name", "Capital"),
                   first_column=1)
    kp = KeyPassage((KeySentence(1, quote[:25], 0, 25, "c.csv, row 3", 1.0),), 0.4, quote[:25])
    md = key_passage_markdown(kp, [cite])
    assert md.endswith("| Dial | Name | Capital |\n|---|---|---|\n| 254 | Kenya | Nai\\*robi\\* |")
    both = KeyPassage((KeySentence(1, quote, 0, len(quote), "c.csv, rows 3-4", 1.0),), 0.4, quote)
    assert key_passage_markdown(both, [cite]).endswith(
        "| Code | Dial | Name | Capital |\n|---|---|---|---|\n|   | 254 | Kenya | Nai\\*robi\\* |\n| MLI | 223 | Mali | Bamako |")
    prose = replace(cite, columns=())  # no column names: quoted as before
    assert key_passage_markdown(kp, [prose]).endswith("> 254 \\| Kenya \\| Nai\\*robi\\* \\|")


def test_blockquote_keeps_lines_and_escapes():
    from ui.format import blockquote

    assert blockquote("a [x](javascript:y)\n\nb") == "> a \\[x\\](javascript:y)\n>\n> b"
    # GFM autolinks broken up (issue 26): escapes, and a WORD JOINER, since Streamlit's renderer links URLs after
    # escapes are resolved (a quoted https://... was a live link in the chat, seen in the browser)
    assert blockquote("see www.evil.example or https://evil.example/x") == (
        "> see www\u2060\\.evil.example or https\\:\u2060//evil.example/x")


def test_blockquote_sets_what_the_model_read_in_bold():
    from ui.format import blockquote

    text = "First one. Second *one*\ncontinues here. Third."
    a = text.index("Second")
    b = text.index("here.") + len("here.")
    assert blockquote(text, [(a, b)]) == "> First one. **Second \\*one\\***  \n> **continues here.** Third."
    assert blockquote(text, [(0, len(text))]).count("**") == 4  # one bold run per line
    # a form's "1. BRANCH" lines are its text, not a list numbered 1 and 2 (the browser check, 2026-12-07)
    # and each line stays its own line (a hard break), not run into one paragraph with the next
    assert blockquote("1. BRANCH – ARMY: No\n1. BRANCH – NAVY: Yes\n- a dash\n\nNext") == (
        "> 1\\. BRANCH – ARMY: No  \n> 1\\. BRANCH – NAVY: Yes  \n> \\- a dash\n>\n> Next")


def test_answer_keeps_the_models_lines_and_list_items():
    """Seen in the app: 'This optimization:\\n- Reduces ...\\n- Improves ...' was run together into one line."""
    from types import SimpleNamespace

    from rag.answer.check.attribute import split_sentences
    from ui.format import answer_markdown

    text = ("KV caching stores intermediate results [1]. This optimization:\n- Reduces repeated calculations [1]\n"
            "- Improves speed\nThe trade-off is memory.")
    sents = [SimpleNamespace(text=t, cited=(1,) if "[1]" in t else (), supported_by=(1,), unsupported=False,
                             inferred="[1]" not in t) for t in split_sentences(text)]
    cite = SimpleNamespace(index=1, media_type="text/markdown", page=None, document_id="d", start=0, end=5)
    md = answer_markdown(text, sents, [cite])
    body, after = md.split("\n\n")  # a blank line ends the list before the next plain line
    assert after.startswith("The trade-off is memory.")
    lines = body.split("  \n")
    assert len(lines) == 3 and lines[1].startswith("- Reduces") and lines[2].startswith("- Improves")
    assert lines[0].startswith("KV caching stores intermediate results") and "This optimization:" in lines[0]


def test_answer_notes_explain_inferred_citations():
    """A first-time user saw "(inferred)" after a sentence with no word of explanation (tryout 2026-11-30):
    the caption under the answer says what it means whenever a shown sentence carries it."""
    from types import SimpleNamespace

    from rag.answer.check.attribute import SentenceAttribution
    from ui.format import answer_notes

    inferred = SentenceAttribution("DPR uses dot products.", (), (1,), False, True)
    cited = SentenceAttribution("DPR uses dot products [1].", (1,), (1,), False, False)
    base = dict(invalid_citations_removed=0, model="m-q4_k_m.gguf", ttft_ms=1500.0)

    def shown(*sentences):
        return SimpleNamespace(judged=SimpleNamespace(shown=sentences, removed=()), **base)

    notes = answer_notes(shown(inferred, cited))
    assert any("1 sentence marked (source found by the app)" in n and "the app found the source" in n
               for n in notes)
    # plain text, escaped once by the page that shows it (it was escaped twice: "q4\\_k\\_m" on screen)
    assert notes[-2:] == ["model m-q4_k_m.gguf", "first token 1.5 s"]
    assert not any("found by the app" in n for n in answer_notes(shown(cited)))


def test_a_left_out_sentence_stays_in_place_struck_through_with_why():
    """Issue 39: "a correct ten-sentence how-to streamed for about 80 s and was then replaced by a two-line
    fragment". The chat's answer keeps every sentence the model wrote in its place; the ones the claim check left
    out are struck through, carry no [n] link and say why."""
    from rag.answer.check.attribute import SentenceAttribution
    from ui.format import answer_markdown

    first = SentenceAttribution("Full-time staff get 28 days [1].", (1,), (1,), False, False)
    wrong = SentenceAttribution("Part-time staff get 40 days [1].", (1,), (), True, False)
    last = SentenceAttribution("Leave is counted per year [1].", (1,), (1,), False, False)
    sents = [first, wrong, last]
    out = answer_markdown(" ".join(s.text for s in sents), sents, [_cite(1)], left_out=[wrong])
    struck = ":gray[~~Part-time staff get 40 days.~~ *(left out: not supported by the sources)*]"
    assert struck in out
    assert out.index("28 days") < out.index(struck) < out.index("counted per year")
    assert out.count("[\\[1\\]]") == 2  # the two supported claims link their source, the struck one does not
    # without left_out the same sentence is the orange "unsupported" mark: only the caller's list strikes it
    assert "~~" not in answer_markdown(" ".join(s.text for s in sents), sents, [_cite(1)])


def test_the_streaming_line_says_the_words_are_checked_when_the_answer_ends():
    """Issue 39: the streamed words were read as the answer, then sentences vanished; the line under them says they
    are a draft until checked."""
    from ui.chat import writing_line

    line = writing_line(1, 2.4)
    assert line.startswith("Writing the answer: 1 word so far · 2 s") and "checked against its source" in line


def test_a_bare_marker_left_out_is_not_flagged_as_a_sentence():
    """A "sentence" of bare markers ("[1] [2].") says nothing a reader could have taken in: no struck-through
    stub is drawn for it."""
    from rag.answer.check.attribute import SentenceAttribution
    from ui.format import answer_markdown

    claim = SentenceAttribution("Full-time staff get 28 days [1].", (1,), (1,), False, False)
    bare = SentenceAttribution("[1] [2].", (1,), (), False, False, claim=False)
    out = answer_markdown(claim.text + " " + bare.text, [claim, bare], [_cite(1)], left_out=[bare])
    assert "left out" not in out and out.startswith("Full-time staff get 28 days")


def test_a_markers_hover_card_quotes_the_sentence_its_claim_rests_on():
    """Noted at stop 47: a [n]'s hover card quoted the chunk's first words, not the sentence the claim rests on. Each
    claim's [n] now previews the source from its sentence that shares the most words with the claim."""
    from rag.answer.check.attribute import SentenceAttribution
    from ui.format import answer_markdown, preview_text

    c = _cite(1)  # "Full-time staff get 28 days of annual leave.\nPer year."
    c = c.__class__(**{**c.__dict__, "quote": "Leave is booked in the portal. Full-time staff get 28 days of annual "
                                               "leave. Part-time staff get a share."})
    s = SentenceAttribution("Full-time staff get 28 days of annual leave [1].", (1,), (1,), False, False)
    out = answer_markdown(s.text, [s], [c], anchor="t")
    assert "Full\\-time staff get 28 days" in out.split("](#t-1 ", 1)[1]  # the card starts at the claim's sentence
    assert "Leave is booked" not in out
    assert preview_text(c).split("\n")[1].startswith("“Leave is booked")  # no claim: the quote's own start
    assert preview_text(c, claim=s.text).split("\n")[1].startswith("“… Full-time staff")


def test_a_code_block_in_an_answer_is_shown_as_code_with_its_citation_after_it():
    """A new user's answer (2026-12-06) printed "```bash" as text and the command as a plain line: the chat shows
    a fenced block as a code block (nothing in it read as Markdown), its [n] link on the line after it."""
    from rag.answer.check.attribute import attribute, lexical_support, split_sentences
    from ui.format import answer_markdown

    raw = "Use this command:\n```bash\ndotnet new web <b>x</b>\n```\nIt creates a web app [1]."
    pieces = split_sentences(raw)
    quotes = ["Using the CLI: dotnet new web <b>x</b> creates a web app."]
    att = attribute(pieces, [1], lexical_support(pieces, quotes, None), quotes=quotes)
    md = answer_markdown(raw, att, [_cite(1, media_type="text/markdown")])
    assert "\n\n```bash\ndotnet new web <b>x</b>\n```\n\n[\\[1\\]]" in md
    assert md.split("```\n\n")[1].split("\n\n")[1].startswith("It creates a web app")


def test_an_answer_whose_every_source_the_app_found_says_so_once():
    """Two new users' walks (2026-12-06): "(source found by the app)" after nearly every sentence was noise. When
    every claim shown had its source attached by the app, the answer says so once, under it; a mix keeps the marks."""
    from rag.answer.check.attribute import ClaimVerdict, SentenceAttribution
    from ui.format import ALL_ATTACHED, answer_markdown

    def inferred(text: str) -> SentenceAttribution:
        return SentenceAttribution(text, (), (1,), False, True, verdict=ClaimVerdict.INFERRED)

    both = [inferred("DPR uses dot products."), inferred("It encodes passages once.")]
    out = answer_markdown("", both, [_cite(1)])
    assert "*(source found by the app)*" not in out and out.endswith(f":gray[*({ALL_ATTACHED})*]")
    assert out.count("[\\[1\\]](/Source?doc=") == 2  # each sentence still links its source
    cited = SentenceAttribution("DPR uses dot products [1].", (1,), (1,), False, False, verdict=ClaimVerdict.SUPPORTED)
    mixed = answer_markdown("", [cited, both[1]], [_cite(1)])
    assert mixed.count("*(source found by the app)*") == 1 and ALL_ATTACHED not in mixed


def test_left_out_sentences_are_counted_once_and_in_plain_words():
    """Found in Chromium (2026-12-06): where the key passage stood in, the expander "The model's answer, left out by
    the claim check (1 sentence)" and the caption "1 sentence(s) of the model left out ..." said the same thing."""
    from types import SimpleNamespace

    from rag.answer.check.attribute import SentenceAttribution
    from rag.answer.check.judged import AnswerFrom
    from ui.format import answer_notes

    gone = SentenceAttribution("It is blue [1].", (1,), (), False, False)
    kept = SentenceAttribution("DPR uses dot products [1].", (1,), (1,), False, False)

    def answer(frm, shown, removed):
        return SimpleNamespace(judged=SimpleNamespace(shown=shown, removed=removed, answer_from=frm),
                               invalid_citations_removed=0, model=None, ttft_ms=None)

    assert answer_notes(answer(AnswerFrom.MODEL, (kept,), (gone,))) == [
        "1 sentence of the model left out by the claim check (struck through above)"]
    assert answer_notes(answer(AnswerFrom.MODEL, (kept,), (gone, gone)))[0].startswith("2 sentences of the model")
    assert answer_notes(answer(AnswerFrom.KEY_PASSAGE, (), (gone,))) == []
