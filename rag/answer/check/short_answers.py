"""Answers short on words (issue 39): a yes/no question's answer, and a one-word answer.

Pure functions on strings, no model, on top of :mod:`rag.answer.check.claims`:

* :data:`YES_NO_RE`, :data:`POLARITY_RE`, :func:`takes_side` - a yes/no question, and a sentence answering it with a
  word of polarity the question lacks ("Do not populate X" to "Should I populate X?");
* :func:`affirmed_by` - a source statement that says "yes" to a sentence restating a yes/no question, with no
  denying word (:data:`NEGATION_RE`) the sentence lacks;
* :func:`code_spans`, :func:`names_code`, :func:`code_answered_by` - the code spans of a sentence that the question
  holds only as plain words ("use `history`" to "How do I see my command history?"): the sentence's own answer;
* :func:`answer_words`, :func:`sole_answer` - what a one-word answer ("Cargo [2].") asserts, and whether its
  statement names it as the only thing of its kind.
"""

from __future__ import annotations

import re

from rag.answer.check.claims import (
    TOKEN_RE,
    holds,
    novel_roots,
    question_roots,
    roots,
    source_roots,
    specifics,
    statements,
)
from rag.text import sentence_spans, strip_markers

#: A yes/no question: it opens on an auxiliary or modal verb ("Should ...?", "Must ...?", "Is ...?", "Can ...?"),
#: after a follow-up's opening conjunction if any ("And can they carry unused days over?": without it, an answer
#: repeating the last turn's "28 days of annual leave" passed as supported in the browser walk of 2026-12-03).
YES_NO_RE = re.compile(r"^\s*(?:(?:and|but|so|also|then|or|ok|okay|well)\b[\s,]*)?"
                       r"(?:is|are|was|were|do|does|did|can|could|should|shall|must|may|might|will|would|has|have"
                       r"|had|need|needs)\b", re.IGNORECASE)
#: Words that take a side on a yes/no question.
POLARITY_RE = re.compile(r"\b(?:yes|no|not|never|cannot|none|must|should|only|always|required|avoid)\b|n't\b",
                         re.IGNORECASE)


#: A "yes" opening an answer's sentence ("Yes, ...", "Yes - ...", "**Yes**.").
_YES_RE = re.compile(r"^[\s*_]*yes\b[\s*_]*[,.!:;-]?\s*", re.IGNORECASE)


def without_yes(sentence: str, question: str | None = None) -> str:
    """``sentence`` without the "yes" that opens it when what follows restates the yes/no ``question`` (holds every
    claim word of it): "Yes, contractors may use SMS codes [1]." to "Can contractors use SMS codes?" (an
    adversarial review, 2026-12-07: no source holds "yes" as a word); not to "... for admin accounts?", which it
    leaves unanswered (a review of that rule, the same day). Without ``question``, the "yes" always goes."""
    rest = _YES_RE.sub("", sentence, count=1)
    if question is not None and rest != sentence and not question_roots(question) <= source_roots(rest):
        return sentence
    return rest


def takes_side(sentence: str, question: str | None) -> bool:
    """Whether ``sentence`` answers the yes/no ``question`` with a word of polarity the question lacks ("Do not
    populate X" to "Should I populate X?"): such a sentence adds a claim though all its content words are the
    question's."""
    if not question or not YES_NO_RE.match(question):
        return False
    said = {m.group(0).casefold() for m in POLARITY_RE.finditer(strip_markers(sentence))}
    return bool(said - {m.group(0).casefold() for m in POLARITY_RE.finditer(question)})


def answer_words(sentence: str, question: str) -> set[str]:
    """The tokens of ``sentence`` (as :func:`specifics` reads them, case-folded) whose claim word the question
    lacks: what a one-word answer ("Cargo [2].", "405.") asserts, each to be found in a statement of its source
    that makes the question's claim (:func:`statement_gaps`), as a name or a number inside a sentence is."""
    new = novel_roots(sentence, question)
    out = set()
    for m in TOKEN_RE.finditer(strip_markers(sentence)):
        tok = m.group(0).rstrip(".,").casefold()
        if tok and roots(tok) & new:
            out.add(tok)
    return out


