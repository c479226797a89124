"""A claim about the very case its source makes an exception of (an adversarial review of the claim check, 2026-12-07).

"Return shipping in the United States costs $7.95, unless the item arrived damaged." does not support "Return
shipping for a damaged item in the United States costs $7.95 [1]."; "A locked account is unlocked automatically
after 30 minutes, unless the attempts came from outside the EU" does not answer "Yes, ... unlocked automatically"
to a question about attempts from outside the EU. Each was shown as supported: every word of the claim is in the
statement. :func:`excepted` finds such a statement: its main part makes the claim, and the case its exception
names (the words of the clause after "unless" / "except" that the main part lacks) is the case the claim or the
question speaks of, while the claim keeps no exception of its own. A main part that denies ("You cannot merge a pull
request unless all checks pass") makes its exception a condition: "You can merge once all checks pass" is right.
Pure functions; no regular expression (the markers are found with ``str.find`` on the case-folded statement).
"""

from __future__ import annotations

from rag.answer.check.claims import question_roots, roots, source_roots, statements
from rag.answer.check.polarity import Clash, denies
from rag.answer.check.short_answers import YES_NO_RE, without_yes
from rag.text import strip_markers

#: Words that open an exception clause.
MARKERS = (" unless ", " except when ", " except if ", " except for ", " except ", " other than ", " excluding ")
#: Words by which a claim keeps an exception, a condition or a limit of its own, in any wording ("with the exception
#: of gift cards", "apart from", "weekends excluded", "plus VAT", "if the item arrived damaged"): it is then not the
#: plain claim (a review of the rule, 2026-12-07: each of these was withheld).
KEEPS = frozenset("unless except exception excepted excluding excluded exclude excludes but only not no never cannot "
                  "other apart aside besides plus before without if when otherwise instead".split())
#: The statement's main part must hold this share of the claim's words (it makes the claim) ...
MAIN_MIN = 0.5
#: ... and the claim and question together this share of the words only the exception clause has.
CASE_MIN = 0.5
#: An exception clause is read up to its first comma, semicolon or full stop, at most this many characters.
CLAUSE_MAX = 200


def _exception(text: str) -> tuple[str, str] | None:
    """``(main part, exception clause)`` of a statement with an exception marker, else ``None``."""
    low = f" {text.casefold()} "
    hits = [(low.find(m), m) for m in MARKERS if low.find(m) != -1]
    if not hits:
        return None
    at, marker = min(hits)
    rest = text[max(0, at - 1 + len(marker)):][:CLAUSE_MAX]
    cut = min((i for i in (rest.find(","), rest.find(";"), rest.find(". ")) if i != -1), default=len(rest))
    return text[: max(0, at - 1)], rest[:cut]


def excepted(sentence: str, source: str, question: str | None = None) -> Clash | None:
    """The :class:`rag.answer.check.polarity.Clash` of the statement of ``source`` whose exception the claim
    ``sentence`` falls under (module docstring), or ``None``."""
    body = strip_markers(sentence)
    yes = question is not None and YES_NO_RE.match(question) and without_yes(body) != body
    body = without_yes(body)  # "yes" is no word of the claim; the question's words count for it below
    said = roots(body)
    words = {w.casefold().strip(".,;:!?()") for w in body.replace(",", " ").split()}
    if len(said) < 2 or words & KEEPS:
        return None
    # the question's words name the case only for a "Yes," that restates it; else a word of the question the
    # exception shares ("How do I check my refund status?" - "unless you paid by check") is no case of it
    asked = said | (question_roots(question) if yes else set())
    for st in statements(source):
        own = st.own()
        parts = _exception(own)
        if parts is None:
            continue
        main, clause = parts
        if denies(main):  # "You cannot merge unless all checks pass": the exception is the condition, said positively
            continue
        main_roots = source_roots(main)
        case = roots(clause) - main_roots
        if not case or len(said & main_roots) < MAIN_MIN * len(said - roots(clause)):
            continue
        if said - main_roots - case - (question_roots(question) if question else set()):
            continue  # it says more of the case than the main part does ("..., and backups are kept in Dublin")
        if len(case & asked) >= CASE_MIN * len(case):
            return Clash(" ".join(own.split()), f"only with an exception the answer falls under ({clause.strip()!r})")
    return None
