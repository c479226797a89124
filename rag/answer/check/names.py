"""A name the claim writes wrong (issue 39): "Laurent van der Maaten" for the source's "Laurens van der Maaten".

:func:`misspelt_names` - a sentence's opening words that are a name of the source written with one or two letters
changed; :func:`source_names` - the names a source holds; :func:`identifiers` and :func:`names_it` - the
identifier-like names a question asks about, and whether a source names them. Moved out of :mod:`rag.answer.check.claims` (which holds
the word-level check they serve) when it passed 500 lines. Pure functions, no regular expression of their own.
"""

from __future__ import annotations

from rag.answer.check.claims import TOKEN_RE, holds, specifics
from rag.text import CLAIM_STOPWORDS, WORD_RE, strip_markers

#: An opening word (capitalised, so :func:`specifics` cannot tell a name from any first word) that its source
#: lacks but that is at most this many letter edits from a name the source has, same first letter, is that name
#: written wrong: the 0.5B's "Laurent van der Maaten's t-Distributed Stochastic Neighbor Embedding [4]" for the
#: source's "Laurens van der Maaten" was shown as supported (``bench answers --corpus real``, t01, 2026-12-06).
NAME_EDITS = 2
#: Names shorter than this are not compared (two edits turn any three-letter word into another).
NAME_MIN = 4
#: Longer tokens are not compared: a bound on the edit-distance table (letters x letters).
NAME_MAX = 40


def _edits(a: str, b: str, most: int) -> int:
    """Levenshtein distance of ``a`` and ``b``, or ``most + 1`` as soon as it must exceed ``most``
    (both at most :data:`NAME_MAX` letters: O(len(a) * len(b)) at worst)."""
    if abs(len(a) - len(b)) > most:
        return most + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        if min(cur) > most:
            return most + 1
        prev = cur
    return prev[-1]


def misspelt_names(sentence: str, source: str) -> list[str]:
    """The sentence's opening words (of the sentence, or after a colon or a list's dash) that name something
    the ``source`` names differently: capitalised, :data:`NAME_MIN` to :data:`NAME_MAX` letters, not a claim stop
    word, not held by ``source`` (:func:`holds`), and within :data:`NAME_EDITS` edits of a name of ``source``
    (:func:`source_names`) with the same first letter, neither word the start of the other ("Model" / "Models").
    Case-folded, in sentence order. A name inside a sentence needs no such rule: :func:`specifics` already asks the
    source for it."""
    body = strip_markers(sentence)
    names = [n for n in source_names(source) if NAME_MIN <= len(n) <= NAME_MAX]
    out = []
    for k, m in enumerate(TOKEN_RE.finditer(body)):
        tok = m.group(0).rstrip(".,")
        opens = k == 0 or body[: m.start()].rstrip().endswith((".", ":", "!", "?", "\n", "-", "*"))
        word = tok.casefold()
        if (not opens or not tok[:1].isupper() or not tok.isalpha() or not NAME_MIN <= len(tok) <= NAME_MAX
                or word in CLAIM_STOPWORDS or holds(source, word)):
            continue
        if any(n[0] == word[0] and not (n.startswith(word) or word.startswith(n))  # "Model" / "Models": a form
               and _edits(word, n, NAME_EDITS) <= NAME_EDITS for n in names):
            out.append(word)
    return out


def source_names(source: str) -> set[str]:
    """The names of ``source``, case-folded, letters only: :func:`specifics`' (capitalised inside a sentence, or
    with a capital after the first letter), and the capitalised words that open a sentence or a list item and never
    occur in lower case in ``source`` ("- Laurens van der Maaten's t-SNE": a word always written with a capital
    is a name)."""
    names = {n for n in specifics(source) if n.isalpha()}
    lower, capital = set(), set()
    for m in TOKEN_RE.finditer(source):
        tok = m.group(0).rstrip(".,")
        if tok.isalpha():
            (capital if tok[0].isupper() else lower).add(tok.casefold())
    return names | {w for w in capital - lower if w not in CLAIM_STOPWORDS}


# --------------------------------------------------------------------------- the thing the question names

#: Small words skipped when an acronym is read off a name's initials ("World Health Organization" for "WHO",
#: "Department of the Interior" for "DOI").
_INITIAL_SKIP = frozenset({"of", "the", "and", "for", "to", "in", "on", "de", "du", "des", "la", "le"})


def identifiers(text: str) -> set[str]:
    """The identifier-like names of ``text`` (``[n]`` markers removed), case-folded as :func:`specifics` gives them:
    a token with letters and digits ("V1.2.1", "FY2023", "GPT-4") or with two capitals or more ("ASVS", "BibTeX",
    "U.S."). A plain capitalised word ("Springer", "Return") or a bare number is not one: a source says "it", "the
    policy" or "more than 100" for those (an adversarial review, 2026-12-07)."""
    out = set()
    for m in TOKEN_RE.finditer(strip_markers(text)):
        tok = m.group(0).rstrip(".,")
        letters = sum(ch.isalpha() for ch in tok)
        if letters and (any(ch.isdigit() for ch in tok) or sum(ch.isupper() for ch in tok) >= 2):
            out.add(tok.casefold())
    return out


