"""A form's option that is not ticked, given as the answer (the browser check of 2026-12-07).

A PDF form's check boxes are read as lines such as "1. BRANCH AT TIME OF INEQUITY OR IMPROPRIETY – ARMY: No
(unchecked)" and "... – NAVY: Yes (checked)" (:mod:`rag.ingest.pdf.forms`). Asked which branch is ticked, the 0.5B
model answered "The branch of service ... – Army [2]", dropping the line's state, and the answer was shown as
supported: every word of it is in the line. :func:`unticked` finds such a line: its option's words are all in the
claim, its state is "No (unchecked)", and the claim says nothing of a box not being ticked. Pure functions.
"""

from __future__ import annotations

from rag.answer.check.claims import roots
from rag.answer.check.polarity import Clash, denies
from rag.text import WORD_RE, strip_markers

#: How a form line ends when its box is not ticked, and when it is (:func:`rag.ingest.pdf.forms._value`).
UNCHECKED = "No (unchecked)"
CHECKED = "Yes (checked)"
#: Words by which a claim speaks of a box's state itself ("unchecked", "not ticked", "blank").
STATE_WORDS = frozenset("unchecked checked unticked ticked unmarked marked blank empty selected unselected".split())


def _option(line: str) -> str:
    """The option a form line names: the part after its question's dash, else the whole label."""
    label = line.rstrip()[: -len(UNCHECKED)].rstrip(" :")
    return label.rsplit(" \u2013 ", 1)[-1]


def unticked(sentence: str, source: str, question: str | None = None) -> Clash | None:
    """The :class:`rag.answer.check.polarity.Clash` of the line of ``source`` whose box is not ticked and whose
    option the claim ``sentence`` gives (module doc), else ``None``."""
    if UNCHECKED not in source:
        return None
    body = strip_markers(sentence)
    words = {w.casefold() for w in WORD_RE.findall(body)}
    if words & STATE_WORDS or denies(body):
        return None
    said = roots(body)
    for line in source.splitlines():
        if not line.rstrip().endswith(UNCHECKED):
            continue
        option = roots(_option(line))
        if option and option <= said:
            return Clash(" ".join(line.split()), "with its box not ticked")
    return None
