"""Numbers a sentence or a source writes in words (an adversarial review of the claim check, 2026-12-07).

:func:`as_digits` - a spelled number as the specific its digits make ("three" -> ``"3"``, "five-year" ->
``"5-year"``), so a claim's "locked after three failed attempts" asks its source for a 3 as "after 3" does;
:func:`spelled` - the ways a source may write a number-led specific in words (``"5-year"`` -> "five-year",
"five year"), read by :func:`rag.answer.check.claims.holds`; :data:`UNIT_WORDS` - the units a number's value
includes ("five years" is one value). Moved out of :mod:`rag.answer.check.claims` when it passed 500 lines. Pure
functions over :data:`rag.text.SPELLED_NUMBERS`; no regular expression.
"""

from __future__ import annotations

from rag.text import SPELLED_NUMBERS, SPELLED_ORDINALS

#: The units a number's value includes (time, size, mass, volume, length; singular forms, a plural "s" stripped).
UNIT_WORDS = frozenset("second minute hour day week month year decade century byte kb mb gb tb kib mib gib tib bit "
                       "mg g gram kg kilogram ml l litre liter mm cm m metre meter km inch foot feet mile percent "
                       "%".split())
_DIGITS_OF = {w: d for d, w in SPELLED_NUMBERS.items()} | {w: d for d, w in SPELLED_ORDINALS.items()}


def as_digits(token: str) -> str | None:
    """A spelled number (:data:`rag.text.SPELLED_NUMBERS`, the ordinals) as the specific its digits make:
    ``"Three"`` -> ``"3"``, ``"five-year"`` -> ``"5-year"``, ``"one-year"`` -> ``"1-year"``, ``"third"`` -> ``"3rd"``;
    ``None`` for any other token, for "zero", "one" and "first" (as often a pronoun or an order of words: "one of
    them", "first, open the file"; "one year" is as often "12 months") and a bare "second" (a unit: "per second")."""
    head, dash, tail = token.casefold().partition("-")
    d = _DIGITS_OF.get(head)
    if d is None or d in ("0", "1", "1st") or (not dash and d == "2nd"):
        return None
    if not dash:
        return d
    unit = _DIGITS_OF.get(tail)
    if unit is not None:  # "twenty-five": one number
        return str(int(d) + int(unit)) if d.isdigit() and int(d) >= 20 and unit.isdigit() and 0 < int(unit) < 10 \
            else None
    return f"{d}-{tail}" if tail.isalpha() else None


#: Words before a spelled number that make it a value, not a count of what the sentence goes on to list
#: ("after three failed attempts", "up to three devices", "within ten days").
VALUE_BEFORE = frozenset("after within for every than least most to under over about around only exactly just nearly "
                         "almost approximately roughly by last lasts per each".split())


def value_like(token: str, before: str, after: str) -> bool:
    """Whether spelled number ``token`` gives a value a source must hold: a compound ("five-year"), a number before
    a unit (:data:`UNIT_WORDS`: "six years"), or after a word of quantity (:data:`VALUE_BEFORE`). "There are three
    ways: ...", "The two plans differ ..." and "two times a year" count what they list or say otherwise: a review of
    the rule (2026-12-07) found those withheld."""
    unit = after.casefold()
    return ("-" in token or unit in UNIT_WORDS or unit.rstrip("s") in UNIT_WORDS
            or before.casefold() in VALUE_BEFORE)


def spelled(specific: str) -> tuple[str, ...]:
    """The ways a source may write a number-led ``specific`` in words: ``"5"`` -> ``("five",)``; ``"5-year"`` ->
    ``("five-year", "five year")``; ``"3rd"`` -> ``("third",)``; ``"25"`` -> ``("twenty-five",)``; ``()`` for any
    other (``"2.5"``, ``"GPT-2"``, ``"125"``), and for a bare ``"0"`` or ``"1"`` ("one" is as often a pronoun: "one of
    the limits"; ``"1-year"`` is still ``("one-year", "one year")``)."""
    head, dash, tail = specific.partition("-")
    word = SPELLED_NUMBERS.get(head) or SPELLED_ORDINALS.get(head)
    if word is None and head.isdigit() and 20 < int(head) < 100:  # "25": "twenty-five"
        word = f"{SPELLED_NUMBERS[head[0] + '0']}-{SPELLED_NUMBERS[head[1]]}"
    if word is None or (not dash and head in ("0", "1")):
        return ()
    if not dash:
        return (word,)
    return (f"{word}-{tail}", f"{word} {tail}") if tail.isalpha() else ()