def names_it(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` (one of :func:`identifiers`): :func:`holds` it; or, without a digit, holds it
    as up to three whole words run together ("DataType" in "Data Types") or as a name's initials ("WHO" for "World
    Health Organization"); or, with one, holds its digits as a token of their own ("FY2023" in "fiscal year 2023";
    "V1.2.1" is not in "V11.2.1", nor "Niger" in "Nigeria"). Linear in ``text``."""
    if holds(text, name):
        return True
    digits = "".join(ch for ch in name if ch.isdigit() or ch == ".").strip(".")
    if any(ch.isdigit() for ch in name):
        return bool(digits) and holds(text, digits)
    squash = "".join(ch for ch in name if ch.isalnum())
    written = [m.group(0) for m in WORD_RE.finditer(text)]
    words = [w.casefold() for w in written]
    for i in range(len(words)):
        run = ""
        for w in words[i:i + 3]:
            run += w
            if run in (squash, squash + "s"):
                return True
    if 2 <= len(squash) <= 6:  # an acronym: the initials of consecutive capitalised words, small words skipped
        initials = "".join(w[0].casefold() if w[0].isupper() else "" if w.casefold() in _INITIAL_SKIP else "|"
                           for w in written)
        return squash in initials
    return False


def _tabular(text: str) -> bool:
    return any(line.lstrip().startswith("|") for line in text.split("\n"))


def _run_named(sentence: str, name: str, text: str) -> bool:
    """Whether the run of capitalised words of ``sentence`` that holds ``name`` is named by ``text`` another way:
    by its initials ("United States" by "US" or "U.S.", "European Union" by "EU") or by another of its words
    ("Microsoft Teams" by "Teams"): a review of the rule (2026-12-07) found such right claims withheld."""
    runs: list[list[str]] = [[]]
    body = strip_markers(sentence)
    for k, m in enumerate(TOKEN_RE.finditer(body)):
        tok = m.group(0).rstrip(".,")
        opens = k == 0 or body[: m.start()].rstrip().endswith((".", ":", "!", "?", "\n", "-", "*"))
        if (tok[:1].isupper() and not opens) or (runs[-1] and tok.casefold() in _INITIAL_SKIP):
            runs[-1].append(tok)
        elif runs[-1]:
            runs.append([])
    for run in runs:
        words = [w for w in run if w.casefold() not in _INITIAL_SKIP]
        if name not in (w.casefold() for w in words) or len(words) < 2:
            continue
        initials = "".join(w[0] for w in words).casefold()
        dotted = ".".join(initials) + "."
        if holds(text, initials) or dotted in text.casefold() or any(
                w.casefold() in source_names(text) for w in words if w.casefold() != name):
            return True
    return False


def unnamed_in(sentence: str, question: str, quote: str, where: str = "", anywhere: str | None = None) -> list[str]:
    """The names the question asks about that ``sentence`` says again and that neither ``quote`` (a source's text)
    nor ``where`` (its heading, document name and section path) names (:func:`names_it`): its
    :func:`identifiers` ("Requirement V1.2.1 has ..." from another requirement's row), and, when the source is a
    table, its plain names too (a row's key: "The capital of Niger is Abuja" from Nigeria's row; in prose a
    source says "it" for those). Numbers are left to the claim check's other rules ("more than 100 million").
    With ``anywhere`` (every source of the answer, their headings and documents), a plain name that none of them
    names is wanted too: "In Canada, customers may return ... [2]" from the EU section, where no document says
    Canada (an adversarial review, 2026-12-07); a name some other source holds is left to "it"."""
    wanted = identifiers(sentence) & identifiers(question)
    plain = {x for x in specifics(sentence) & specifics(question) if any(ch.isalpha() for ch in x)}
    if _tabular(quote):
        wanted |= plain
    elif anywhere is not None:
        wanted |= {x for x in plain if not names_it(anywhere, x) and not _run_named(sentence, x, anywhere)}
    return sorted(x for x in wanted if not (names_it(quote, x) or names_it(where, x)))


#: Words by which a claim compares with a number rather than states it: "more than 100 million" holds no 100 a
#: source must say (a country's population row says 206,139,589).
COMPARISON_WORDS = frozenset("more less fewer over under above below than least most exceeding exceeds beyond "
                             "within up to about around approximately nearly almost".split())


def repeated_numbers(sentence: str, question: str) -> list[str]:
    """The numbers (digit tokens, :func:`specifics`) of ``question`` that ``sentence`` states again not after a word
    of comparison (:data:`COMPARISON_WORDS`): a condition or value the claim asserts, which its source must hold.
    "... can control two robots when the bandwidth is 20 [1]" (tika's journal PDF, a new user's walk, 2026-12-07)
    put the question's "20" into a source that never says it, and was shown as supported."""
    asked = {x for x in specifics(question) if any(ch.isdigit() for ch in x)}
    if not asked:
        return []
    out = []
    tokens = [m.group(0).rstrip(".,") for m in TOKEN_RE.finditer(strip_markers(sentence))]
    for k, tok in enumerate(tokens):
        x = tok.casefold()
        if x in asked and x not in out and not (k and tokens[k - 1].casefold() in COMPARISON_WORDS):
            out.append(x)
    return out