#: A Markdown code span, as a source writes a command or a name (``rsync``).
_CODE_SPAN_RE = re.compile(r"`([^`\n]{1,80})`")
#: Nouns that name a code span as the thing asked about ("What does the history command show?"): a question that
#: puts one after the span's word asks about the code, and a sentence that gives the code back adds nothing.
_CODE_NOUNS = frozenset({"command", "commands", "function", "functions", "method", "methods", "option", "options",
                         "flag", "flags", "key", "keys", "tool", "tools", "program", "programs", "utility",
                         "keyword", "variable", "class", "module", "package", "setting", "parameter", "argument"})


def names_code(sentence: str, question: str | None) -> set[str]:
    """The code spans of ``sentence`` (case-folded text between backticks) that the question does not ask about:
    it neither writes the span as code nor puts the span's word before a noun naming code ("the history
    command"; "command history" asks for a command). Such a span is the answer's own word although the question
    holds its letters: "To see your command history, use `history`." answers "How do I see my command history?"
    with a command (a new user's walk, 2026-12-06: it was struck through as a restatement of the question). Empty
    without a question."""
    if not question:
        return set()
    asked = code_spans(question)
    words = [m.group(0).casefold() for m in TOKEN_RE.finditer(question)]
    about = {w for w, nxt in zip(words, words[1:]) if nxt in _CODE_NOUNS}
    return {c for c in code_spans(strip_markers(sentence)) if c not in asked and c not in about}


def code_answered_by(sentence: str, source: str, question: str | None) -> bool:
    """Whether a sentence of ``source`` writes every code span of :func:`names_code` as code, and no other code span
    the question lacks, holds every claim word of ``sentence`` with it and no denying word it lacks
    (:data:`NEGATION_RE`; an adversarial review, 2026-12-06: "Never use `rm` to delete files here; use `trash`").
    "To see recent commands, use `history`." holds "To see your command history, use `history`."; it does not hold
    "To search through the command history in Bash, use `history`." (the answer to "Which key combination searches
    ...?" is another: dev c01 of the real documents). False when the sentence names no such span."""
    code = names_code(sentence, question)
    if not code:
        return False
    body = strip_markers(sentence)
    words, denials, asked = roots(body), negations(body), code_spans(question or "")
    for st in statements(source):
        own = st.own()
        for unit in (own[a:b] for a, b in sentence_spans(own)):
            if _code_answers(unit, code, words, denials, asked):
                return True
    return False


def _code_answers(unit: str, code: set[str], words: set[str], denials: set[str], asked: set[str]) -> bool:
    """:func:`code_answered_by` for one sentence ``unit`` of a source."""
    spans = code_spans(unit)
    # it names no other command (the answer may be that one: "use `history` to list it; to search it, press
    # `Ctrl-R`") and denies nothing the sentence does not ("Never use `rm` here; use `trash`")
    return bool(code <= spans and not (spans - code - asked) and words <= source_roots(unit)
                and not (negations(unit) - denials))


def code_spans(text: str) -> set[str]:
    """The Markdown code spans of ``text``, case-folded and stripped (```history``` -> ``history``)."""
    return {c for c in (x.strip().casefold() for x in _CODE_SPAN_RE.findall(text)) if c}


def code_missing(sentence: str, source: str, question: str | None = None) -> list[str]:
    """The code spans of ``sentence`` (:func:`code_spans`) that ``source`` does not hold as written, white space
    collapsed, case-folded, sorted; spans the ``question`` holds are not asked for. A command is exact: "Run `ufw deny
    8080` [1]." passed on "run `ufw allow 8080`", every word but one being the source's, and "- Run `ufw disable`"
    on "Do not disable the firewall ... run `ufw allow 8080`" (an adversarial review, 2026-12-06)."""
    held = " ".join(source.casefold().split())
    asked = code_spans(question) if question else set()
    return sorted(c for c in code_spans(sentence) - asked if " ".join(c.split()) not in held)


#: A token with a joining mark inside (``ctrl-u``, ``file.txt``, ``snake_case``).
_JOINED_RE = re.compile(r"[^\W_][-_./][^\W_]")


