"""The verdict line above an answer (ui.format, issue 24): one label per verdict, the reason escaped."""

from __future__ import annotations

from rag.answer.check.judged import Judged
from rag.types import AnswerVerdict
from ui.format import VERDICT_STYLE, verdict_markdown


def test_every_verdict_has_a_box_and_a_plain_label():
    assert set(VERDICT_STYLE) == {str(v) for v in AnswerVerdict}
    assert VERDICT_STYLE["supported"][0] == "success"
    assert VERDICT_STYLE["refused"][0] == "info"  # issue 29: red is for failures, and a refusal is not one
    md = verdict_markdown(Judged(AnswerVerdict.PARTLY_SUPPORTED, "1 of 2 claims passed the check; *the* others"))
    assert md == "**Partly supported** · 1 of 2 claims passed the check; \\*the\\* others."
    assert verdict_markdown(Judged(AnswerVerdict.SUPPORTED, "")) == "**Supported**"


def test_every_verdict_icon_is_one_streamlit_accepts():
    """'◐' raised StreamlitAPIException on every partly supported answer (issue 29's walk); the emoji for
    'refused' drew as an empty box in headless Chromium. Streamlit's own check accepts every icon."""
    from streamlit.string_util import validate_icon_or_emoji

    for box, icon in VERDICT_STYLE.values():
        assert validate_icon_or_emoji(icon) and box in ("success", "warning", "info", "error")



def test_a_citation_preview_is_its_locator_and_quote_and_cannot_break_out_of_its_link():
    """Issue 42: a ``[n]`` previews its source on hover and focus (the link's title). A quote holding quotes,
    brackets, a blank line or markup stays characters inside the title: the link keeps its one target."""
    from types import SimpleNamespace

    from ui.format import link_title, marker_link, preview_text

    c = SimpleNamespace(locator_label="guide.md > Install", quote='He said "stop") [2](http://x) *b*\n\nnext ' + "w" * 400)
    text = preview_text(c)
    assert text.startswith("guide.md > Install\n“He said") and text.endswith("…”") and len(text) < 330
    title = link_title(text)
    assert title.startswith('"') and title.endswith('"') and "\n\n" not in title
    body = title[1:-1]
    assert '\\"stop\\"\\)' in body and "\\[2\\]\\(http\\:\\/\\/x\\)" in body and "\\*b\\*" in body
    assert marker_link(1, "#src-t0-1", text) == f"[\\[1\\]](#src-t0-1 {title})"
    assert marker_link(1, "#src-t0-1") == "[\\[1\\]](#src-t0-1)"


def test_details_say_which_source_the_nearest_distance_is():
    """Issue 42: Details said "nearest distance 0.314" while the table showed 0.330 for source [1]."""
    from types import SimpleNamespace

    from ui.format import nearest_note

    cites = [SimpleNamespace(index=1, cosine_distance=0.3301), SimpleNamespace(index=2, cosine_distance=0.3142)]
    note = nearest_note(0.3142, cites)
    assert "(0.314) is source [2]'s" in note and "order" in note
    assert nearest_note(0.3301, cites) == ""  # [1] is the nearest: nothing to explain
    assert "not among the sources shown" in nearest_note(0.2, cites)
    assert nearest_note(None, cites) == "" and nearest_note(0.3, []) == ""


def test_a_key_ending_in_a_full_stop_keeps_it_before_its_citation_in_the_chat():
    """A new user's walk (2026-12-06): the chat showed "ctrl-r and alt- [2]." for the guide's "alt-."."""
    from rag.answer.check.attribute import ClaimVerdict, SentenceAttribution
    from ui.format import sentence_markdown

    s = SentenceAttribution(text="Use ctrl-r and alt-. [2]", cited=(2,), supported_by=(2,), unsupported=False,
                            inferred=False, verdict=ClaimVerdict.SUPPORTED)
    md = sentence_markdown(s, {2: "/view?d=1"})
    assert md == "Use ctrl-r and alt-. [\\[2\\]](/view?d=1)"
    plain = SentenceAttribution(text="A chunk is a passage [2].", cited=(2,), supported_by=(2,), unsupported=False,
                                inferred=False, verdict=ClaimVerdict.SUPPORTED)
    assert sentence_markdown(plain, {2: "/view?d=1"}).endswith(").")
