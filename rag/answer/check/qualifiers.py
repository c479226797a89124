"""A value its source only recommends, stated as the rule (the noticed-and-left list of 2026-12-07).

"Verify that user set passwords are at least 8 characters in length although a minimum of 15 characters is strongly
recommended." does not support "The minimum password length is 15 characters [1].": the rule is 8, and 15 is advice.
It was shown as supported: every word and number of the claim is in the statement. :func:`recommended_only` finds such
a statement (or two in a row: "Passwords must be at least 8 characters. A minimum of 15 is recommended."): the clause
holding the claim's value (a number, digits or words, and the unit word after it) holds an advisory word
(:data:`ADVISORY_STARTS`), another clause gives another value of the same unit without one, and neither the claim nor
the question says the value is advice ("The tank holds 50 liters; it is recommended to refill it at 10 liters."
supports "The tank holds 50 liters"). A statement with one value ("should be at least 12 characters") is left alone:
its value is the only one there is. The claim "at least 8 characters" from the same statement is right, and stays
supported. Pure functions; no regular expression beyond :data:`rag.text.WORD_RE` and the linear clause split.
"""

from __future__ import annotations

from rag.answer.check.claims import roots, source_roots, statements
from rag.answer.check.polarity import Clash, clauses
from rag.answer.check.spelled import as_digits
from rag.text import WORD_RE, strip_markers

#: Words that make a value advice rather than the rule, by their case-folded start ("recommended", "suggests",
#: "ideally", "preferably", "encouraged", "advisable", "optional"), and whole words ("should").
ADVISORY_STARTS = ("recommend", "suggest", "ideal", "prefer", "encourag", "advis", "optional")
ADVISORY_WORDS = frozenset({"should"})
#: The claim's words must be this share of the statement's (the statement makes the claim).
MAIN_MIN = 0.5


def advisory(word: str) -> bool:
    """Whether ``word`` (any case) makes a value advice (:data:`ADVISORY_STARTS`, :data:`ADVISORY_WORDS`)."""
    w = word.casefold()
    return w in ADVISORY_WORDS or w.startswith(ADVISORY_STARTS)


def values(text: str) -> set[tuple[str, str]]:
    """``(number, unit)`` of each number followed by a word in ``text`` ("15 characters", "fifteen characters" ->
    ``("15", "character")``); ordinals ("third") are no values."""
    words = WORD_RE.findall(text)
    out = set()
    for w, unit in zip(words, words[1:]):
        n = w if w.isdigit() else as_digits(w)
        if n and n.isdigit() and unit.isalpha():
            out.add((n, unit.casefold().rstrip("s")))
    return out


def recommended_only(sentence: str, source: str, question: str | None = None) -> Clash | None:
    """The :class:`rag.answer.check.polarity.Clash` of the statement of ``source`` (or two statements in a row) that
    gives the value the claim ``sentence`` states as advice beside another value of its unit given as the rule
    (module docstring), or ``None``. A value is advice when the clause holding it (:func:`rag.answer.check.polarity
    .clauses`: "..., although a minimum of 15 characters is strongly recommended") holds an advisory word and the
    clause of the other value holds none."""
    body = strip_markers(sentence)
    if any(advisory(w) for w in WORD_RE.findall(body)) or \
            (question and any(advisory(w) for w in WORD_RE.findall(question))):
        return None
    claimed = values(body)
    said = roots(body)
    if not claimed or len(said) < 2:
        return None
    owns = [" ".join(st.own().split()) for st in statements(source)]
    for k, own in enumerate(owns):
        for window in (own, f"{own} {owns[k + 1]}" if k + 1 < len(owns) else ""):
            if not window or len(said & source_roots(window)) < MAIN_MIN * len(said):
                continue
            parts = [(values(c), any(advisory(w) for w in WORD_RE.findall(c))) for c in clauses(window)]
            for n, unit in claimed:
                advised = any((n, unit) in vs and adv for vs, adv in parts)
                ruled = any(adv is False and any(u == unit and m != n for m, u in vs) for vs, adv in parts)
                if advised and ruled:
                    return Clash(window, "only as advice")
    return None