def _candidates(unit: str) -> dict[str, set[str]]:
    """The things a one-word answer could name in ``unit``, by kind, case-folded: numbers and names
    (:func:`specifics`), code spans, and joined tokens (:data:`_JOINED_RE`)."""
    spec = specifics(unit)
    numbers = {x for x in spec if any(ch.isdigit() for ch in x)}
    tokens = [m.group(0).rstrip(".,").casefold() for m in TOKEN_RE.finditer(strip_markers(unit))]
    return {"number": numbers, "name": spec - numbers,
            "code": code_spans(unit),
            "joined": {t for t in tokens if _JOINED_RE.search(t)}}


def sole_answer(word: str, source: str, question: str) -> bool:
    """Whether some statement of ``source`` names ``word`` (a one-word answer, :func:`answer_words`) as the only thing
    of its kind there that the question does not name: a number among numbers, a name among names, a code span among
    code spans. "scp [1]." does not answer "Which tool allows recovery of a transfer?" from "using `rsync` instead of
    `scp` allows recovery of a transfer", nor "Vim [1]." the simplest editor from a sentence naming three (an
    adversarial review of the one-word rule, 2026-12-06); a plain lower-case word is never sole."""
    asked = specifics(question) | {m.group(0).rstrip(".,").casefold() for m in TOKEN_RE.finditer(question)}
    for st in statements(source):
        unit = st.own()
        if not holds(unit, word):
            continue
        found = _candidates(unit)
        kinds = [k for k, v in found.items() if word in v]
        if kinds and all(not (found[k] - {word} - asked) for k in kinds):
            return True
    return False


#: Words that deny, bar or turn aside what a statement says (English, German, French): a source statement holding
#: one the sentence lacks does not affirm it ("Commit the sources, not the derived files" is no "yes" to "Should you
#: commit derived files?"; "Use Yields: rather than Returns:" is none to "Should I use Returns:?"; "should be
#: avoided", "is unable to", "rarely", "only one": an adversarial review of the rule, 2026-12-06).
NEGATION_RE = re.compile(
    r"\b(?:no|not|never|cannot|none|nor|neither|without|avoid\w*|discourag\w*|prohibit\w*|forbid\w*|unable|"
    r"fail(?:s|ed|ing)?|rarely|seldom|hardly|stop(?:s|ped)?|instead|rather|only|except|unless|deprecated|obsolete|"
    r"nicht|nie|niemals|statt|anstatt|ne|pas|jamais|plutôt)\b|n['\u2019]t\b|\bkein", re.IGNORECASE)
#: A source statement affirms a sentence when its own words hold at least this share of the sentence's claim roots.
AFFIRM_MIN = 0.75


def negations(text: str) -> set[str]:
    """The denying words of ``text`` (:data:`NEGATION_RE`), case-folded."""
    return {m.group(0).casefold() for m in NEGATION_RE.finditer(text)}


def affirmed_by(sentence: str, source: str, question: str | None = None) -> bool:
    """Whether a statement of ``source`` (:func:`statements`) says what ``sentence`` says: its own words
    (:meth:`Statement.own`, not the sentence before it) hold at least :data:`AFFIRM_MIN` of the sentence's claim roots
    (two or more) and every name and number of the sentence and the ``question`` (:func:`specifics`), and it holds no
    denying word (:data:`NEGATION_RE`) the sentence lacks. For a sentence that restates a yes/no question as a
    statement ("All requirements must succeed for an authorization policy to pass [2]." to "Must all requirements
    succeed for an authorization policy to pass?"): it answers "yes", and adds no word a source could be asked for
    (issue 39). "Paxos-based systems often use randomized election timeouts." does not affirm "Raft uses randomized
    election timeouts"."""
    words = roots(sentence)
    if len(words) < 2:
        return False
    body = strip_markers(sentence)
    deny = negations(body)
    names = specifics(body) | (specifics(question) if question else set())
    for st in statements(source):
        own = st.own()
        if (len(words & source_roots(own)) / len(words) >= AFFIRM_MIN and negations(own) <= deny
                and all(holds(own, x) for x in names)):
            return True
    return False
