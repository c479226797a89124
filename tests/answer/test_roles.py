"""Unit roles (rag.ingest.unit_roles, read by rag.answer.roles; issue 24 item 2, issue 36 item 3): what never
stands as the answer, and what must always stay body text (the rules are narrow on purpose)."""

from __future__ import annotations

import pytest

from rag.answer.excerpt import answer_view
from rag.answer.roles import SUPPORTING, non_answer_spans, repeated_lines, source_units
from rag.ingest.unit_roles import chunk_unit_roles, unit_role
from rag.types import TextRole


def _roles(text: str, **kw) -> list[tuple[str, str]]:
    return [(str(u.role), text[u.start:u.end]) for u in source_units(text, **kw)]


@pytest.mark.parametrize("line, role", [
    ("Next: Invoking tar, Previous: Introduction, Up: Top   [Contents][Index]", "navigation"),
    ("« Previous | Next »", "navigation"),
    ("Home > Guides > Installation", "navigation"),
    ("Back to top", "navigation"),
    ("2.1 Boiling the water . . . . . . . . 15", "toc"),
    ("Introduction ........................ 3", "toc"),
    ("12 / 40", "furniture"),
    ("Page 3 of 9", "furniture"),
    ("Jane Roe (Example University)   BSD Tales   Saturday, October 10, 2015", "furniture"),
    ("NetBSD", "heading"),
    ("Why Version Control Matters", "heading"),
])
def test_units_that_never_answer(line, role):
    assert str(unit_role(line)) == role


@pytest.mark.parametrize("line", [
    "Next inspection due: September 2027",                       # a form's label and value (c27)
    "- March 3, 2024: version 2 released with the new parser",    # a list item holding a date
    "The results are listed in the appendix on page 3.",
    "U.S. Government revenue grew by 12 percent in 2023, according to the report.",
    "1. Use SSH keys from your account settings to push.",        # a numbered step
    "| Hidden Size | 896 | 1,536 |",                               # a table row
    "|---|---|---|",                                              # its separator
    "- 2-bit and 3-bit quantization",                             # a short list item
    "Longformer and Reformer use a sparse version of the attention matrix (Beltagy et al., 2020).",
    "A device is essentially a server whose only client is the host.",
])
def test_body_text_stays_body(line):
    assert unit_role(line) == TextRole.BODY, line


def test_a_footer_glued_to_the_last_bullet_is_its_own_unit():
    """Beamer slides come out as lines with no blank line before the footer: the footer is split off."""
    text = "Branches\n\nA branch is a movable pointer to a commit\nJane Roe   Git and GitHub   October 2023   7 / 40"
    roles = _roles(text)
    assert ("furniture", "Jane Roe   Git and GitHub   October 2023   7 / 40") in roles
    assert ("body", "A branch is a movable pointer to a commit") in roles


def test_a_line_repeated_in_two_sources_is_furniture_but_a_table_header_is_not():
    a = "Intro slide text here.\nBSD Tales - Jane Roe\n| Model | Size |\n|---|---|\n| A | 1 |"
    b = "Other slide text here.\nBSD Tales - Jane Roe\n| Model | Size |\n|---|---|\n| B | 2 |"
    rep = repeated_lines([a, b])
    assert rep == {"bsd tales - jane roe"}
    roles = dict((t, r) for r, t in _roles(a, repeated=rep))
    assert roles["BSD Tales - Jane Roe"] == "furniture" and roles["| Model | Size |"] == "body"


def test_a_stored_role_covers_the_whole_chunk():
    text = "Smith and Jones describe sparse attention."
    assert {r for r, _ in _roles(text, role=TextRole.REFERENCES)} == {"references"}
    assert {r for r, _ in _roles(text, role=TextRole.FURNITURE)} == {"furniture"}
    assert {r for r, _ in _roles(text, role="body")} == {"body"}


