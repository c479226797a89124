"""Words of which a statement says one and not another (issue 39): "reduces", not "increases"; the default, not the
maximum; weeks, not days.

:data:`OPPOSITES` - the groups of alternatives; :func:`poles` - the words of a text in them; :func:`swapped` - a word
of a claim a clause says another alternative of. Read by :mod:`rag.answer.check.polarity`, which finds the clause that
makes a claim (moved out of it when it passed 500 lines). Pure functions; one linear regular expression (a single
alternation of fixed phrases).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from rag.index.analyzer import _stemmer
from rag.text import SPELLED_NUMBERS, WORD_RE

#: Groups of words of which one says something else than another: the opposites a small model swaps without a
#: denying word ("Caching increases latency" from "Caching reduces latency", "after starting" from "before starting",
#: "optional for administrators" from "required for administrators and optional for regular users"), which value of
#: a quantity it is (the maximum, not the default: "The maximum request timeout is 30 seconds" from "The default
#: request timeout is 30 seconds, and the maximum is 300 seconds") and its unit ("12 days" from "12 weeks"). An
#: adversarial review, 2026-12-07: each was shown as supported), and the requirement words of RFC 2119, any case
#: ("Staging passwords must be ..." from "... SHOULD be ...", "should not" for "MUST NOT": a second review, the
#: same day). English words, stemmed as
#: :func:`rag.answer.check.polarity.stems` stems. The units (:data:`UNITS`) come last.
OPPOSITES = (
    "include / exclude", "increase / decrease reduce", "rise rose risen / fall fell fallen drop decline",
    "raise / lower", "grow grew grown / shrink shrank shrunk", "more / fewer less", "before / after",
    "required mandatory / optional", "enable enabled / disable disabled",
    "allow allowed permit permitted / deny denied block blocked prohibit prohibited forbid forbidden",
    "accept accepted / reject rejected", "above / below", "higher / lower", "faster / slower",
    "larger bigger / smaller", "longer / shorter", "earlier / later", "add added / remove removed",
    "success succeed / failure fail", "true / false", "public / private", "synchronous / asynchronous",
    "internal / external", "inbound / outbound", "ascending / descending", "positive / negative", "better / worse",
    "best / worst", "gain / loss", "valid / invalid", "supported / unsupported", "secure / insecure", "safe / unsafe",
    "visible / hidden", "online / offline", "upper / lower", "improve improved / worsen worsened degrade degraded",
    "strengthen strengthened / weaken weakened", "open opens opened / close closes closed", "hot / cold",
    "warm warmer / cool cooler", "cheap cheaper cheapest / expensive",
    "maximum / minimum / default usual typical standard / average",
    "must shall required mandatory / should recommended / may",
)
#: Groups whose alternatives are ordered, strongest first: a claim weaker than its source says less, not
#: something else ("Yes, you should enable it" where the source says "must"; "MAY" for "SHOULD"), so only a
#: stronger one is a swap ("must" for "SHOULD").
ORDERED = frozenset({len(OPPOSITES) - 1})
#: Units of time, size, mass and volume: a unit stands for its kind only after a number ("12 weeks"; "the first
#: week" is no unit).
UNITS = (
    "second seconds / minute minutes / hour hours / day days / week weeks / month months / year years",
    "byte bytes / kb kilobyte kilobytes kib / mb megabyte megabytes mib / gb gigabyte gigabytes gib"
    " / tb terabyte terabytes tib",
    "mg milligram milligrams / g gram grams / kg kilogram kilograms / ml millilitre millilitres milliliter milliliters"
    " / l litre litres liter liters",
)
OPPOSITES = OPPOSITES + UNITS
#: Phrases read as one word of :data:`OPPOSITES` ("at least 12" is the minimum, "up to 64" the maximum).
POLE_PHRASES = {"at least": "minimum", "no less than": "minimum", "not less than": "minimum",
                "no fewer than": "minimum", "at most": "maximum", "up to": "maximum", "no more than": "maximum",
                "not more than": "maximum", "by default": "default"}
_POLE_PHRASE_RE = re.compile(r"\b(?:" + "|".join(re.escape(k) for k in POLE_PHRASES) + r")\b", re.IGNORECASE)
#: A unit stands for its kind after a spelled number too ("six years" is no "six months").
_NUMBER_WORDS = frozenset(SPELLED_NUMBERS.values()) - {"zero", "one"}  # "one year" is as often "12 months"
_UNIT_GROUPS = frozenset(range(len(OPPOSITES) - len(UNITS), len(OPPOSITES)))


@lru_cache(maxsize=1)
def pole_groups() -> dict[str, frozenset[tuple[int, int]]]:
    """Stem -> the ``(group, alternative)`` of :data:`OPPOSITES` it says (a stem of two groups: "lower")."""
    stem = _stemmer("en").stemWord
    out: dict[str, set[tuple[int, int]]] = {}
    for k, group in enumerate(OPPOSITES):
        for i, alternative in enumerate(group.split("/")):
            for w in alternative.split():
                out.setdefault(stem(w), set()).add((k, i))
    return {w: frozenset(g) for w, g in out.items()}


def same(a: str, b: str) -> bool:
    """Whether stems ``a`` and ``b`` say one alternative of an :data:`OPPOSITES` group ("less" and "fewer")."""
    return bool(pole_groups()[a] & pole_groups()[b])


def opposed(a: str, b: str) -> bool:
    """Whether stems ``a`` and ``b`` are two alternatives of one :data:`OPPOSITES` group ("less" and "fewer" are one)."""
    groups = pole_groups()
    return any(k == m and i != j for k, i in groups[a] for m, j in groups[b])


def poles(text: str) -> dict[str, str]:
    """The words of ``text`` in :data:`OPPOSITES` (stop words too: "more", "after"), by stem, each with the word as
    written; :data:`POLE_PHRASES` read as their word ("at most" -> "maximum"), a unit only after a number."""
    groups = pole_groups()
    stem = _stemmer("en").stemWord
    text = pole_text(text)
    out: dict[str, str] = {}
    prev = ""
    for w in WORD_RE.findall(text):
        st = stem(w.casefold())
        g = groups.get(st)
        if g and (not {k for k, _ in g} <= _UNIT_GROUPS or any(ch.isdigit() for ch in prev)
                  or prev.casefold() in _NUMBER_WORDS):
            out.setdefault(st, w)
        prev = w
    return out


@lru_cache(maxsize=4096)
def clause_poles(text: str) -> dict[str, str]:
    """:func:`poles` of a source clause, read once per clause text."""
    return poles(text)


def pole_text(text: str) -> str:
    """``text`` with its :data:`POLE_PHRASES` written as their word ("at most 64" -> "maximum 64")."""
    return _POLE_PHRASE_RE.sub(lambda m: POLE_PHRASES[m.group(0).casefold()], text)


def swapped(claim: Mapping[str, str], clause: Mapping[str, str]) -> tuple[str, str, str] | None:
    """``(its word, the claim's word, the claim word's stem)`` when ``clause`` (:func:`poles`) says, for a word of the
    ``claim`` it lacks, another alternative of that word's group, which the claim does not say in any word
    ("reduces" for "increases"; "fewer" is no other alternative than "less"); ``None`` when none."""
    for st, word in claim.items():
        if st in clause:
            continue
        for other, its in clause.items():
            if opposed(st, other) and not any(same(o, other) for o in claim) and not weaker(st, other):
                return its, word, st
    return None


def weaker(a: str, b: str) -> bool:
    """Whether stem ``a`` says a weaker alternative than stem ``b`` of an :data:`ORDERED` group ("should" than
    "must")."""
    groups = pole_groups()
    return any(k == m and k in ORDERED and i > j for k, i in groups[a] for m, j in groups[b])
