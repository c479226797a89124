"""Follow-up questions: a question that leans on the conversation becomes a standalone one before retrieval (issue 16).

"And for part-time staff?" or "How many problems does it contain?" says
nothing searchable on its own. :func:`rewrite_followup` turns it into a
standalone question from the earlier questions of the chat, before
retrieval (and before any other query rewriting of the retrieval layer,
which then works on the standalone text).

Three ways, all behind the same cheap test (:func:`needs_context`: a
pronoun or demonstrative, an opening "and / what about / how about", or
at most :data:`SHORT_CONTENT_WORDS` content words, none a name), so a standalone
question is never touched:

* ``keywords`` (default): the follow-up, then in brackets the
  :data:`KEYWORDS` rarest words (highest IDF in the store) of the previous
  question that it does not already use (``How many problems does it
  contain? (HumanEval benchmark)``). No model: the gate still decides
  before any model is loaded, and it costs a lookup.
* ``context``: the follow-up, then the whole previous question in
  brackets (``... (after: What is the HumanEval benchmark?)``); its
  common words pull the previous answer's chunks into the top 4.
* ``model``: the local GGUF rewrites it with a short prompt
  (:func:`rewrite_messages`) through :mod:`rag.answer.generate`'s
  cached-prefix generator. Slower (a generation before retrieval), the
  0.5B often answers with the previous question itself, and the refusal
  then depends on the model's words.

Which one is the default was measured (R@4 of the second turn on
``tests/data/followup_dialogues.jsonl``, both shared corpora): see
``docs/answers.md``, section "Follow-up questions".
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from rag.answer.cite import Citation
from rag.answer.generate import Generator, TextGenerator, get_generator
from rag.question import analyse
from rag.settings import Settings
from rag.text import TermStats, tokenize


class RewriteMethod(StrEnum):
    """How a follow-up becomes standalone: ``keywords`` or ``context`` (no model), ``model`` (the GGUF), ``off``."""

    KEYWORDS = "keywords"
    CONTEXT = "context"
    MODEL = "model"
    OFF = "off"


#: How many of the previous question's rarest words the ``keywords`` rewrite adds (1, 2 and 3 were measured
#: on the course dialogues: 14, 14 and 15 of 15 second turns found in the top 4; 3 then held on pdf-dev).
KEYWORDS = 3


#: A follow-up with at most this many content words (stop and question words dropped), none of them a name
#: (a capital or a digit after the first word), is taken to lean on the conversation ("Up to how many?").
#: Not 3: "When does the bike shed close?" (bike, shed, close) is a new question, not a follow-up.
SHORT_CONTENT_WORDS = 2

#: A question with a pronoun is still standalone when it names something (a capitalised word after the first) and
#: has at least this many content words: the pronoun points inside it. The 35 follow-ups of
#: tests/data/followup_dialogues.jsonl with a pronoun have at most 4 (found trying the app: "What is Time to First
#: Token and which inference phase affects it?" was searched with the previous question's words).
SELF_CONTAINED_WORDS = 5

#: A question this long (content words) states its own subject whatever pronoun it holds: a user's question
#: describes the situation ("people complain our bot sits there forever before the first word appears - which
#: part of generation causes that?"). The dialogues' follow-ups with a pronoun have at most 8; 11 of the 14 dev
#: questions in users' wording (of 108 standalone questions) that the pronoun rule took for follow-ups have 10+.
LONG_QUESTION_WORDS = 10

#: Question and auxiliary words that say nothing about the subject (on top of :data:`rag.text.STOPWORDS`).
QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how does do did is are was were can could should would will may "
    "might must shall i you we me my our your up many much get gets got about tell explain mean means kind sort "
    "wie was wer wann wo warum welche welcher welches ist sind kann".split())

_OPENERS = re.compile(
    r"^\s*(?:and|but|also|or|so|then|what about|how about|what if|same for|und|aber|et|y|e)\b", re.IGNORECASE)
# Words that point back at something said before. "that" and "there" only where they cannot be a relative
# pronoun or the "there is" construction; "one" only after a determiner ("the second one").
_POINTERS = re.compile(
    r"\b(?:it|its|itself|they|them|their|theirs|themselves|he|him|his|she|hers|this|these|those|former|latter"
    r"|es|sie|er|ihn|ihm|dies|diese|dieser|dieses|dort|dabei|dafür|davon)\b"
    r"|\bthat(?=\s*(?:[?.!,]|$|\s+(?:one|ones|is|was|does|did|do|mean|means|work|works)\b))"
    r"|\b(?:for|with|about|of|in|on|from|to|at|by|into|like|than|using|use|building|build|is|does|do|did)\s+that\b"
    r"|(?<!\bis\s)(?<!\bare\s)\bthere\b(?!\s+(?:is|are|was|were|be|'s)\b)"
    r"|\b(?:the|that|this|which|first|second|third|last|other|same)\s+ones?\b",
    re.IGNORECASE)


#: "it" that points at nothing: "Is it safe to ...", "is it worth ...", "How long does it take to ..." (issue 29:
#: "Is it safe to transplant tomato seedlings outdoors?" was taken for a follow-up).
_DUMMY_IT = re.compile(
    r"\b(?:is|was|would|will|isn't|wasn't)\s+it\s+(?=(?:[\w-]+\s+){0,2}?(?:to|worth)\b)"
    r"|\bit\s+(?:is|was|'s)\s+(?=(?:[\w-]+\s+){0,2}?to\b)"
    r"|\bdoes\s+it\s+take\b(?=.*\bto\b)|\bit\s+takes\b(?=.*\bto\b)",
    re.IGNORECASE)

#: The asker's own thing names the subject ("How do I renew my passport?", "Who approves our expenses?"): a short
#: question about it is a new question, not a follow-up (issue 29).
_OWN = re.compile(r"\b(?:my|our|mine)\s+[^\W\d_]", re.IGNORECASE)

#: "What is micromotion?", "What are tensor cores?": a definition asked of a bare noun phrase (no article, no
#: pronoun) names its subject (issue 29; "What does the name mean?" and "What is the deadline?" stay follow-ups).
_DEFINITION = re.compile(
    r"^\s*(?:what|who)\s+(?:is|are|was|were)\s+(?!(?:the|a|an|this|that|these|those|it|its|they|their|he|she|"
    r"him|her|his|there|here)\b)[^\W_][\w-]*(?:\s+[^\W_][\w-]*){0,3}\s*\?*\s*$",
    re.IGNORECASE)


#: Words after which a "that" with a verb after it points back ("What does that mean?", "Why is that so?", "and
#: that works?"); after any other word it opens a relative clause ("a request body that is too large").
_BEFORE_POINTING_THAT = QUESTION_WORDS | frozenset(
    "and but or so then not also of for with about in on from to at by into like than using use is are was were "
    "do does did".split())
_LAST_WORD = re.compile(r"([^\W\d_]+)\W*$")


def _relative_that(text: str, m: re.Match[str]) -> bool:
    """Whether the pointer ``m`` of ``text`` is a "that" opening a relative clause, not pointing back: a verb
    follows it and the word before it is no question, auxiliary or function word ("Which status code rejects a
    request body that is too large?" was read as a follow-up, a new user's walk of 2026-12-06)."""
    if m.group(0).casefold() != "that" or not text[m.end():].strip(" \t?!.,"):
        return False
    before = _LAST_WORD.search(text[max(0, m.start() - 40):m.start()])
    return before is not None and before.group(1).casefold() not in _BEFORE_POINTING_THAT


class Signal(StrEnum):
    """Why a question is taken for a follow-up (:func:`followup_signal`): it opens with a connective
    (``opener``), points back with a pronoun or demonstrative (``pointer``), or is short and names nothing
    (``short``, the weakest: a short new question looks the same, "Where is the cafeteria?")."""

    OPENER = "opener"
    POINTER = "pointer"
    SHORT = "short"


def followup_signal(question: str) -> Signal | None:
    """The cheap signal that ``question`` depends on the previous turn (no model; microseconds), or ``None``.

    ``opener`` when it opens with a connective ("and ...?", "what about ...?"); ``pointer`` when it holds
    a pronoun or demonstrative pointing back ("it", "they", "that one", "for
    that staining", "there", German "es", "dort", ...) in a question that does not name
    its own subject at length (:data:`SELF_CONTAINED_WORDS`); ``short`` when it has
    at most :data:`SHORT_CONTENT_WORDS` content words, none of them a name
    ("Up to how many?" is short; "What is FAISS?" names its subject).

    A question that names its own subject is standalone (issue 29): an "it" that points at nothing ("Is it
    safe to ...?", :data:`_DUMMY_IT`) is no pointer, and a short question about the asker's own thing ("How do
    I renew my passport?") or asking what a bare noun phrase is ("What is micromotion?") is not short. The
    store decides the rest (:class:`rag.answer.conversation.Conversation`: a ``short`` question the gate
    answers as typed stays as typed; a rewrite whose passages lose the question's own words,
    :func:`keeps_own_subject`, is dropped).
    """
    if not question.strip():
        return None
    if _OPENERS.search(question):
        return Signal.OPENER
    content = [t for t in analyse(question).tokens if t not in QUESTION_WORDS]
    words = [w for w in re.findall(r"[^\W_]+", question)[1:] if w != "I"]
    names = any(re.search(r"[A-Z0-9]", w) for w in words)
    plain = _DUMMY_IT.sub(lambda m: " " * len(m.group()), question)
    pointer = next((m for m in _POINTERS.finditer(plain) if not _relative_that(plain, m)), None)
    own = _OWN.search(question)
    if pointer and not (own and own.start() < pointer.start()):  # "renew my passport before it expires": inside
        # "What is Time to First Token and which phase affects it?" names its own subject: the pronoun points
        # inside the question. A follow-up's pronoun comes with few words ("By how much did it grow in FY 2024?").
        named = any(re.search(r"[A-Z]", w) for w in words)
        inside = len(content) >= LONG_QUESTION_WORDS or (named and len(content) >= SELF_CONTAINED_WORDS)
        return None if inside else Signal.POINTER
    if own or _DEFINITION.match(question):
        return None
    return Signal.SHORT if len(content) <= SHORT_CONTENT_WORDS and not names else None


def needs_context(question: str) -> bool:
    """Whether ``question`` carries a follow-up signal (:func:`followup_signal`)."""
    return followup_signal(question) is not None


@dataclass(frozen=True)
class Rewrite:
    """A question as asked and as searched.

    ``question`` what the user typed; ``standalone`` what retrieval, the
    gate and the model get (equal to ``question`` when nothing was
    rewritten); ``method`` the :class:`RewriteMethod` value that produced it,
    ``""`` when the question was left alone; ``ms`` time spent; ``declined`` a rewrite that was tried and
    dropped because the passages it found do not speak of what the question itself names
    (:func:`keeps_own_subject`; ``""`` otherwise).
    """

    question: str
    standalone: str
    method: str = ""
    ms: float = 0.0
    declined: str = ""

    @property
    def rewritten(self) -> bool:
        return self.standalone != self.question


def own_words(question: str) -> list[str]:
    """The words ``question`` itself asks about: its :func:`rag.text.tokenize` terms that are no question or
    auxiliary word (:data:`QUESTION_WORDS`), in order, each once."""
    return [t for t in analyse(question).ordered_terms if t not in QUESTION_WORDS]


def _stem(term: str) -> str:
    """A crude stem for matching a question's word with a passage's: a plural ``s`` dropped, then the first 5
    characters ("renew" / "renewal", "connect" / "connection", "open" / "opens")."""
    if len(term) > 3 and term.endswith("s") and not term.endswith("ss"):
        term = term[:-1]
    return term[:5]


#: A word of the question held by more than this many times as many chunks as its rarest word held by any ("use" in
#: 51 of a store's chunks, "switzerland" in 2) names no subject of its own for :func:`keeps_own_subject`.
RARER = 5


def keeps_own_subject(question: str, passages: Sequence[str], stats: TermStats | None = None) -> bool:
    """Whether a follow-up's rewrite found passages that still speak of what ``question`` itself names.

    ``passages`` the contents of the chunks the rewritten question retrieves first (the sources it would get).
    True when the question has no word of its own ("Up to how many?") or at least one of its own words
    (:func:`own_words`, matched on a 5-character stem) is in a passage. False means the previous question's
    words carried the search off to the old topic: "How do I renew my passport? (annual leave full)" found
    the leave policy, which says nothing of passports, and was answered from it (arch1's browser walk,
    issue 29) where the question as typed is refused. Such a question names its own subject: it is standalone.
    With ``stats`` (the store's :class:`rag.text.TermStats`), only the question's rarer words are read: those some chunk
    holds, in at most :data:`RARER` times as many chunks as its rarest such word (a word no chunk holds is in no
    passage).
    """
    words = own_words(question)
    if stats is not None and stats.n_chunks:  # only the words that name something: "what currency do they use in
        # switzerland?" after a question on exports kept its rewrite, the export passages saying "use" (a new user's
        # walk, 2026-12-07)
        held = [stats.df.get(t, 0) for t in words if stats.df.get(t, 0)]
        words = [t for t in words if 0 < stats.df.get(t, 0) <= RARER * min(held)] if held else words
    own = {_stem(t) for t in words}
    if not own:
        return True
    return any(_stem(t) in own for p in passages for t in tokenize(p))


def store_idf(stats: TermStats) -> Callable[[str], float]:
    """``term -> idf`` over a store's chunks (:meth:`rag.text.TermStats.idf`), 0 for a term no chunk holds."""
    return lambda term: stats.idf(term) if stats.df.get(term) else 0.0


#: Prepositions whose phrase a follow-up may put in place of the previous question's ("How do I create an app from
#: the command line?" then "And what about from Visual Studio?"). Not "to": an infinitive's "to" is no contrast.
CONTRAST_PREPOSITIONS = frozenset(
    "from in on with using via for by at under without inside through over von mit in auf für unter ohne".split())

#: Words a contrasting follow-up may open with before its preposition ("And what about from ...?", "But for ...?").
_CONTRAST_OPENERS = frozenset("and but or also so then what how about same und aber".split())

#: Words that end a prepositional phrase of a question besides punctuation and another preposition.
_PHRASE_ENDS = frozenset("and or but if when while because so than whereas und oder aber wenn weil".split())


def replaced_words(question: str, previous: str) -> set[str]:
    """The terms (:func:`rag.text.tokenize`) of ``previous`` that follow-up ``question`` puts something else in
    place of: when ``question`` opens on a preposition (:data:`CONTRAST_PREPOSITIONS`, after "and", "what about"
    ...), each phrase of ``previous`` after the same preposition, up to the next preposition, conjunction or
    punctuation mark. "And what about
    from Visual Studio?" after "How do I create a new app from the command line?" replaces {command, line}: a new
    user's follow-up was searched as "... (app command line)" and answered about the command line (2026-12-06)."""
    said = [w.casefold() for w in re.findall(r"[^\W_]+", question)]
    lead = next((w for w in said if w not in _CONTRAST_OPENERS), None)
    if lead not in CONTRAST_PREPOSITIONS:  # "Before building it, which are dropped for being short?" contrasts nothing
        return set()
    preps = {lead}
    out: set[str] = set()
    phrase: list[str] | None = None
    for m in re.finditer(r"[^\W_]+|[,.;:?!()]", previous):
        w = m.group(0).casefold()
        ends = not w[0].isalnum() or w in CONTRAST_PREPOSITIONS or w in _PHRASE_ENDS
        if ends and phrase is not None:
            out.update(tokenize(" ".join(phrase)))
            phrase = None
        if w in preps:
            phrase = []
        elif phrase is not None and not ends:
            phrase.append(m.group(0))
    if phrase:
        out.update(tokenize(" ".join(phrase)))
    return out


def with_keywords(question: str, previous: str, idf: Callable[[str], float], n: int = KEYWORDS) -> str:
    """The ``keywords`` rewrite: ``question (w1 w2 w3)``, the ``n`` words of ``previous`` with the highest ``idf``.

    Words are :func:`rag.text.tokenize` terms that are not question words
    (:data:`QUESTION_WORDS`), not already in ``question`` and not put in place of by it (:func:`replaced_words`:
    "and from Visual Studio?" after "... from the command line?"); they are shown
    as written in ``previous`` and in its order. ``idf(term)`` is the
    store's (:func:`store_idf`: 0 for a word no chunk holds, and such words are never added: the rarest
    words of a user's question are often ones the documents never use, "(people complain bot)").
    ``question`` unchanged when no word is left.
    """
    have = analyse(question).terms
    gone = replaced_words(question, previous)
    terms = [t for t in analyse(previous).ordered_terms
             if t not in QUESTION_WORDS and t not in have and t not in gone and idf(t) > 0]
    order = {t: i for i, t in enumerate(terms)}
    picked = sorted(sorted(terms, key=lambda t: (-idf(t), order[t]))[:n], key=order.get)
    if not picked:
        return question.strip()
    surface = {}
    for w in re.findall(r"[^\W_]+", previous):
        for t in tokenize(w, stopwords=frozenset()):
            surface.setdefault(t, w)
    return f"{question.strip()} ({' '.join(surface.get(t, t) for t in picked)})"


def with_context(question: str, previous: str) -> str:
    """The ``context`` rewrite: ``question (after: previous)``, the previous standalone question in brackets.

    Both questions' words reach BM25 and the embedder; the follow-up comes
    first, so it reads as the question and the earlier one as what it is about.
    """
    return f"{question.strip()} (after: {previous.strip()})"


# --------------------------------------------------------------------------- the model's rewrite

#: The system line of the model rewrite; the instruction itself closes each user message (tried on three
#: dialogues with the 0.5B: rules in the system text were ignored, the question was echoed back).
REWRITE_SYSTEM = "You are a helpful assistant."

#: What the model is asked after the two questions.
REWRITE_INSTRUCTION = "Rewrite the follow-up question as a complete question that names its subject."

#: One worked exchange on a neutral topic (the 0.5B copies the form of an example better than it follows rules).
REWRITE_EXAMPLE = ("What is a tomato hornworm?", "How do I get rid of them?", "How do I get rid of tomato hornworms?")


def _rewrite_user(previous: str, question: str) -> str:
    return f"Previous question: {previous.strip()}\nFollow-up question: {question.strip()}\n\n{REWRITE_INSTRUCTION}"


def rewrite_messages(question: str, previous: Sequence[str]) -> list[dict[str, str]]:
    """Chat messages asking the model to make ``question`` standalone given the last of the ``previous`` questions.

    System line, one worked exchange, then the real one; everything before the
    last user message is the same every time, so its KV cache is kept.
    """
    ex_prev, ex_q, ex_a = REWRITE_EXAMPLE
    return [
        {"role": "system", "content": REWRITE_SYSTEM},
        {"role": "user", "content": _rewrite_user(ex_prev, ex_q)},
        {"role": "assistant", "content": ex_a},
        {"role": "user", "content": _rewrite_user(previous[-1] if previous else "", question)},
    ]


def rewrite_probe(question: str, sources: Sequence[Citation]) -> list[dict[str, str]]:
    """The messages :class:`rag.answer.generate.Generator` probes to find the rewrite prompt's shared prefix."""
    return rewrite_messages(question, ["x"] if not sources else ["y"])


def clean_model_rewrite(text: str, question: str) -> str:
    """The model's rewrite as a question: first line, no label or quotes; ``question`` when it gave nothing usable.

    Unusable: empty, or more than three times the words of the follow-up plus 25.
    """
    line = next((x.strip() for x in text.strip().splitlines() if x.strip()), "")
    line = re.sub(r"^(?:rewritten question|standalone question|question)\s*:\s*", "", line, flags=re.IGNORECASE)
    line = line.strip().strip('"“”\'`').strip()
    if not line or len(line.split()) > 3 * len(question.split()) + 25:
        return question
    return line


#: Tokens the model may write for a rewrite (a question, not an essay).
REWRITE_MAX_TOKENS = 64

#: Context of the rewrite's own llama.cpp context, tokens (instruction, example, two questions, the answer).
REWRITE_N_CTX = 1024


def rewrite_generator(settings: Settings) -> Generator:
    """The process-wide rewrite generator for ``settings``' model and threads (its own context and cached prefix).

    Raises :class:`rag.errors.ModelError` when the model file is missing or broken.
    """
    return get_generator(settings.model_path, n_ctx=REWRITE_N_CTX, threads=settings.threads, build=rewrite_probe,
                         flash_attn=settings.flash_attn)


def model_rewrite(question: str, previous: Sequence[str], generator: TextGenerator) -> str:
    """The GGUF's standalone version of ``question`` (greedy, at most :data:`REWRITE_MAX_TOKENS` tokens).

    ``generator`` a :class:`rag.answer.generate.Generator` (its ``complete``).
    Raises :class:`rag.errors.ModelError` from the generator.
    """
    out = generator.complete(rewrite_messages(question, previous), REWRITE_MAX_TOKENS)
    return clean_model_rewrite(out, question)


# --------------------------------------------------------------------------- the entry point


def rewrite_followup(question: str, previous: Sequence[str], method: str = RewriteMethod.KEYWORDS, *,
                     idf: Callable[[str], float] | None = None, get_generator: Callable[[], TextGenerator] | None = None,
                     always: bool = False) -> Rewrite:
    """``question`` as a standalone question, given the ``previous`` questions of the chat as searched (oldest first).

    Nothing happens (``standalone == question``) without previous questions,
    with ``method`` ``"off"``, or when :func:`needs_context` finds no sign of
    a follow-up (unless ``always``). On the last previous question:
    ``"keywords"`` :func:`with_keywords` with ``idf`` (the store's term
    statistics; every word equally rare without it), ``"context"``
    :func:`with_context`, ``"model"`` :func:`model_rewrite` with
    ``get_generator()`` (only called when a rewrite is needed). A previous
    question that was itself rewritten is used as searched, so a chain of
    follow-ups keeps its subject. Raises ``ValueError`` for an unknown method
    and :class:`rag.errors.ModelError` from the model.
    """
    if method not in tuple(RewriteMethod):
        raise ValueError(f"unknown rewrite method {method!r}; allowed: {', '.join(RewriteMethod)}")
    question = question.strip()
    prev = [p for p in previous if p and p.strip()]
    if method == RewriteMethod.OFF or not prev or not (always or needs_context(question)):
        return Rewrite(question, question)
    t0 = time.perf_counter()
    if method == RewriteMethod.KEYWORDS:
        out = with_keywords(question, prev[-1], idf or (lambda t: 1.0))
    elif method == RewriteMethod.CONTEXT:
        out = with_context(question, prev[-1])
    else:
        if get_generator is None:
            raise ValueError("the model rewrite needs get_generator")
        out = model_rewrite(question, prev[-1:], get_generator())
    return Rewrite(question, out, str(method), (time.perf_counter() - t0) * 1000.0)
