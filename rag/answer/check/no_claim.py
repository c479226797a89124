"""Answer sentences that make no claim of their own, whatever their words (issues 14, 24 and 39).

Pure functions on strings, no model:

* :func:`garbled` - a sentence that is no statement at all ("In 2015, was published [1].", a clause that ends on
  "of the");
* :func:`points_elsewhere` - one that sends the reader elsewhere ("See the cheat sheet for further details [2].");
* :func:`announces` - one that announces what follows ("To reset your password, follow these steps [1]:");
* :func:`title_states` - the exception to a section's title given back naming a place: a title that states the
  value asked for ("4.2 Block indentation: +2 spaces").
"""

from __future__ import annotations

import re

from rag.answer.check.claims import novel_roots, question_roots, roots, specifics
from rag.text import WORD_RE, strip_markers

#: The words of a sentence that announces what follows and says nothing itself ("follow these steps:", "Here is
#: how:", "do the following:"), compared word for word (no roots: "optional" is no "option").
ANNOUNCING = frozenset("follow follows following step steps way ways below here how done do it this these those "
                       "to the a an you your we can as is are s then just should must need will use for of in on "
                       "with by and at from".split())


def announces(sentence: str, question: str | None) -> bool:
    """Whether ``sentence`` only announces what follows it: it ends on a colon (markers removed), and every word it
    adds to the ``question`` (a word whose root, :func:`root`, the question lacks) is a word of :data:`ANNOUNCING`.
    "To reset your password, follow these steps [1]:" claims nothing that a source could hold; it was marked
    unsupported, making a right list answer "partly supported" (the new user's walk of 2026-12-06). "The following
    settings are optional:", "There are two steps:", "Do not follow these steps:" and "Redis is faster in these
    ways:" say something (an adversarial review, 2026-12-06). Without the question, never; a yes/no question's
    answer is judged by the caller."""
    body = strip_markers(sentence).strip().rstrip("*_ ")
    if question is None or not body.endswith(":"):
        return False
    asked_roots = question_roots(question)
    return all(w in ANNOUNCING for w in (x.casefold() for x in WORD_RE.findall(body))
               if not roots(w) & asked_roots and w not in asked_roots)


def title_states(title: str, question: str | None) -> bool:
    """Whether a section title, given back as an answer's sentence, states a value: after its colon it holds a number
    or name (:func:`specifics`) the question lacks, and no other word the question lacks. "4.2 Block indentation: +2
    spaces [1]." answers "How many spaces
    are used for block indentation in Java?" (a new user's walk of the API, 2026-12-06: it was dropped as pointing at
    a source, and a Javadoc passage about four spaces shown instead); "HTTP Return Code [4]." and "Line-wrapping:
    where to break" state nothing."""
    _, colon, tail = strip_markers(title).partition(":")
    if not colon or not question or not specifics(tail) - specifics(question):
        return False
    # the value is the answer only where the rest of the tail is the question's own words ("+2 spaces"): "Annual
    # leave: 2024 policy" states a year of a policy, not the days asked for (an adversarial review, 2026-12-06)
    return novel_roots(" ".join(w for w in tail.split() if not any(ch.isdigit() for ch in w)), question) == set()




#: A sentence that sends the reader elsewhere ("See the JSON_Web_Token_Cheat_Sheet for further details [2].", a
#: new user's walk of 2026-12-06: shown as a claim supported by its source) says nothing a source could support.
ELSEWHERE_RE = re.compile(r"^\W*(?:see|refer to|consult)\b|\bfor (?:further|more) (?:details|information|info)\W*$",
                          re.I)
#: ... when it is that short (words): a longer sentence says something and only ends on "for more information".
ELSEWHERE_WORDS = 8
#: A question that asks where to look: "See `man readline` [1]." answers it.
WHERE_RE = re.compile(r"\bwhere\b|\bfind\b|\blook\s+up\b|\bdocumentation\b|\bread\s+more\b", re.I)


def points_elsewhere(sentence: str, question: str | None) -> bool:
    """Whether ``sentence`` only sends the reader elsewhere (:data:`ELSEWHERE_RE`, at most :data:`ELSEWHERE_WORDS`
    words) and the ``question`` did not ask where to look (:data:`WHERE_RE`)."""
    body = strip_markers(sentence)
    return bool(ELSEWHERE_RE.search(body) and len(body.split()) <= ELSEWHERE_WORDS
                and not (question and WHERE_RE.search(question)))



_AUX = r"(?:was|were|is|are|has|have|had|will|can|could|did|does|do|be|been|being)"
#: An opening phrase then a verb with no subject: "In 2015, was published [1].", "Because of this, is used ...".
_NO_SUBJECT = re.compile(
    r"^(?:in|on|at|by|for|from|during|after|before|since|until|with|without|because|although|however|therefore|"
    r"thus|also|then|here|today|now|later|first|finally|according)\b[^,]{0,50},\s+" + _AUX + r"\b", re.I)
#: A sentence opening on a passive or perfect verb form with no subject: "Was published in 2015."
_OPENS_ON_VERB = re.compile(r"^(?:was|were|has been|have been|had been)\s+\w+(?:ed|en|wn|t)\b", re.I)
#: A sentence ending on a word that needs a complement ("... trained on the.", "... and.").
_ENDS_OPEN = re.compile(r"\b(?:the|an|of|and|or|than|whose|its|their)\s*[.!?:;,]*\s*$", re.I)
#: Punctuation or a lower-case conjunction opening the sentence: a fragment cut from the one before.
_OPENS_CUT = re.compile(r"^(?:[,;:)\]]|(?:and|or|but|which|whose|whereas)\s)")


def garbled(sentence: str) -> str | None:
    """Why ``sentence`` is no statement (issue 24, item 1), or ``None``: a verb with no subject after an
    opening phrase ("In 2015, was published [1]."), a sentence opening on a passive verb form, one ending on
    a word that needs a complement, or one opening on punctuation or a lower-case conjunction. Markers are
    removed first; a question or a decline is judged elsewhere."""
    body = strip_markers(sentence).strip().strip("*_ ")
    if not body:
        return None
    if _NO_SUBJECT.match(body) or _OPENS_ON_VERB.match(body):
        return "no subject: a verb follows the opening phrase"
    if _ENDS_OPEN.search(body):
        return "a clause left open at its end"
    if _OPENS_CUT.match(body):
        return "a fragment cut from another sentence"
    return None
