"""The verdict line above an answer (ui.format, issue 24): one label per verdict, the reason escaped."""

from __future__ import annotations

from rag.answer.verdict import Judged
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