def test_reference_entries_are_decided_at_ingest_only():
    """Issue 36, item 3: a reference entry in a body chunk is body at answer time (ingest decides reference lists,
    the joined entries of a PDF's list included: tests/ingest/test_roles_entries.py)."""
    entry = "[12] A. Smith and B. Jones. Attention over long texts. In Proc. ACL, pp. 10-20, 2019."
    assert "references" not in {r for r, _ in _roles(entry)}
    assert {r for r, _ in _roles(entry, role=TextRole.REFERENCES)} == {"references"}


def test_views_keep_offsets_and_headings_support_claims():
    text = "NetBSD\n\nNetBSD is a portable Unix-like system.\n\n12 / 40"
    view, skipped = answer_view(text)
    assert len(view) == len(text) and view.strip() == "NetBSD is a portable Unix-like system."
    assert [text[a:b] for a, b in skipped] == ["NetBSD", "12 / 40"]
    support, _ = answer_view(text, keep=SUPPORTING)
    assert support.split() == ["NetBSD", "NetBSD", "is", "a", "portable", "Unix-like", "system."]
    assert non_answer_spans(text) == skipped


def test_the_course_chapters_are_almost_all_body(corpus_dir):
    """The rules are narrow: over the 13 course chapters (prose, tables, lists, code) they take no prose
    sentence; what they take is code fences, short code lines, one-word lines and the chapter's link list."""
    from rag.ingest.chunk import chunk_document
    from rag.ingest.extract import extract_bytes

    taken = []
    for p in sorted((corpus_dir / "docs").glob("*.md")):
        for c in chunk_document(extract_bytes(p.read_bytes(), p.name), "E"):
            taken += [c.content[u.start:u.end] for u in source_units(c.content)
                      if u.role not in (TextRole.BODY, TextRole.HEADING)]
    assert len(taken) <= 12, taken
    prose = [t for t in taken if t.rstrip().endswith(".") and len(t.split()) >= 6]
    assert prose == []


NAVIGATION = ["Next: Invoking tar, Previous: Introduction, Up: Top   [Contents][Index]", "« Prev | Home | Next »",
              "Prev | Home | Next", "Home > Guides > Installation", "Home » Products » Widgets » Install", "Back to top",
              "Jump to navigation Jump to search"]
#: Lines of the dev corpora that one of the two former rule sets took for navigation (issue 36, defect C).
NOT_NAVIGATION = ["4. **Top-k Filtering**: An alternative approach where we only consider the k most likely next words",
                  "teal: HDC functionality / red: data flow / green: application specific",
                  "Next, build the index up from the top.", "Scroll up to the top of the index and go back home"]


def test_one_navigation_rule_for_ingest_and_answer():
    """Issue 36, item 3: ingest tags navigation paragraphs and the answer layer judges a source's units with the same
    word list and rule (they had two lists that disagreed)."""
    from rag.ingest.roles import is_navigation
    from rag.ingest.unit_roles import navigation_like

    assert [line for line in NAVIGATION if not (is_navigation(line) and navigation_like(line))] == []
    assert [line for line in NOT_NAVIGATION if is_navigation(line) or navigation_like(line)] == []


def test_the_answer_layer_judges_only_lines_repeated_across_sources():
    """Issue 36, item 3: every role a chunk's own text tells is ingest's (rag.ingest.unit_roles); the answer layer adds
    the lines another source repeats, and nothing else: with no repeated line its units are ingest's, unit for unit,
    and rag/answer/roles.py compiles no pattern of its own."""
    import inspect

    import rag.answer.roles as answer_roles

    text = ("Version Control\nA branch is a movable pointer to a commit.\nBSD Tales - Jane Roe\n"
            "Contents\n1 Intro 3\n2 Setup 5\n3 Use 9\nNext: Usage, Previous: Install, Up: Top\n12 / 40")
    assert source_units(text) == chunk_unit_roles(text)
    rep = repeated_lines([text, "Other slide.\nBSD Tales - Jane Roe"])
    assert dict((t, r) for r, t in _roles(text, repeated=rep))["BSD Tales - Jane Roe"] == "furniture"
    assert dict((t, r) for r, t in _roles(text))["BSD Tales - Jane Roe"] != "furniture"
    assert "re.compile" not in inspect.getsource(answer_roles) and "import re" not in inspect.getsource(answer_roles)
