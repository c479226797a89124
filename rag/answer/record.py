"""The result of one question (:class:`Answer`) and its one wire format (:meth:`Answer.to_json` / :meth:`Answer.from_json`).

:meth:`Answer.to_json` is the ``ask --json`` object of issues 4, 5 and 14; ``to_json(full=True)`` adds what
:meth:`Answer.from_json` needs to rebuild the same :class:`Answer` (the format version :data:`ANSWER_FORMAT`,
the model's raw words, every claim-check flag). The chat storage (:mod:`rag.answer.history`) and the saved
answers of ``bench answers --json-out`` both write the full form; :meth:`Answer.from_json` also reads what
they wrote before there was a format key (chat records of version 1, bench rows with ``raw`` / ``first_raw``).
Citations, key passages and claim verdicts are decoded here and nowhere else. :class:`AnswerDict` names the
wire shape (what ``ask --json``, the chats and the HTTP API carry).

An :class:`Answer` is frozen and holds what happened; it is judged once, when it is made
(:func:`rag.answer.check.verdict.judge`, into :attr:`Answer.judged`): this module keeps no verdict rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from rag.answer.advice import Advice, Searched, advise
from rag.answer.check.attribute import ClaimVerdict, SentenceAttribution
from rag.answer.check.judged import AnswerFrom, Judged
from rag.answer.check.verdict import judge
from rag.answer.cite import Citation, citation_from_json, citation_json
from rag.answer.gate import GateResult
from rag.answer.key_passage import KeyPassage
from rag.answer.translate import searched_as_line
from rag.types import AnswerVerdict, Verdict

if TYPE_CHECKING:
    from rag.answer.check.probes import TokenProbs, YesNo

__all__ = ["ANSWER_FORMAT", "Answer", "AnswerDict", "AnswerFrom", "Judged", "SentenceDict", "sentence_from_json"]

#: The version of :meth:`Answer.to_json`'s full form (the ``format`` key). Objects without one are read as
#: format 1: chat records written before it (``text``, ``raw_text``, ``sentences``, ``why``, ``notice``) and
#: ``bench answers`` rows (``model_answer``, ``raw``, ``first_raw``, ``answer_sentences``). Format 3 (issue 24):
#: the top-level ``verdict`` is the answer's (:class:`rag.types.AnswerVerdict`, with ``verdict_reason``), kept
#: as it was shown; before, it repeated the gate's (still ``gate.verdict``), and the answer's is recomputed.
ANSWER_FORMAT = 3


class SentenceDict(TypedDict):
    """One sentence of ``answer_sentences`` (:meth:`rag.answer.check.attribute.SentenceAttribution.to_json`); the full
    form adds every claim-check flag."""

    text: str
    cited: list[int]
    supported_by: list[int]
    unsupported: bool
    inferred: bool
    verdict: str
    reason: str
    cites: list[int]
    miscited: NotRequired[bool]
    declines: NotRequired[bool]
    claim: NotRequired[bool]
    dangling: NotRequired[bool]
    echo: NotRequired[bool]
    missing: NotRequired[list[str]]


class AnswerDict(TypedDict):
    """The JSON of one answer (:meth:`Answer.to_json`): ``ask --json``'s object, a saved chat turn's answer, the
    HTTP API's answer. The first keys are always there; ``notice``/``gate``/``retrieval`` when a gate decided,
    ``key_passage`` when the gate passed, the generation keys when the model ran, the ``full`` keys in the
    stored form. Times in ms, distances and scores rounded (see :meth:`Answer.to_json`)."""

    query: str
    threshold: float
    refused: bool
    refusal: str | None
    answer: str | None
    citations: list[dict[str, Any]]
    verdict: str
    verdict_reason: str
    confidence: float | None
    searched: NotRequired[dict[str, Any]]
    advice: NotRequired[dict[str, Any]]
    notice: NotRequired[str | None]
    gate: NotRequired[dict[str, Any]]
    retrieval: NotRequired[dict[str, Any]]
    key_passage: NotRequired[dict[str, Any]]
    answer_sentences: NotRequired[list[SentenceDict]]
    invalid_citations_removed: NotRequired[int]
    model: NotRequired[str | None]
    retrieval_ms: NotRequired[float | None]
    ttft_ms: NotRequired[float | None]
    first_words_ms: NotRequired[float | None]
    generation_ms: NotRequired[float | None]
    tokens: NotRequired[int]
    read_spans: NotRequired[dict[str, list[list[int]]]]
    model_answer: NotRequired[str | None]
    answer_from: NotRequired[str]
    off_key: NotRequired[bool]
    note: NotRequired[str | None]
    reasked: NotRequired[bool]
    format: NotRequired[int]
    raw_text: NotRequired[str | None]
    first_text: NotRequired[str | None]
    links_removed: NotRequired[int]
    dropped_sources: NotRequired[list[int]]
    nearest_distance: NotRequired[float | None]


@dataclass(frozen=True)
class Answer:
    """The result of one question: what happened, judged once (:attr:`judged`).

    ``gate`` the gate's decision (:class:`rag.answer.gate.GateResult`: the threshold, refusal and nearest distance
    are read from it; a refusal has ``text`` ``None`` and no model ran); ``text`` the model's answer as streamed
    (invalid markers and links removed), ``None`` when generation was not asked for; ``ttft_ms`` runs from the
    end of retrieval (excerpts and prompt fitting included) to the model's first token, the model's share;
    ``first_words_ms`` (issue 41, Deliver 5: the one "first words" the app, the CLI, the API and ``bench speed``
    report) from the question's submission (follow-up rewrite, search, gate, citations, model lookup, excerpts
    and prompt included) to the first cleaned words handed on to the screen or stdout; ``citations`` the numbered
    sources the model saw (all the gate's sources without generation); ``sentences`` the claim check's verdict
    per sentence (:class:`rag.answer.check.attribute.SentenceAttribution`); ``invalid_citations_removed`` count of
    ``[n]`` numbers that referred to no source; ``links_removed`` the model's links/URLs and echoed source-header
    lines removed; ``model`` the GGUF file name; timings in ms; ``tokens`` generated tokens; ``dropped_sources``
    indices left out of the prompt for lack of context; ``raw_text`` the model's own words; ``read_spans`` per
    source number the ``(start, end)`` character ranges of its quote the model read, for sources it read only
    in part (:mod:`rag.answer.excerpt`; absent = read whole); ``key_passage`` the verbatim sentence(s) of the
    sources that best answer the question (:mod:`rag.answer.key_passage`), shown before the model writes;
    ``saved_verdict`` the ``(verdict, reason)`` a saved answer was shown with (kept, not re-judged) and
    ``saved_confidence`` its probability; ``token_probs`` / ``yes_no`` what the model's own probes said of the
    answer (:mod:`rag.answer.check.probes`, issue 39; ``None`` when they did not run), read by the combiner that judges it;
    ``searched`` what was searched (:class:`rag.answer.advice.Searched`: the documents in scope, the closest
    passages, the knobs' defaults; ``None`` for an answer recorded without it), read by :attr:`advice`.

    ``judged`` (:class:`rag.answer.check.judged.Judged`) is computed once, when the answer is made (``replace``
    makes a new answer and judges it again): what is shown, what is left out, and the verdict.
    """

    query: str
    gate: GateResult = field(repr=False)
    text: str | None = None
    citations: tuple[Citation, ...] = ()
    sentences: tuple[SentenceAttribution, ...] = ()
    invalid_citations_removed: int = 0
    links_removed: int = 0
    model: str | None = None
    retrieval_ms: float | None = None
    ttft_ms: float | None = None
    first_words_ms: float | None = None
    generation_ms: float | None = None
    tokens: int = 0
    dropped_sources: tuple[int, ...] = ()
    raw_text: str | None = None
    read_spans: Mapping[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    key_passage: KeyPassage | None = None
    saved_verdict: tuple[AnswerVerdict, str] | None = None
    token_probs: TokenProbs | None = None
    yes_no: YesNo | None = None
    saved_confidence: float | None = None
    searched: Searched | None = None
    judged: Judged = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "citations", tuple(self.citations))
        object.__setattr__(self, "sentences", tuple(self.sentences))
        object.__setattr__(self, "dropped_sources", tuple(self.dropped_sources))
        object.__setattr__(self, "judged", judge(self, self.saved_verdict))

    @property
    def advice(self) -> Advice | None:
        """What a refusal or "may not answer" says besides its reason (issue 39, Deliver 3: what was searched, the
        closest passages, the user's own setting when it decided, what to try; :func:`rag.answer.advice.advise`);
        ``None`` for the other verdicts and for an answer recorded without :attr:`searched`."""
        return advise(self.judged.verdict, self.gate, self.searched)

    @property
    def generated(self) -> bool:
        """The model ran (``text`` is not ``None``)."""
        return self.text is not None

    @property
    def refused(self) -> bool:
        """The gate refused: no model ran."""
        return self.gate.refused

    @property
    def refusal(self) -> str | None:
        """The gate's NO ANSWER line, ``None`` unless refused."""
        return self.gate.refusal

    @property
    def threshold(self) -> float:
        """The gate's cosine-distance threshold."""
        return self.gate.threshold

    @property
    def nearest_distance(self) -> float | None:
        """The smallest cosine distance the gate saw (``None`` when it saw no candidate)."""
        return self.gate.nearest_distance

    @property
    def gate_verdict(self) -> Verdict:
        """The gate's verdict (:class:`rag.types.Verdict`): ``answered``, ``mentions`` or ``refused``."""
        return self.gate.verdict

    @property
    def notice(self) -> str | None:
        """The gate's ``mentions`` line ("the documents mention this but may not answer it"), else ``None``."""
        return self.gate.notice

    @property
    def why(self) -> str | None:
        """The gate's evidence in one line (nearest distance, words covered, score), else ``None``."""
        return self.gate.why

    @property
    def model_cited(self) -> bool:
        """At least one valid ``[n]`` written by the model itself on a claim (not on a bare list of markers)."""
        return any(s.cited and s.claim for s in self.sentences)

    def to_json(self, *, full: bool = False) -> AnswerDict:
        """The ``ask --json`` object of issues 4, 5 and 14 (generation keys only when the model ran).

        ``verdict`` the answer's verdict (issue 24: ``supported``, ``partly_supported``, ``may_not_answer``,
        ``refused``) and ``verdict_reason`` why; the gate's own verdict is ``gate.verdict``.
        ``answer`` is the checked answer (:attr:`Judged.text`); ``model_answer`` the model's text as streamed;
        ``answer_from`` ``model`` / ``key_passage`` / ``none``; ``off_key`` true when the shown claims each pass
        against the source they cite but none rests on the key passage (issue 39: show ``key_passage`` beside
        them); ``answer_sentences`` every sentence with its
        ``verdict`` and ``reason``; ``key_passage`` whenever the gate passed. ``full`` adds what
        :meth:`from_json` needs to rebuild this :class:`Answer`: ``format`` (:data:`ANSWER_FORMAT`),
        ``raw_text``, ``first_text`` (always ``None`` and ``reasked`` always false since the re-ask was removed), ``links_removed``, ``dropped_sources``, ``retrieval_ms`` and
        ``nearest_distance`` always, and every claim-check flag in ``answer_sentences``. Times in ms, rounded
        to 0.1; distances and scores to 4 places.
        """
        j, g = self.judged, self.gate
        d: AnswerDict = {
            "query": self.query, "threshold": self.threshold, "refused": self.refused, "refusal": self.refusal,
            "answer": j.text, "citations": [citation_json(c) for c in self.citations],
            "verdict": str(j.verdict), "verdict_reason": j.reason,
            "confidence": None if j.confidence is None else round(j.confidence, 3),
            "notice": g.notice, "gate": g.to_json(),
        }
        if g.plan is not None:
            d["retrieval"] = g.plan.to_json()
            if g.plan.translated_from:
                d["retrieval"]["note"] = searched_as_line(g)
        if self.key_passage is not None and not self.refused:
            d["key_passage"] = self.key_passage.to_json()
        if self.searched is not None:  # issue 39, Deliver 3: what was searched, and a doubt's advice
            d["searched"] = self.searched.to_json()
        advice = self.advice
        if advice is not None:
            d["advice"] = advice.to_json()
        if self.generated:
            d.update(
                answer_sentences=[_sentence_json(s) if full else s.to_json() for s in self.sentences],
                invalid_citations_removed=self.invalid_citations_removed,
                model=self.model,
                retrieval_ms=_r(self.retrieval_ms),
                ttft_ms=_r(self.ttft_ms),
                first_words_ms=_r(self.first_words_ms),
                generation_ms=_r(self.generation_ms),
                tokens=self.tokens,
                read_spans={str(n): [list(sp) for sp in spans] for n, spans in self.read_spans.items()},
                model_answer=self.text,
                answer_from=str(j.answer_from),
                off_key=j.off_key,
                note=j.note,
                reasked=False,  # the re-ask was measured and not kept (docs/answers.md); the key stays for readers
            )
        if full:
            d.update(format=ANSWER_FORMAT, raw_text=self.raw_text, first_text=None,
                     links_removed=self.links_removed, dropped_sources=list(self.dropped_sources),
                     retrieval_ms=_r(self.retrieval_ms), nearest_distance=self.nearest_distance)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Answer:
        """The :class:`Answer` of a :meth:`to_json` object (full form, any format; unknown keys ignored), judged
        once: a format 3 object keeps the verdict it was shown with; older ones are judged by today's rules.

        Format 1 objects (no ``format`` key) are read too: a chat turn saved before format 2 keeps its
        answer as ``text`` / ``raw_text`` / ``sentences`` and the gate's ``why`` / ``notice`` at the top;
        a ``bench answers`` row keeps ``model_answer`` / ``raw`` / ``first_raw``. The gate comes back as a
        :class:`rag.answer.gate.GateResult` without its hits (what a reopened answer shows: verdict,
        notice, why, evidence). Raises ``KeyError`` when ``refused`` or ``query`` is missing.
        """
        sentences = d.get("answer_sentences") if "answer_sentences" in d else d.get("sentences")
        saved = None
        if int(d.get("format") or 1) >= 3 and d.get("verdict") in tuple(AnswerVerdict):
            saved = (AnswerVerdict(d["verdict"]), d.get("verdict_reason") or "")
        return cls(
            query=d["query"], gate=_gate_from_json(d),
            text=d["model_answer"] if "model_answer" in d else d.get("text"),
            citations=tuple(citation_from_json(c) for c in d.get("citations") or []),
            sentences=tuple(sentence_from_json(s) for s in sentences or []),
            invalid_citations_removed=int(d.get("invalid_citations_removed") or 0),
            links_removed=int(d.get("links_removed") or 0), model=d.get("model"),
            retrieval_ms=d.get("retrieval_ms"), ttft_ms=d.get("ttft_ms"), generation_ms=d.get("generation_ms"),
            first_words_ms=d.get("first_words_ms"),
            tokens=int(d.get("tokens") or 0), dropped_sources=tuple(d.get("dropped_sources") or ()),
            raw_text=d["raw_text"] if "raw_text" in d else d.get("raw"),
            read_spans={int(n): tuple(tuple(sp) for sp in spans) for n, spans in (d.get("read_spans") or {}).items()},
            key_passage=KeyPassage.from_json(d.get("key_passage")), saved_verdict=saved,
            saved_confidence=d.get("confidence") if saved is not None else None,
            searched=Searched.from_json(d.get("searched")),
        )


def _sentence_json(s: SentenceAttribution) -> SentenceDict:
    """A sentence's ``ask --json`` object plus every flag :func:`sentence_from_json` needs to rebuild it."""
    return {**s.to_json(), "miscited": s.miscited, "declines": s.declines, "claim": s.claim, "dangling": s.dangling,
            "echo": s.echo, "missing": list(s.missing)}


def sentence_from_json(d: Mapping[str, Any]) -> SentenceAttribution:
    """A :class:`rag.answer.check.attribute.SentenceAttribution` from its JSON (full form, or the ``asdict`` of a
    format 1 chat record; unknown keys such as ``cites`` ignored, lists back to tuples)."""
    kw = {k: v for k, v in d.items() if k in SentenceAttribution.__dataclass_fields__}
    for k in ("cited", "supported_by", "missing"):
        kw[k] = tuple(kw.get(k) or ())
    if kw.get("verdict") is not None:
        kw["verdict"] = ClaimVerdict(kw["verdict"])
    return SentenceAttribution(**kw)


def _nearest(d: Mapping[str, Any]) -> float | None:
    if "nearest_distance" in d:
        return d["nearest_distance"]
    return (d.get("gate") or {}).get("nearest_distance")


def _gate_from_json(d: Mapping[str, Any]) -> GateResult:
    """The gate of an answer's JSON: its ``gate`` object (format 2, bench rows), or the ``why`` / ``notice``
    a format 1 chat record kept, or only what the answer's own keys say (threshold, refusal); the nearest
    distance as the full form keeps it (unrounded)."""
    top = d.get("verdict") if d.get("verdict") in tuple(Verdict) else None  # before format 3: the gate's
    g = GateResult.from_json(d.get("gate") or {"why": d.get("why")}, query=d["query"],
                             threshold=float(d.get("threshold") or 0.0), refused=bool(d["refused"]),
                             refusal=d.get("refusal"), notice=d.get("notice"), verdict=top, plan=d.get("retrieval"))
    return replace(g, nearest_distance=_nearest(d))


def _r4(x: float | None) -> float | None:
    return None if x is None else round(float(x), 4)


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), 1)


