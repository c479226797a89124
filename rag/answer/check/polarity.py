"""A claim and the source statement that makes it must say it the same way round and of the same quantity (issue 39).

The claim check compares words, so "The app should store tokens in local storage [1]" passed against "Tokens must
never be stored in local storage", and "All handlers must succeed [1]" against "only one handler must succeed": every
word the sentence adds is in the source. This module reads two more things of the clause that makes the claim:

* :func:`clauses` - a statement cut at commas, semicolons, colons, brackets, dashes, table cells, sentence ends and
  the conjunctions that join two claims ("and", "or", "but", "while", ...): "Tokens are kept in memory, not in
  local storage" is two claims;
* :data:`DENY_RE`, :func:`denies`, :func:`denied` - the words that turn a clause into its opposite ("not", "never",
  "cannot", "n't", "without", "avoid", German and French negations), and the claim word each denies; narrower than
  :data:`rag.answer.check.short_answers.NEGATION_RE`, which also holds words that only limit ("only", "rather",
  "unless") and is read where a whole statement must affirm a yes/no restatement;
* :func:`quantities` - "all", "only" or "some" (and their other words);
* :func:`polarity_clash` - the :class:`Clash` of the source's clauses that best hold a clause of the sentence and
  say it the other way round or of another quantity.

Pure functions on strings, linear regular expressions (single alternations, no nested quantifier), no model.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from rag.answer.check.claims import statements
from rag.index.analyzer import _stemmer
from rag.text import WORD_RE, content_words, strip_markers

#: Where a statement is cut into clauses: punctuation (a table row's cells, sentences a list item or a cell holds),
#: and the words that join two claims.
CLAUSE_RE = re.compile(r"[,;:()\[\]|\u2013\u2014]|[.!?]\s|\s-\s|\b(?:and|or|but|whereas|while|although|though|however|"
                       r"und|oder|aber|et|ou|mais)\b", re.IGNORECASE)
#: Words that turn a clause into its opposite (English, German, French).
DENY_RE = re.compile(r"\b(?:no|not|never|cannot|none|nor|neither|nothing|nobody|nowhere|without|ohne|sans|avoid\w*|prohibit\w*|"
                     r"forbid\w*|forbade|discourag\w*|unable|disallow\w*|nicht|nie|niemals|kein\w*|jamais|pas)\b|n't\b",
                     re.IGNORECASE)
#: A clause of the sentence is judged when it holds at least this many claim words (:func:`stems`).
CLAUSE_ROOTS = 2
#: ... and a clause of the source holds at least this share of them (else the source does not make that claim in
#: one clause, and the word-level check alone decides).
CLAUSE_MIN = 0.5


def stems(text: str) -> set[str]:
    """The claim words of ``text`` (:func:`rag.text.content_words`) reduced by the English Snowball stemmer, so
    "stored", "store" and "storing" meet: how this module compares a clause of the sentence with one of the source
    (the claim check's roots keep "stored" and "store" apart, which a question's words paper over there)."""
    return set(_stemmer("en").stemWords(sorted(content_words(text))))


def clauses(text: str) -> list[str]:
    """The clauses of ``text`` (:data:`CLAUSE_RE`), stripped, empty ones dropped; ``[text]`` when it has one."""
    return [c.strip().lstrip("-*+\u2022 ") for c in CLAUSE_RE.split(text) if c and c.strip().lstrip("-*+\u2022 ")]


#: Words after a denying word that make the two an affirmation ("Don't forget to go back to the CPU", "never fail to",
#: "not only"): a double negative or a widening, not a denial.
LITOTES = frozenset("forget forgetting fail failing hesitate neglect omit miss only just merely".split())


#: How many words after a denying word are read for the word it denies (the first claim word among them).
SCOPE_WORDS = 4


def denied(text: str) -> set[str]:
    """The :func:`stems` that ``text`` denies: for each denying word (:data:`DENY_RE`) not followed by a word of
    :data:`LITOTES` ("Don't forget to ..."), the stem of the first claim word among the :data:`SCOPE_WORDS` words
    after it ("never be stored" -> "store", "does not validate" -> "valid", "avoid storing" -> "store"), unless
    ``text`` also says that word outside a denial ("with batched=True ... than its slow counterpart with no
    batching" denies no batching of the claim's)."""
    hits: Counter[str] = Counter()
    for m in DENY_RE.finditer(text):
        after = WORD_RE.findall(text[m.end():m.end() + 80])[:SCOPE_WORDS]
        if after and after[0].casefold() in LITOTES:
            continue
        for w in after:
            if st := stems(w):
                hits.update(st)
                break
    if not hits:
        return set()
    said = Counter(w for t in WORD_RE.findall(text) for w in stems(t))
    return {w for w, n in hits.items() if said[w] <= n}


def denies(text: str) -> bool:
    """Whether ``text`` holds a denying word (:data:`DENY_RE`) not followed by a word of :data:`LITOTES`."""
    for m in DENY_RE.finditer(text):
        after = WORD_RE.findall(text[m.end():m.end() + 40])[:1]
        if not after or after[0].casefold() not in LITOTES:
            return True
    return False


#: Words that say how many or how often, by kind: ``all`` (every one), ``only`` (this one and no other), ``some``
#: (at least one); two-word forms are read as one ("at least", "one or more", "just one", "exactly one").
QUANTITIES = {
    "all": "all", "every": "all", "each": "all", "always": "all", "both": "all", "alle": "all", "jeder": "all",
    "tous": "all", "toujours": "all",
    "only": "only", "solely": "only", "exclusively": "only", "sole": "only", "single": "only", "nur": "only",
    "seulement": "only", "uniquement": "only",
    "some": "some", "sometimes": "some", "several": "some", "occasionally": "some", "manchmal": "some",
    "parfois": "some",
}
#: Two-word forms of :data:`QUANTITIES`.
QUANTITY_PAIRS = {("at", "least"): "some", ("one", "or"): "some", ("just", "one"): "only", ("exactly", "one"): "only"}


def quantities(text: str) -> dict[str, str]:
    """The kinds of quantity ``text`` says (:data:`QUANTITIES`), each with the first word that says it:
    ``{"only": "only"}`` for "only one handler must succeed"."""
    words = [w.casefold() for w in WORD_RE.findall(text)]
    out: dict[str, str] = {}
    for i, w in enumerate(words):
        pair = (w, words[i + 1]) if i + 1 < len(words) else None
        if pair in QUANTITY_PAIRS:
            out.setdefault(QUANTITY_PAIRS[pair], " ".join(pair))
        elif w in QUANTITIES:
            out.setdefault(QUANTITIES[w], w)
    return out


@dataclass(frozen=True)
class Clash:
    """A clause of a source that says a claim differently: ``clause`` (its text) and ``how`` ("the other way round",
    or the two quantities: '"only", not "all"')."""

    clause: str
    how: str

    def reason(self, n: int) -> str:
        """The sentence's reason, for the source ``[n]``."""
        return f'[{n}] says it {self.how}: "{self.clause}"'


def polarity_clash(sentence: str, source: str) -> Clash | None:
    """The clause of ``source`` that says a clause of ``sentence`` the other way round, or of another quantity;
    ``None`` when it says none so.

    Each clause of the sentence (:func:`clauses`, ``[n]`` markers removed) with at least :data:`CLAUSE_ROOTS`
    :func:`stems` is compared with the clauses of the source's statements (:func:`rag.answer.check.claims.statements`,
    each read in its own words) that hold the largest share of those stems, at least :data:`CLAUSE_MIN`: when in
    each of those one side denies a word of the claim (:func:`denied`) and the other denies nothing, the source says
    the opposite. "Tokens must never be stored in local storage." against "The app should store tokens in local storage
    [1]."; "Do not populate result.fingerprints." against "Producers should populate result.fingerprints [1]." A
    clause the source does not make (below the share) is left to the word-level check. Quantities clash the same
    way: one side says "all" (:func:`quantities`) and the other "only" or "some" but not "all" ("Only one handler must
    succeed" against "All handlers must succeed [1]").
    """
    own = [c for st in statements(source) for c in clauses(st.own())]
    held = [(c, stems(c)) for c in own]
    for part in clauses(strip_markers(sentence)):
        words = stems(part)
        if len(words) < CLAUSE_ROOTS:
            continue
        shares = [(len(words & r) / len(words), c) for c, r in held]
        best = max((s for s, _ in shares), default=0.0)
        if best < CLAUSE_MIN:
            continue
        said = denied(part)
        top = [c for s, c in shares if s == best]
        found = [_opposite(part, words, said, c) for c in top]
        if all(found):
            return Clash(top[0], found[0])
    return None


def _opposite(part: str, words: set[str], said: set[str], clause: str) -> str | None:
    """How the source's ``clause`` says the sentence's clause ``part`` (:func:`stems` ``words``, denied stems
    ``said``) differently: "the other way round" when one denies a word of the claim (:func:`denied`) and the other
    does not deny at all; '"only", not "all"' when one says "all" and the other "only" or "some" but not "all"
    (:func:`quantities`); ``None`` when neither."""
    theirs = denied(clause)
    if (theirs & words and not denies(part)) or (said & stems(clause) and not denies(clause)):
        return "the other way round"
    mine, its = quantities(part), quantities(clause)
    if mine and its and not (mine.keys() & its.keys()) and ("all" in mine) != ("all" in its):
        return f'"{next(iter(its.values()))}", not "{next(iter(mine.values()))}"'
    return None
