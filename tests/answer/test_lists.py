"""A list item read with the lines that introduce it, and a sentence joining list items read part by part
(rag.answer.check.lists, rag.answer.check.list_parts; issue 39, Deliver 4: "items of a list are checked as parts
of their list")."""

from __future__ import annotations

import pytest

from rag.answer.check.attribute import ClaimVerdict, attribute, lexical_support
from rag.answer.check.claims import statements
from rag.answer.check.lists import list_lead, parts

#: docx4j's Getting Started (its DOCX as the product reads it: a lead-in paragraph, a blank line, a nested list).
DOCX4J = ("We recommend you adopt the 11.4 series if possible:\n\n"
          "- Changes are made to this release series first, and may or may not be back-ported\n"
          "- It supports the recent Java long term releases:\n"
          "  - Java 11 (released Sept 2018)\n"
          "  - Java 17 (released Sept 2021), (as well as the non LTS versions after Java 11)")
QUESTION = "Which Java versions does the docx4j 11.4 series support?"


def test_a_list_item_is_read_with_its_lead_in_across_a_blank_line_and_with_its_parent_item():
    """The lead-in paragraph stood above a blank line, so no item was read with it; a nested item is also read with
    the parent item that introduces it. Another list above a blank line, or a paragraph not ending in a colon, is no
    lead-in."""
    ctx = {DOCX4J[s.start:s.end].strip(): s.context for s in statements(DOCX4J)}
    assert ctx["- Java 11 (released Sept 2018)"] == ("We recommend you adopt the 11.4 series if possible:\n"
                                                     "- It supports the recent Java long term releases:\n"
                                                     "- Java 11 (released Sept 2018)")
    assert ctx["- Changes are made to this release series first, and may or may not be back-ported"].startswith("We recommend")
    two = "Fruit:\n\n- apple\n- pear\n\n\n- carrot"
    assert list_lead(two, two.index("- pear")) == "Fruit:" and list_lead(two, two.index("- carrot")) == ""
    prose = "Some text.\n\n- apple\n- pear"
    assert list_lead(prose, prose.index("- pear")) == ""


def test_a_sentence_is_cut_into_parts_outside_brackets():
    s = "It supports Java 11 (2018, LTS) and Java 17 (2021); Java 8, or Java 9 [1]."
    assert [s[a:b].strip() for a, b in parts(s)] == ["It supports Java 11 (2018, LTS)", "Java 17 (2021)", "Java 8,",
                                                      "Java 9 [1]."]
    assert parts("One part only.") == [(0, 14)]


def _verdicts(sentences: list[str]) -> list[ClaimVerdict]:
    quotes = [DOCX4J]
    att = attribute(sentences, [1], lexical_support(sentences, quotes, QUESTION), question=QUESTION, quotes=quotes,
                    headings=["Which version?"], places=["docx4j-GettingStarted.docx > Which version?"])
    return [a.verdict for a in att]


@pytest.mark.parametrize("sentence", [
    "The 11.4 series supports Java 11 (released in 2018) and Java 17 (released in 2021) [1].",
    "It supports Java 11 (released Sept 2018) and Java 17 (released Sept 2021) [1].",
])
def test_a_sentence_joining_two_list_items_is_supported(sentence):
    """Seen in the app (2026-12-07): the 0.5B's right answer was left out, "[1] holds 2018 only in a statement about
    something else": each item is a statement, and the item holding 2018 lacks the other item's 17 and 2021."""
    assert _verdicts([sentence]) == [ClaimVerdict.SUPPORTED]


@pytest.mark.parametrize("sentence", [
    "It supports Java 11 (released Sept 2021) and Java 17 (released Sept 2018) [1].",  # the years swapped
    "It supports Java 17 (released Sept 2018) [1].",
    "It supports Java 8 (released 2014) and Java 17 (released Sept 2021) [1].",  # Java 8 is in no item
    # a review's probes (2026-12-07): a clause set off by commas pairs with no item of its own
    "The 11.4 series supports Java 11, released in Sept 2021, and Java 17, released in Sept 2018 [1].",
])
def test_a_part_still_needs_the_item_that_says_it(sentence):
    assert _verdicts([sentence]) != [ClaimVerdict.SUPPORTED]


@pytest.mark.parametrize("sentence", [
    "Basic costs 10 dollars and allows 50 users, and Pro costs 20 dollars and allows 5 users [1].",
    "Basic costs 10 dollars, allowing 50 users [1].",
])
def test_items_of_two_lists_are_not_paired(sentence):
    """A review's probe (2026-12-07): a price list and a limits list; the part "allows 50 users" named no item of
    its own and was paired with the Pro limit, and the other parts' numbers came from the other list."""
    source = "Prices:\n\n- Basic: 10 dollars\n- Pro: 20 dollars\n\nUser limits:\n\n- Basic: 5 users\n- Pro: 50 users"
    q = "What does each plan cost and how many users does it allow?"
    att = attribute([sentence], [1], lexical_support([sentence], [source], q), question=q, quotes=[source])
    assert att[0].verdict != ClaimVerdict.SUPPORTED
