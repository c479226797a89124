"""A value its source only recommends, stated as the rule (the noticed-and-left list of 2026-12-07).

"Verify that user set passwords are at least 8 characters in length although a minimum of 15 characters is strongly
recommended." does not support "The minimum password length is 15 characters [1].": the rule is 8, and 15 is advice.
It was shown as supported: every word and number of the claim is in the statement. :func:`recommended_only` finds such
a statement: it holds the claim's value (a number and the unit word after it) and another value of the same unit, an
advisory word (:data:`ADVISORY`) stands nearer the claim's value than the other, and neither the claim nor the
question says the value is advice. A statement with one value ("should be at least 12 characters") is left alone:
its value is the only one there is. The claim "at least 8 characters" from the same statement is right, and stays
supported. Pure functions; no regular expression beyond :data:`rag.text.WORD_RE`.
"""

from __future__ import annotations

from rag.answer.check.claims import roots, source_roots, statements
from rag.answer.check.polarity import Clash
from rag.text import WORD_RE, strip_markers

#: Words that make a value advice rather than the rule, by their case-folded start ("recommended", "suggests",
#: "ideally", "preferably", "encouraged", "advisable", "optional"), and whole words ("should").
ADVISORY_STARTS = ("recommend", "suggest", "ideal", "prefer", "encourag", "advis", "optional")
ADVISORY_WORDS = frozenset({"should", "best"})
#: The claim's words must be this share of the statement's (the statement makes the claim).
MAIN_MIN = 0.5


def advisory(word: str) -> bool:
    """Whether ``word`` (any case) makes a value advice (:data:`ADVISORY_STARTS`, :data:`ADVISORY_WORDS`)."""
    w = word.casefold()
    return w in ADVISORY_WORDS or w.startswith(ADVISORY_STARTS)


def _values(words: list[str]) -> list[tuple[int, str, str]]:
    """``(position, number, unit)`` of each number followed by a word in ``words`` ("15 characters")."""
    return [(i, w, words[i + 1].casefold().rstrip("s")) for i, w in enumerate(words[:-1])
            if w.replace(".", "", 1).isdigit() and words[i + 1].isalpha()]


def recommended_only(sentence: str, source: str, question: str | None = None) -> Clash | None:
    """The :class:`rag.answer.check.polarity.Clash` of the statement of ``source`` that gives the value the claim
    ``sentence`` states as advice beside another value of its unit (module docstring), or ``None``."""
    body = strip_markers(sentence)
    words = WORD_RE.findall(body)
    if any(advisory(w) for w in words) or (question and any(advisory(w) for w in WORD_RE.findall(question))):
        return None
    claimed = {(n, unit) for _, n, unit in _values(words)}
    said = roots(body)
    if not claimed or len(said) < 2:
        return None
    for st in statements(source):
        own = st.own()
        theirs = WORD_RE.findall(own)
        values = _values(theirs)
        advice = [i for i, w in enumerate(theirs) if advisory(w)]
        if len(values) < 2 or not advice or len(said & source_roots(own)) < MAIN_MIN * len(said):
            continue
        for at, n, unit in values:
            if (n, unit) not in claimed:
                continue
            others = [i for i, m, u in values if u == unit and m != n]
            if not others:
                continue
            near = [a for a in advice if abs(a - at) < min(abs(a - o) for o in others)]
            if near:
                return Clash(" ".join(own.split()), f'only as advice ("{theirs[near[0]]}")')
    return None
