"""A claim and the source statement that makes it must say it the same way round and of the same quantity (issue 39).

The claim check compares words, so "The app should store tokens in local storage [1]" passed against "Tokens must
never be stored in local storage", and "All handlers must succeed [1]" against "only one handler must succeed": every
word the sentence adds is in the source. This module reads two more things of the clause that makes the claim:

* :func:`clauses` - a statement cut at commas, semicolons, colons, brackets, dashes, table cells, sentence ends and
  the conjunctions that join two claims ("and", "or", "but", "while", ...): "Tokens are kept in memory, not in
  local storage" is two claims; :func:`claim_clauses` reads a clause of purpose with the next ("To delete files, use
  `rm`" is one claim);
* :data:`DENY_RE`, :func:`denies`, :func:`denied` - the words that turn a clause into its opposite ("not", "never",
  "cannot", "n't", "without", "avoid", German and French negations), and the claim word each denies; narrower than
  :data:`rag.answer.check.short_answers.NEGATION_RE`, which also holds words that only limit ("only", "rather",
  "unless") and is read where a whole statement must affirm a yes/no restatement;
* :func:`quantities` - "all", "only" or "some" (and their other words);
* :func:`poles` - the words of :data:`OPPOSITES`, groups of words of which a statement says one and not another
  ("reduces", not "increases"; "before", not "after"; the default, not the maximum; weeks, not days);
* :func:`polarity_clash` - the :class:`Clash` of the source's clauses that best hold a clause of the sentence and
  say it the other way round or of another quantity.

Pure functions on strings, linear regular expressions (single alternations, no nested quantifier), no model.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rag.answer.check.claims import holds, specifics, statements
from rag.answer.check.opposites import clause_poles, opposed, pole_groups, pole_text, poles, swapped
from rag.answer.check.short_answers import AFFIRM_MIN, NEGATION_RE
from rag.index.analyzer import _stemmer
from rag.text import WORD_RE, content_words, strip_markers

#: Where a statement is cut into clauses: punctuation (a table row's cells, sentences a list item or a cell holds),
#: and the words that join two claims.
CLAUSE_RE = re.compile(r"[,;:()\[\]|\u2013\u2014]|[.!?]\s|\s-\s|\b(?:and|or|but|whereas|while|although|though|however|"
                       r"und|oder|aber|sondern|et|ou|mais)\b", re.IGNORECASE)
#: Words that turn a clause into its opposite (English, German, French).
DENY_RE = re.compile(r"\b(?:no|not|never|cannot|none|nor|neither|nothing|nobody|nowhere|without|ohne|sans|avoid\w*|prohibit\w*|"
                     r"forbid\w*|forbade|discourag\w*|unable|disallow\w*|nicht|nichts|nie|niemals|kein\w*|weder|jamais|pas|"
                     r"aucun\w*|rien)\b|n['\u2019]t\b", re.IGNORECASE)
#: Words that make a statement's denial conditional, partial or a contrast ("If the tests do not pass, the build
#: fails", "cannot merge unless all checks pass",
#: "not cleared until exit", "no more than 100", "Unlike Redis, Memcached does not persist", "except /health"): a
#: statement holding one is never read as saying a claim the other way round (an adversarial review, 2026-12-06).
HEDGE_RE = re.compile(r"\b(?:if|unless|until|till|except|excepting|only|rather|instead|unlike|than|without|but|"
                      r"sondern|aber|mais|wenn|falls|si|au lieu|sauf|außer|ausser|bis)\b", re.IGNORECASE)
#: Words before a denying word that put it in a relative clause ("Users who do not have an account can sign up").
RELATIVE = frozenset("who which that whose whom".split())
#: Where a statement's sentences end, for reading each whole (a semicolon ends one: "X100 does not support duplex
#: printing; manual duplex is supported on all models" is two).
SENTENCE_END_RE = re.compile(r"[;.!?]\s")
#: A clause of the sentence is judged when it holds at least this many claim words (:func:`stems`).
CLAUSE_ROOTS = 2
#: ... and a clause of the source holds at least this share of them (else the source does not make that claim in
#: one clause, and the word-level check alone decides).
CLAUSE_MIN = 0.5


def stems(text: str) -> set[str]:
    """The claim words of ``text`` (:func:`rag.text.content_words`) reduced by the English Snowball stemmer, so
    "stored", "store" and "storing" meet: how this module compares a clause of the sentence with one of the source
    (the claim check's roots keep "stored" and "store" apart, which a question's words paper over there). The words
    of :data:`QUANTITIES` are left out: they are compared on their own (:func:`quantities`)."""
    kept = " ".join(w for w in WORD_RE.findall(text) if w.casefold() not in QUANTITIES)
    return set(_stemmer("en").stemWords(sorted(content_words(kept))))


def clauses(text: str) -> list[str]:
    """The clauses of ``text`` (:data:`CLAUSE_RE`), stripped, empty ones dropped; ``[text]`` when it has one."""
    return [c.strip().lstrip("-*+\u2022 ") for c in CLAUSE_RE.split(text) if c and c.strip().lstrip("-*+\u2022 ")]


#: A clause that starts so says what the next clause is for ("To delete files, use `rm`"): the two are one claim.
PURPOSE = ("to ", "in order to ")


def claim_clauses(text: str) -> list[str]:
    """The :func:`clauses` of ``text`` that make a claim: a clause of purpose (:data:`PURPOSE`) is read only joined
    to the clause after it, which is read on its own too. "To delete files, use `rm`." claims using rm to delete
    files, which "Never use `rm` to delete files" denies, while "To delete files, use `trash`." claims nothing it
    denies (the new user's walk of 2026-12-06); "To fix the error, run `chmod -R 777` on the web root" claims the
    running, which "Never run `chmod -R 777` on the web root" denies without a word of the purpose (an adversarial
    review, 2026-12-06)."""
    parts = clauses(text)
    out: list[str] = []
    for k, c in enumerate(parts):
        if c.casefold().startswith(PURPOSE) and k + 1 < len(parts):
            out.append(f"{c}, {parts[k + 1]}")
        else:
            out.append(c)
    return out


#: Words after a denying word that make the two an affirmation ("Don't forget to go back to the CPU", "never fail to",
#: "not only"), a bound ("no more than 3") or an idiom ("No matter which region", "no doubt"): not a denial.
LITOTES = frozenset("forget forgetting fail failing hesitate neglect omit miss only just merely more less fewer longer "
                    "later earlier greater higher lower over under matter doubt".split())


#: How many words after a denying word are read for the words it denies (the claim words among them).
SCOPE_WORDS = 4


def denied(text: str, *, relative: bool = False) -> set[str]:
    """The :func:`stems` that ``text`` denies: for each denying word (:data:`DENY_RE`) not followed by a word of
    :data:`LITOTES` ("Don't forget to ...") nor, unless ``relative``, inside a relative clause (a word of
    :data:`RELATIVE` among the two words before it: a source's "Users who do not have an account can sign up" denies
    no account; a sentence's own "which cannot be laser cooled" is read with ``relative``), the stems of the claim
    words among the :data:`SCOPE_WORDS` words after it ("never be stored" -> "store", "does not currently support SSO" -> "current", "support", "sso"), unless ``text`` also says that
    word outside a denial ("with batched=True ... than its slow counterpart with no batching" denies no batching of
    the claim's)."""
    return _undenied_out(_denial_hits(text, relative=relative), text)


def _denial_hits(text: str, *, relative: bool = False) -> Counter[str]:
    """How often each stem of ``text`` falls in a denial's scope (:func:`denied`, before its last test)."""
    hits: Counter[str] = Counter()
    for m in _denials(text):
        after = WORD_RE.findall(text[m.end():m.end() + 80])[:SCOPE_WORDS]
        before = WORD_RE.findall(text[max(0, m.start() - 40):m.start()])[-2:]
        if (after and after[0].casefold() in LITOTES) or (not relative and any(w.casefold() in RELATIVE for w in before)):
            continue
        hits.update(w for t in after for w in stems(t))
    return hits


def _undenied_out(hits: Counter[str], text: str) -> set[str]:
    """The stems of ``hits`` that ``text`` says no more often than it denies them."""
    if not hits:
        return set()
    said = Counter(w for t in WORD_RE.findall(text) for w in stems(t))
    return {w for w, n in hits.items() if said[w] <= n}


def _denials(text: str):
    """The :data:`DENY_RE` matches of ``text`` that are words of their own, not parts of a name (``--no-sandbox``,
    ``no_proxy``)."""
    for m in DENY_RE.finditer(text):
        if text[m.start() - 1:m.start()] not in JOINED and text[m.end():m.end() + 1] not in JOINED:
            yield m


#: Characters that join a denying word into a name of something (a command-line flag, a variable).
JOINED = frozenset("-_./=")


def denies(text: str) -> bool:
    """Whether ``text`` holds a denying word (:data:`DENY_RE`) not followed by a word of :data:`LITOTES`."""
    for m in _denials(text):
        after = WORD_RE.findall(text[m.end():m.end() + 40])[:1]
        if not after or after[0].casefold() not in LITOTES:
            return True
    return False


def hedged(text: str) -> bool:
    """Whether ``text`` holds a word that makes a denial conditional, partial or a contrast (:data:`HEDGE_RE`)."""
    return HEDGE_RE.search(text) is not None


#: Words that say how many or how often, by kind: ``all`` (every one, every time), ``one`` (one and no other:
#: "only one", "exactly one"), ``some`` (not every one, not every time). "only" alone restricts what follows it
#: ("accepts only POST requests" is "all requests are POST"), and "at least once a day" is every day: neither is read
#: (an adversarial review, 2026-12-06).
QUANTITIES = {
    "all": "all", "every": "all", "each": "all", "always": "all", "alle": "all", "jeder": "all", "tous": "all",
    "toujours": "all",
    "some": "some", "sometimes": "some", "occasionally": "some", "manchmal": "some", "parfois": "some",
}
#: Two-word forms of :data:`QUANTITIES`.
QUANTITY_PAIRS = {("only", "one"): "one", ("just", "one"): "one", ("exactly", "one"): "one", ("nur", "ein"): "one",
                  ("nur", "eine"): "one", ("un", "seul"): "one", ("une", "seule"): "one"}


def quantities(text: str) -> dict[str, str]:
    """The kinds of quantity ``text`` says (:data:`QUANTITIES`), each with the first word that says it:
    ``{"one": "only one"}`` for "only one handler must succeed"; "all" denied ("not every replica", "doesn't
    always") is "some": ``{"some": "not every"}``."""
    words = [w.casefold() for w in WORD_RE.findall(text)]
    out: dict[str, str] = {}
    for i, w in enumerate(words):
        pair = (w, words[i + 1]) if i + 1 < len(words) else None
        if pair in QUANTITY_PAIRS:
            out.setdefault(QUANTITY_PAIRS[pair], " ".join(pair))
        elif w in QUANTITIES:
            denied_all = QUANTITIES[w] == "all" and i and words[i - 1] in ("not", "t", "never", "nicht", "pas")
            out.setdefault("some" if denied_all else QUANTITIES[w], f"not {w}" if denied_all else w)
    return out


@dataclass(frozen=True)
class Clash:
    """A clause of a source that says a claim differently: ``clause`` (its text) and ``how`` ("the other way round",
    or the two quantities: '"only one", not "all"')."""

    clause: str
    how: str

    def reason(self, n: int) -> str:
        """The sentence's reason, for the source ``[n]``."""
        return f'[{n}] says it {self.how}: "{self.clause}"'


def polarity_clash(sentence: str, source: str, question: str | None = None) -> Clash | None:
    """The clause of ``source`` that says a clause of ``sentence`` the other way round, or of another quantity;
    ``None`` when it says none so.

    Each clause of the sentence (:func:`claim_clauses`, ``[n]`` markers removed) with at least :data:`CLAUSE_ROOTS`
    :func:`stems` is compared with the clause of the source's statements (:func:`rag.answer.check.claims.statements`,
    each read in its own words, and each sentence of a statement whole, its clauses' denials kept to their clauses:
    "Do not store passwords, tokens or API keys" denies the storing of API keys) that holds the largest share of those
    stems, at least :data:`CLAUSE_MIN`, and every stem the clause adds to the ``question``. When each such clause
    says it otherwise, the source does (:func:`_otherwise`):
    "Tokens must never be stored in local storage." against "The app should store tokens in local storage [1].";
    "Do not populate result.fingerprints." against "Producers should populate result.fingerprints [1]."; "only one
    handler must succeed" against "All handlers must succeed [1]". A clause the source does not make so is left to the
    word-level check.
    """
    held = _source_clauses(source)
    asked = stems(question) if question else set()
    for part in claim_clauses(strip_markers(sentence)):
        words = stems(part)
        if len(words) < CLAUSE_ROOTS:
            continue
        new = (words - asked) or words
        shares = [(len(words & c.stems) / len(words), c) for c in held]
        best = max((s for s, _ in shares), default=0.0)
        top = [c for s, c in shares if s == best and new <= c.stems]
        if best < CLAUSE_MIN or not top:
            continue
        said = denied(part, relative=True)
        how = [_otherwise(part, words, said, c) for c in top]
        if all(how):
            return Clash(top[0].text, how[0])
    return swap_clash(sentence, source, question)


def swap_clash(sentence: str, source: str, question: str | None = None) -> Clash | None:
    """The :class:`Clash` of the source clause that makes a clause of ``sentence`` with a word of one of the
    :data:`OPPOSITES` groups swapped for another ("The free tier excludes API access." for "The free tier includes
    API access [1]."; :func:`_swap`); ``None`` when none does. Part of :func:`polarity_clash`, and read on its own for
    a sentence restating a yes/no question, which adds no word of its own."""
    held = _source_clauses(source)
    asked = (stems(question) | poles(question).keys()) if question else set()
    for part in claim_clauses(strip_markers(sentence)):
        clash = _swap(part, asked, held)
        if clash:
            return clash
    return None


def _swap(part: str, asked: set[str], held: Sequence[_Clause]) -> Clash | None:
    """The :class:`Clash` of the source clause that makes ``part`` (a clause of the sentence) with one word of an
    :data:`OPPOSITES` group swapped for another (:func:`swapped`), or ``None``. As in :func:`polarity_clash`, the
    clause is the one holding the largest share, at least :data:`CLAUSE_MIN`, of the part's words (its :func:`stems`
    and :func:`poles`; the swapped word counts as held) and every one it adds to the question (``asked``); each such
    clause must swap the word, and neither it nor the part may deny anything (a "does not increase" answer to
    "reduces" is left to the denial rules). Sentences read whole are left out: "required for administrators and
    optional for regular users" holds both words."""
    mine = poles(part)
    if not mine or denies(part):
        return None
    words = stems(pole_text(part)) | mine.keys()
    if len(words) < CLAUSE_ROOTS:
        return None
    new = (words - asked) or words
    scored = []
    for c in held:
        if c.whole:
            continue
        flip = swapped(mine, c.poles)
        have = c.stems | c.poles.keys() | ({flip[2]} if flip else set())
        if new <= have:
            scored.append((len(words & have) / len(words), c, flip))
    best = max((x for x, _, _ in scored), default=0.0)
    top = [(c, flip) for x, c, flip in scored if x == best]
    if best < CLAUSE_MIN or not top or not all(flip and not c.denies and _same_object(part, c.text, flip)
                                               for c, flip in top):
        return None
    c, (its, word, _) = top[0]
    return Clash(c.text, f'"{its}", not "{word}"')


#: Words of :data:`OPPOSITES` that set two things side by side ("faster than", "before"): said the other way round
#: of the other thing, they say the same (:func:`_same_object`).
RELATIONAL = frozenset("more fewer less before after higher lower faster slower larger bigger smaller longer shorter "
                       "earlier later better worse above below cheaper warmer cooler".split())
#: How many words after a swapped word are read for what it is said of ("faster than [the SQLite backend]").
OBJECT_WORDS = 4


def _same_object(part: str, clause: str, flip: tuple[str, str, str]) -> bool:
    """Whether the swapped words of ``part`` and ``clause`` (``flip``: :func:`swapped`) are said of the same thing
    (always, unless the claim's word is :data:`RELATIONAL`):
    the first claim word (:func:`stems`) after each, or after the "than" that follows it within :data:`OBJECT_WORDS`
    words, is the same, or either has none. "faster than the SQLite backend" restates "slower than the PostgreSQL
    backend" the other way round, "higher in 2022 than in 2023" "lower than in 2022", and "after preheating the
    oven" "before you start mixing" (a held-out review, 2026-12-07); "after starting the server" and "before starting
    the server" are one order swapped, "more than 5 users" and "fewer than 5 users" one bound."""
    its, word, _ = flip
    if word.casefold() not in RELATIONAL:
        return True

    def of(text: str, w: str) -> str | None:
        words = WORD_RE.findall(pole_text(text))
        at = next((i for i, x in enumerate(words) if x.casefold() == w.casefold()), None)
        if at is None:
            return None
        rest = words[at + 1:]
        than = next((i for i, x in enumerate(rest[:OBJECT_WORDS]) if x.casefold() == "than"), None)
        for x in rest[than + 1 if than is not None else 0:]:
            st = stems(x)
            if st:
                return next(iter(st))
        return None

    mine, theirs = of(part, word), of(clause, its)
    return mine is None or theirs is None or mine == theirs


@dataclass(frozen=True)
class _Clause:
    """A clause of a source, read once: its ``text``, :func:`stems`, :func:`denied` stems, whether it
    :func:`denies`, and whether its statement denies anything in the broad sense
    (:data:`rag.answer.check.short_answers.NEGATION_RE`) or is :func:`hedged`."""

    text: str
    stems: frozenset[str]
    denied: frozenset[str]
    denies: bool
    statement_negated: bool
    statement_hedged: bool
    #: A sentence read whole beside its clauses (for its denials), not a clause of its own; and those clauses.
    whole: bool = False
    parts: tuple["_Clause", ...] = ()

    @property
    def poles(self) -> dict[str, str]:
        """:func:`poles` of the clause (read once per clause text)."""
        return clause_poles(self.text)


@lru_cache(maxsize=64)
def _source_clauses(source: str) -> tuple[_Clause, ...]:
    """The :class:`_Clause` s of ``source``, read once per source text (an answer asks of each source per sentence)."""
    out = []
    for st in statements(source):
        own = st.own()  # a list item's lead ("Developers should avoid the following:") counts for its statement
        negated = NEGATION_RE.search(st.context) is not None
        lead = st.context[:-len(own)] if own and st.context != own and st.context.endswith(own) else ""
        # a lead that denies what follows it ("Do not:", "Avoid the following:") denies each of its items whole
        items_denied = bool(lead.rstrip().endswith(":") and denies(lead) and not _denial_hits(lead))
        for piece in ([own] if own.lstrip().startswith("|") else SENTENCE_END_RE.split(own)):
            # a hedge holds within its sentence (and a list's lead line): "Never use `rm` here; use `trash` instead."
            # still denies using rm (the new user's walk of 2026-12-06), and so does "Only use the supplied brush. Do
            # not clean the sensor with alcohol." cleaning with alcohol (an adversarial review, 2026-12-06)
            hedge = (lead.rstrip().endswith(":") and hedged(lead)) or hedged(piece)
            parts = clauses(piece)
            read = tuple(_Clause(c, frozenset(stems(c)), frozenset(stems(c) if items_denied else denied(c)),
                                 denies(c) or items_denied, negated, hedge) for c in parts)
            out.extend(read)
            if len(parts) > 1 and not piece.lstrip().startswith("|"):  # each sentence whole too (a table row's
                # cells stay apart): "Do not store passwords, tokens or API keys" denies each of them
                hits = sum((_denial_hits(c) for c in parts), Counter())
                out.append(_Clause(piece.strip(), frozenset(stems(piece)), frozenset(_undenied_out(hits, piece)),
                                   denies(piece), negated, hedge, whole=True, parts=read))
    return tuple(out)


def _otherwise(part: str, words: set[str], said: set[str], clause: _Clause) -> str | None:
    """How the source's ``clause`` says the sentence's clause ``part`` (:func:`stems` ``words``, denied stems
    ``said``) otherwise:

    * "the other way round" when the clause denies words of the claim of which the claim denies none, neither its
      statement nor the claim holding a hedge (:func:`hedged`: "Only users who have verified their e-mail can create
      projects" restates "Users who have not verified their e-mail cannot create projects"); or the claim denies a
      word of the clause while the clause's statement denies nothing, even in the broad sense of :data:`rag.answer.check.short_answers.NEGATION_RE` ("keeps tokens in
      memory, not in local storage" is no "keeps tokens in local storage");
    * '"only one", not "all"' when one says "all" and the other "only one" or "some" but not "all"
      (:func:`quantities`);
    * ``None`` when neither."""
    if (clause.denied & words and not clause.denied & said and not clause.statement_hedged and not hedged(part)) or \
            (said & clause.stems and not clause.statement_negated and not clause.denies
             and not _denies_by_opposite(said, max(clause.parts, key=lambda c: len(words & c.stems))
                                         if clause.parts else clause)):
        return "the other way round"
    mine, its = quantities(part), quantities(clause.text)
    if mine and its and not (mine.keys() & its.keys()) and ("all" in mine) != ("all" in its):
        return f'"{next(iter(its.values()))}", not "{next(iter(mine.values()))}"'
    return None


def _denies_by_opposite(said: set[str], clause: _Clause) -> bool:
    """Whether the claim denies a word of an :data:`OPPOSITES` group whose other alternative ``clause`` says (a
    sentence read whole is read by its clause holding most of the claim's words: "Caching reduces latency for
    repeated reads but increases memory usage" says "reduces" of latency): "does not increase latency" is what
    "reduces latency" says (an adversarial review, 2026-12-07: the 0.5B's right "No,
    caching does not increase latency for repeated reads" was left out as said the other way round)."""
    theirs = clause.poles
    return any(st in pole_groups() and st not in theirs and any(opposed(st, o) for o in theirs) for st in said)


def without_denials(text: str) -> str:
    """``text`` with its denying words (:data:`DENY_RE`) blanked: what a "no" answer says apart from saying no."""
    return DENY_RE.sub(" ", text)


def denied_by(sentence: str, source: str, question: str | None = None) -> bool:
    """Whether a statement of ``source`` (:func:`rag.answer.check.claims.statements`, in its own words) says
    ``sentence`` the same way, denying it too: it holds at least
    :data:`rag.answer.check.short_answers.AFFIRM_MIN` of the sentence's :func:`stems` other than its denial (two or
    more), denies one of them (:func:`denied`), holds no hedge (:func:`hedged`) and every name and number of the
    sentence and the ``question``. For a yes/no question answered "no" in its own words ("No, you cannot keep access
    tokens in local storage." from "Access tokens must never be stored in local storage"; "Do not install packages
    from unofficial mirrors." to "Should I install packages from unofficial mirrors?"), which adds no word a source
    could be asked for (the new user's walk of 2026-12-06: such right answers were left out)."""
    body = strip_markers(sentence)
    words = stems(without_denials(body))
    if len(words) < 2:
        return False
    names = specifics(body) | (specifics(question) if question else set())
    for st in statements(source):
        own = st.own()
        if (len(words & stems(own)) / len(words) >= AFFIRM_MIN and denied(own) & words and not hedged(own)
                and all(holds(own, x) for x in names)):
            return True
    return False
