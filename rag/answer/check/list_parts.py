"""A sentence that joins the items of a source's list, checked part by part (issue 39, Deliver 4: "items of a list
are checked as parts of their list").

The claim check asks every number or name of a sentence to stand in one statement of its source together with the
sentence's other claim words (:func:`rag.answer.check.claims.statement_gaps`). A list item is a statement of its own,
so "It supports Java 11 (2018) and Java 17 (2021)" over the items "Java 11 (released Sept 2018)" and "Java 17
(released Sept 2021)" failed: the item holding 2018 lacks "17" and "2021", which the other item holds (docx4j's
Getting Started in the app, 2026-12-07: "[1] holds 2018 only in a statement about something else"). Here such a
specific is read again with only the words of its own part of the sentence (the stretch between commas, "and",
"or" and semicolons outside brackets), when every specific of the other parts stands in an item of the source's
lists, and the item that holds it also holds the other specifics of its part that some item holds.

The same pairing is asked of a specific the check passed when only list items hold it: "It supports Java 17
(released Sept 2018)" is not the item "Java 11 (released Sept 2018)", though that item, read with the lines that
introduce it, holds most of the sentence's words; the item holding 2018 must also hold the part's 17, which
another item holds.

Pure functions on strings, no model, no regular expression of their own.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag.answer.check.claims import (
    STATEMENT_MARGIN,
    STATEMENT_MIN,
    holds,
    roots,
    source_roots,
    specifics,
    statements,
)
from rag.answer.check.lists import LIST_LINE, MAX_PARTS, parts


def list_gaps(sentence: str, source: str, spec: Sequence[str], gaps: Sequence[str], heading: str = "",
              min_share: float = STATEMENT_MIN, margin: float = STATEMENT_MARGIN) -> list[str]:
    """The specifics of ``spec`` (a sentence's numbers and names that ``source`` holds) that are gaps once list items
    are read as parts of their list (module doc); ``gaps`` are those :func:`rag.answer.check.claims.statement_gaps`
    found in no statement making ``sentence``'s claim.

    A gap ``x`` is lifted when ``sentence`` has two parts or more (:func:`rag.answer.check.lists.parts`), every
    specific outside ``x``'s part stands in a list item of ``source``, and a list item holds ``x``, every specific
    of ``x``'s part that any item holds, and at least ``min_share`` of the part's other claim roots (with
    ``heading`` and the lines introducing the item), no less than ``margin`` under the best share of any statement
    of ``source``. A specific that passed becomes a gap when only list items hold it and none of them holds the
    specifics of its part that other items hold. Order of ``spec`` kept."""
    if not spec:
        return []
    sts = statements(source)
    items = [st for st in sts if LIST_LINE.match(source[st.start:st.end])]
    if len(items) < 2:
        return list(gaps)
    lists = _lists(sts, items)  # which list each item is in: items of one list only are read together
    ps = [sentence[a:b] for a, b in parts(sentence)]
    said = specifics(sentence)
    in_items = {y for y in said if any(holds(source[st.start:st.end], y) for st in items)}
    out = []
    for x in spec:
        own = [p for p in ps if holds(p, x)] if len(ps) <= MAX_PARTS else []
        part = own[0] if len(own) == 1 else sentence
        paired = {y for y in said & in_items if y != x and holds(part, y)}
        holders = [st for st in items if holds(st.context, x) and all(holds(st.context, y) for y in paired)]
        if x not in gaps:
            if len(own) != 1:  # a word every part shares ("Java 11 and Java 17") pairs with none of them
                continue
            alone = not any(holds(source[st.start:st.end], x) for st in sts if st not in items)
            if x in in_items and alone and paired and not holders:
                out.append(x)
            continue
        outside = {y for y in said if not holds(part, y)}
        others = roots(part) - roots(x)
        if part is sentence or not outside or not paired or len(others) < 2 or not holders:
            out.append(x)  # a part must name its item by a specific of its own ("Java 11"), besides x
            continue
        # every specific of the other parts stands in an item of the same list as the item holding x
        holders = [st for st in holders
                   if all(any(lists[id(o)] == lists[id(st)] and holds(source[o.start:o.end], y) for o in items)
                          for y in outside)]
        shares = [_share(others, f"{heading}\n{st.context}") for st in sts]
        best = max(shares, default=0.0)
        if not any(c >= min_share and c >= best - margin for st, c in zip(sts, shares) if st in holders):
            out.append(x)
    return out


def _lists(sts, items) -> dict[int, int]:
    """``id(item) -> list number``: list items of ``sts`` with no other statement between them are one list."""
    out, number, inside = {}, 0, False
    members = {id(st) for st in items}
    for st in sts:
        if id(st) in members:
            if not inside:
                number += 1
            out[id(st)] = number
            inside = True
        else:
            inside = False
    return out


def _share(words: set[str], context: str) -> float:
    return len(words & source_roots(context)) / len(words) if words else 1.0
