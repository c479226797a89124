"""One conversation turn (issue 16; review 2026-12-01, change 1): follow-up -> search and gate -> cite -> stream -> save.

:class:`Conversation` is the one place a chat turn is put together; the app (``app.py`` + ``ui/chat.py``),
the CLI (``rag ask`` with ``--chat`` / ``--history`` / ``--doc``) and the follow-up evaluation
(:mod:`rag.evaluation.followup`) all take their turns here and only render them::

    conv = Conversation(store, settings, chat_id)          # chat_id None: a new chat on the first saved turn
    stream = conv.ask("And for part-time staff?", scope=doc_ids)
    stream.followup.standalone, stream.key_passage         # ready before the model is looked up
    for piece in stream: ...                               # the checked answer streams
    stream.turn                                            # then the frozen Turn (question, answer, ...)
    conv.chat_id                                           # the saved chat holding the turn

A follow-up is made standalone against the earlier questions of the chat as searched
(:func:`rag.answer.followup.rewrite_followup`); the standalone question is searched, gated and cited with
every knob of the one ``settings`` (:func:`rag.answer.pipeline.gated_sources`); the answer streams through
:class:`rag.answer.pipeline.AnswerStream`, whose generator seam is
:func:`rag.answer.pipeline.get_default_generator` (``get_generator`` overrides it for one turn). The turn is
saved in the store's chats (:mod:`rag.store.chats`, as :meth:`rag.answer.history.Turn.to_json`) when its answer is
done, when the model fails (the error kept), and when it is cut off (a new question sent, the page left:
kept with :data:`INTERRUPTED`), as the app has kept turns since issue 16.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from rag.answer.advice import Searched
from rag.answer.cite import Citation, locator_label
from rag.answer.followup import (
    Rewrite,
    RewriteMethod,
    Signal,
    followup_signal,
    keeps_own_subject,
    own_words,
    rewrite_followup,
    rewrite_generator,
    store_idf,
)
from rag.answer.gate import GateResult
from rag.answer.generate import TextGenerator
from rag.answer.history import Candidate, Turn
from rag.answer.pipeline import AnswerStream, gated_sources, no_generation_answer, search_and_gate, what_was_searched
from rag.answer.record import Answer
from rag.errors import RagError, StoreError
from rag.settings import Settings

if TYPE_CHECKING:
    from rag.index.embed import Encoder
    from rag.store.store import Store
    from rag.text import TermStats

#: The note a turn keeps when its answer was cut off before the end (Streamlit stops a run when a new question
#: is sent or the page is left while the model writes).
INTERRUPTED = ("Stopped before the answer was finished (a new question was sent or the page was left); "
               "ask it again for the answer.")


class TurnStream(AnswerStream):
    """One turn's :class:`rag.answer.pipeline.AnswerStream`, which ends in a frozen :class:`rag.answer.history.Turn`
    (:attr:`turn`) and saves it.

    ``followup`` the :class:`rag.answer.followup.Rewrite` (``question`` as typed, ``standalone`` as searched,
    ``method``); ``previous`` the earlier questions it was made standalone against; ``scope`` the document ids
    it was asked within (``None``: all). Iterating streams the answer; at its end, on a
    :class:`rag.errors.RagError` (then re-raised, the turn keeping the error) or on an interruption
    (``GeneratorExit``, Streamlit's stop: kept with :data:`INTERRUPTED`, then re-raised) :attr:`turn` is made
    and saved, once.
    """

    def __init__(self, conversation: Conversation, followup: Rewrite, previous: Sequence[str],
                 scope: Sequence[str] | None, gate: GateResult, cites: Sequence[Citation], settings: Settings, *,
                 retrieval_ms: float | None = None, get_generator: Callable[[Settings], TextGenerator] | None = None,
                 embedder: Encoder | None = None, term_stats: TermStats | None = None,
                 searched: Searched | None = None, submitted: float | None = None):
        super().__init__(gate, cites, settings, retrieval_ms=retrieval_ms, get_generator=get_generator,
                         embedder=embedder, term_stats=term_stats, searched=searched, submitted=submitted)
        self.conversation = conversation
        self.followup = followup
        self.previous = tuple(previous)
        self.scope = tuple(scope) if scope is not None else None
        self.turn: Turn | None = None

    @property
    def question(self) -> str:
        """The question as typed (``followup.question``)."""
        return self.followup.question

    @property
    def standalone(self) -> str:
        """The question as searched (``followup.standalone``)."""
        return self.followup.standalone

    @property
    def method(self) -> str:
        """The follow-up rewrite that made it standalone (``followup.method``; ``""``: none)."""
        return self.followup.method

    @cached_property
    def candidates(self) -> tuple[Candidate, ...]:
        """Every hit the gate saw, in fused order, with its cosine distance and locator label."""
        hits = self.gate.candidates
        rows = self.conversation.store.chunks([h.chunk_id for h in hits]) if hits else []
        return tuple(Candidate(h.fused_rank, float(h.cosine_distance), locator_label(r)) for h, r in zip(hits, rows))

    def __iter__(self) -> Iterator[str]:
        try:
            yield from super().__iter__()
        except RagError as e:
            self.end(str(e))
            raise
        except BaseException:
            self.interrupt()
            raise
        self.end()

    def without_generation(self) -> Answer:
        """The gate's decision, its citations and the key passage, no model loaded (``ask --no-generate``); saved."""
        self.answer = no_generation_answer(self.gate, self.cites, self.retrieval_ms, self.key_passage, self.searched)
        self.end()
        return self.answer

    def interrupt(self, note: str = INTERRUPTED) -> None:
        """End the turn with ``note`` and no answer, unless it ended already (the caller saw the stop)."""
        self.end(note)

    def end(self, error: str | None = None) -> Turn:
        """Make :attr:`turn` (with ``error``, and then no answer) and save it in the conversation's chat; once:
        a turn that ended already is returned as it was."""
        if self.turn is None:
            fu = self.followup
            self.turn = Turn(question=fu.question, standalone=fu.standalone,
                             answer=None if error else self.answer, error=error, method=fu.method, scope=self.scope,
                             candidates=self.candidates, gate=self.gate)
            self.conversation.keep(self.turn)
        return self.turn


class Conversation:
    """The turns of one chat over ``store`` (a :class:`rag.store.store.Store`), with every knob from ``settings``
    (default the store's).

    ``chat_id`` a saved chat to continue (its questions as searched are the history; ``None``: a new chat
    is created, titled by its first question, when the first turn is saved); ``history`` earlier questions
    as searched, oldest first, before the saved chat's (``ask --history``); ``save`` ``False`` keeps the
    turns out of the store (``ask`` without ``--chat``, the evaluation). Raises
    :class:`rag.errors.StoreError` for an unknown ``chat_id``.
    """

    def __init__(self, store: Store, settings: Settings | None = None, chat_id: int | None = None, *,
                 history: Sequence[str] = (), save: bool = True):
        if chat_id is not None and store.chats.get(chat_id) is None:
            raise StoreError(f"no chat with id {chat_id} in {store.path}")
        self.store = store
        self.settings = settings or store.settings
        self.chat_id = chat_id
        self.saving = save
        saved = [t.standalone for t in store.chats.turns(chat_id)] if chat_id is not None else []
        self.previous: list[str] = [*history, *saved]

    def standalone(self, question: str, rewrite: RewriteMethod | str = RewriteMethod.KEYWORDS, *,
                   always: bool = False, get_generator: Callable[[], TextGenerator] | None = None,
                   scope: Sequence[str] | None = None) -> Rewrite:
        """``question`` made standalone against :attr:`previous` (:func:`rag.answer.followup.rewrite_followup`,
        IDF from the store; the ``model`` rewrite with ``get_generator()``, default the settings' GGUF).

        A question that names its own subject is standalone (issue 29: "How do I renew my passport?" after two
        leave questions was searched with the leave words and answered from the leave policy). Beyond the
        cheap signals (:func:`rag.answer.followup.followup_signal`), the store decides: a question taken for a
        follow-up only for being short is searched as typed when one of its words is in no chunk of the store
        (it names something the documents never mention) or when the gate does not refuse it as typed (it
        names something they hold), and a rewrite is kept only when the passages it retrieves first
        (the top ``max_sources`` within ``scope``) still speak of what the question itself names
        (:func:`rag.answer.followup.keeps_own_subject`). A dropped rewrite is kept in ``Rewrite.declined``.
        ``always`` (the evaluation's forced rewrite) skips both checks.
        """
        rw = rewrite_followup(question, self.previous, rewrite, idf=store_idf(self.store.term_stats()),
                              get_generator=get_generator or (lambda: rewrite_generator(self.settings)),
                              always=always)
        if not rw.rewritten or always:
            return rw
        typed = Rewrite(rw.question, rw.question, "", rw.ms, declined=rw.standalone)
        if followup_signal(rw.question) == Signal.SHORT:
            idf = store_idf(self.store.term_stats())
            if any(idf(t) == 0 for t in own_words(rw.question)):
                return typed  # it names something no document mentions ("parking" in a store of reports)
            gate = search_and_gate(self.store, rw.question, self.settings, scope)
            if not gate.refused:
                return typed
        hits = self.store.search(rw.standalone, k=self.settings.max_sources, doc_ids=scope)
        passages = [r.content for r in self.store.chunks([h.chunk_id for h in hits])]
        return rw if keeps_own_subject(rw.question, passages, self.store.term_stats()) else typed

    def ask(self, question: str, *, scope: Sequence[str] | None = None,
            rewrite: RewriteMethod | str = RewriteMethod.KEYWORDS, followup: Rewrite | None = None,
            get_generator: Callable[[Settings], TextGenerator] | None = None,
            submitted: float | None = None) -> TurnStream:
        """One turn: ``question`` made standalone (``rewrite``; or ``followup`` when the caller already did,
        :meth:`standalone`), searched and gated within ``scope`` (document ids; ``None``: all), cited, and
        ready to stream (a refusal yields nothing and never touches the model). ``get_generator(settings)``
        replaces the default generator for this turn. Raises :class:`rag.errors.ModelError` from a model
        rewrite, ``ValueError`` for an unknown rewrite method.

        The answer's ``first_words_ms`` (issue 41, Deliver 5) runs from ``submitted`` (a ``time.perf_counter()``
        taken when the question was submitted: pass it when the caller made the question standalone itself, or
        waited for the model's slot), default this call, so the rewrite, the search and the prompt are counted.
        """
        submitted = time.perf_counter() if submitted is None else submitted
        rw = followup or self.standalone(question, rewrite, scope=scope)
        gate, cites, ms = gated_sources(self.store, rw.standalone, self.settings, scope)
        turn = TurnStream(self, rw, self.previous, scope, gate, cites, self.settings, retrieval_ms=ms,
                          get_generator=get_generator, embedder=self.store.embedder,
                          term_stats=None if gate.refused else self.store.term_stats(),
                          searched=what_was_searched(self.store, gate, scope, self.settings), submitted=submitted)
        self.previous.append(rw.standalone)
        return turn

    def ensure_chat(self, title: str) -> int | None:
        """The saved chat's id, the chat created now (titled ``title``) when there is none yet or it was deleted
        meanwhile; ``None`` when the turns are not saved. The app calls it before the model writes, so that the
        session knows its chat even when the run is cut off (a new question sent while the answer streamed went
        to a new chat of its own, without the conversation's context: found trying the app, 2026-12-06)."""
        if not self.saving:
            return None
        chats = self.store.chats
        if self.chat_id is None or chats.get(self.chat_id) is None:
            self.chat_id = chats.create(title)
        return self.chat_id

    def keep(self, turn: Turn) -> None:
        """Append ``turn`` to the saved chat (created on the first turn, or again when it was deleted meanwhile)."""
        chat_id = self.ensure_chat(turn.question)
        if chat_id is not None:
            self.store.chats.append(chat_id, turn.question, turn.standalone, dict(turn.to_json()))
