"""How likely the shown answer is right: the features of one answer and the calibrated combiner over them (issue 39).

:func:`answer_features` reads what the server already has after the answer's last token, as plain numbers
(``dict[str, float]``, names in :data:`FEATURES`):

* (a) the model's own token probabilities over its answer (:class:`rag.answer.check.probes.TokenProbs`): ``lp_mean``,
  ``lp_min``, ``lp_low``;
* (b) the yes/no probe (:class:`rag.answer.check.probes.YesNo`): ``yn_yes``, ``yn_score`` (debiased log-odds),
  ``yn_answer`` (is the proposed answer right according to the passage?);
* (c) agreement of the key passage and the shown answer: ``kp_overlap`` (share of the answer's words the question
  lacks that the key passage holds), ``kp_span`` (longest run of the answer's words found verbatim in the key
  passage, as a share of its words), ``kp_specifics`` (share of the answer's numbers and names the key passage
  holds; 1 with none), ``kp_cited`` (the shown answer cites the key passage's source), ``kp_shown`` (the key passage
  stands as the answer), ``key_score`` (the key passage's share of the question's IDF-weighted terms);
* (d) retrieval: ``nearest`` (cosine distance of the best source), ``doc_margin`` (distance of the best source of
  another document minus the best one's; the threshold's when every source is one document's), ``rrf_margin``
  (fused score of source 1 minus source 2, x100), ``legs_agree`` (the best source is first in both BM25 and the
  dense list), ``gate_score`` (the calibrated gate's P(answer), 0.5 without one), ``gate_mentions``;
* (e) the claim check: ``claims`` (claims made), ``passed_share`` (share of them that passed), ``failed`` (left
  out as unsupported or garbled), ``inferred`` (share of the passed claims whose source the server attached),
  ``declined``, ``gaps`` (share of the question's words the key passage holds that the shown answer
  leaves out), ``number_missing`` (a quantity asked for, no number given).

A missing probe gives its neutral value (:data:`NEUTRAL`). :class:`Combiner` is a logistic regression over a few
of them (fitted offline, leave-one-corpus-out, by :mod:`rag.evaluation.confidence`; the shipped coefficients are
``confidence.json`` beside this module); :func:`confidence` is its probability that the shown answer is right.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.answer.check.attribute import ClaimVerdict, SentenceAttribution
from rag.answer.check.claims import (
    holds,
    novel_roots,
    question_roots,
    source_roots,
    specifics,
)
from rag.answer.check.judged import (
    GAP_MAX,
    GAP_MIN_WORDS,
    NUMBER_RE,
    QUANTITY_RE,
    TWO_PART_RE,
    WHEN_RE,
    AnswerFrom,
    Featured,
    Judged,
    asked,
    gives_time,
    key_score,
    question_gaps,
)
from rag.answer.check.names import names_it
from rag.answer.check.short_answers import AFFIRM_MIN, POLARITY_RE, YES_NO_RE
from rag.question import analyse
from rag.text import CLAIM_STOPWORDS, content_words, strip_markers
from rag.types import AnswerVerdict, Verdict

if TYPE_CHECKING:
    from rag.answer.check.probes import TokenProbs, YesNo

#: The feature names, in the order :func:`answer_features` gives them.
FEATURES = ("lp_mean", "lp_min", "lp_low", "yn_yes", "yn_score", "yn_answer",
            "kp_overlap", "kp_span", "kp_specifics", "kp_cited", "kp_shown", "key_score",
            "nearest", "doc_margin", "rrf_margin", "legs_agree", "gate_score", "gate_mentions",
            "claims", "passed_share", "failed", "inferred", "declined", "gaps", "number_missing")
#: Which group of the issue each feature belongs to ("a" token probabilities ... "e" the claim check).
GROUPS = {**dict.fromkeys(("lp_mean", "lp_min", "lp_low"), "a"), **dict.fromkeys(("yn_yes", "yn_score", "yn_answer"), "b"),
          **dict.fromkeys(("kp_overlap", "kp_span", "kp_specifics", "kp_cited", "kp_shown", "key_score"), "c"),
          **dict.fromkeys(("nearest", "doc_margin", "rrf_margin", "legs_agree", "gate_score", "gate_mentions"), "d"),
          **dict.fromkeys(("claims", "passed_share", "failed", "inferred", "declined", "gaps", "number_missing"),
                          "e")}
#: The value of a probe feature when the probe did not run (no model, an empty answer).
NEUTRAL = {"lp_mean": -1.0, "lp_min": -5.0, "lp_low": 0.5, "yn_yes": 0.5, "yn_score": 0.0, "yn_answer": 0.5}


def _words(text: str) -> list[str]:
    return [w.casefold() for w in strip_markers(text).split() if any(ch.isalnum() for ch in w)]


def longest_run(answer: str, passage: str) -> float:
    """The longest run of consecutive words of ``answer`` (markers removed, case-folded, punctuation kept on the
    words) that occurs as a run in ``passage``, as a share of the answer's words (0 for an empty answer)."""
    a = [w.strip(".,;:!?()[]\"'") for w in _words(answer)]
    p = [w.strip(".,;:!?()[]\"'") for w in _words(passage)]
    if not a or not p:
        return 0.0
    return _run(a, p)[0] / len(a)


def _claim_features(a: Featured, j: Judged) -> dict[str, float]:
    claims = [s for s in a.sentences if s.claim or s.verdict in (ClaimVerdict.UNSUPPORTED, ClaimVerdict.GARBLED)]
    passed = [s for s in claims if s.passed]
    failed = [s for s in claims if s.verdict in (ClaimVerdict.UNSUPPORTED, ClaimVerdict.GARBLED)]
    missing, held = question_gaps(a, j.shown)
    shown = j.text or ""
    return {
        "claims": float(len(claims)),
        "passed_share": len(passed) / len(claims) if claims else 0.0,
        "failed": float(len(failed)),
        "inferred": sum(s.verdict == ClaimVerdict.INFERRED for s in passed) / len(passed) if passed else 0.0,
        "declined": float(j.declined),
        "gaps": len(missing) / held if held else 0.0,
        "number_missing": float(bool(QUANTITY_RE.search(asked(a.query))) and not NUMBER_RE.search(strip_markers(shown))),
    }


def _agreement_features(a: Featured, j: Judged) -> dict[str, float]:
    kp = a.key_passage
    body = (kp.body or " ".join(s.text for s in kp.sentences)) if kp is not None and kp.sentences else ""
    shown = " ".join(s.body for s in j.shown) if j.answer_from == AnswerFrom.MODEL else ""
    if not body or not shown:
        overlap = span = 1.0 if body and j.answer_from == AnswerFrom.KEY_PASSAGE else 0.0
        spec = 1.0
    else:
        new = novel_roots(shown, a.query)
        overlap = len(new & source_roots(body)) / len(new) if new else 0.0
        span = longest_run(shown, body)
        sp = specifics(shown) - {w.casefold() for w in analyse(a.query).claim_words}
        spec = sum(holds(body, x) for x in sp) / len(sp) if sp else 1.0
    return {
        "kp_overlap": overlap, "kp_span": span, "kp_specifics": spec,
        "kp_cited": float(kp is not None and kp.index is not None and kp.index in j.cited),
        "kp_shown": float(j.answer_from == AnswerFrom.KEY_PASSAGE),
        "key_score": key_score(a),
    }


def _retrieval_features(a: Featured) -> dict[str, float]:
    g = a.gate
    cites = list(a.citations)
    near = min((c.cosine_distance for c in cites), default=a.nearest_distance if a.nearest_distance is not None else 1.0)
    top = min(cites, key=lambda c: c.cosine_distance) if cites else None
    others = [c.cosine_distance for c in cites if top is not None and c.document_id != top.document_id]
    margin = (min(others) if others else a.threshold) - near
    src = list(g.sources) if g is not None else []
    rrf = (src[0].rrf_score - src[1].rrf_score) * 100 if len(src) > 1 else (src[0].rrf_score * 100 if src else 0.0)
    agree = float(bool(src) and src[0].dense_rank == 1 and src[0].bm25_rank == 1)
    return {
        "nearest": float(near), "doc_margin": float(margin), "rrf_margin": float(rrf), "legs_agree": agree,
        "gate_score": float(g.score) if g is not None and g.score is not None else 0.5,
        "gate_mentions": float(g is not None and g.verdict == Verdict.MENTIONS),
    }


def answer_features(a: Featured, probs: TokenProbs | None = None, yn: YesNo | None = None,
                    judged: Judged | None = None) -> dict[str, float]:
    """The features of answer ``a`` (module doc), every name of :data:`FEATURES`, as floats. ``probs`` / ``yn`` the
    model probes when they ran (:mod:`rag.answer.check.probes`), else :data:`NEUTRAL` values; ``judged`` what the checked
    answer shows (default ``a.judged``; :func:`rag.answer.check.verdict.judge` passes its own before the verdict is
    decided). Pure Python over what the answer holds: a few milliseconds."""
    j = judged or a.judged
    out = dict(NEUTRAL)
    if probs is not None:
        out.update(lp_mean=probs.mean, lp_min=probs.min, lp_low=probs.low_share)
    if yn is not None:
        out.update(yn_yes=yn.p_yes, yn_score=yn.score, yn_answer=yn.p_answer if yn.p_answer is not None else 0.5)
    out.update(_agreement_features(a, j))
    out.update(_retrieval_features(a))
    out.update(_claim_features(a, j))
    return {k: float(out[k]) for k in FEATURES}


@dataclass(frozen=True)
class Combiner:
    """A logistic regression over a few features: ``P(right) = 1 / (1 + exp(-(b + sum w_i * (x_i - mu_i) / s_i)))``.

    ``features`` the names (of :data:`FEATURES`), ``weights`` / ``means`` / ``scales`` one per feature,
    ``intercept`` b; ``supported_at`` the probability from which an answer may be shown as supported and
    ``doubt_below`` the one under which it "may not answer" (both from the left-out corpora,
    ``docs/answers.md``); ``fitted_on`` what it was fitted on, in words.
    """

    features: tuple[str, ...]
    weights: tuple[float, ...]
    means: tuple[float, ...]
    scales: tuple[float, ...]
    intercept: float
    supported_at: float = 0.9
    doubt_below: float = 0.3
    fitted_on: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def probability(self, x: Mapping[str, float]) -> float:
        """P(the shown answer is right) for the features ``x`` (a missing name counts as its mean)."""
        z = self.intercept
        for f, w, m, s in zip(self.features, self.weights, self.means, self.scales):
            z += w * (float(x.get(f, m)) - m) / (s or 1.0)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def to_json(self) -> dict:
        return {"features": list(self.features), "weights": list(self.weights), "means": list(self.means),
                "scales": list(self.scales), "intercept": self.intercept, "supported_at": self.supported_at,
                "doubt_below": self.doubt_below, "fitted_on": self.fitted_on, **dict(self.extra)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Combiner:
        keys = ("features", "weights", "means", "scales", "intercept", "supported_at", "doubt_below", "fitted_on")
        return cls(tuple(d["features"]), tuple(float(w) for w in d["weights"]), tuple(float(m) for m in d["means"]),
                   tuple(float(s) for s in d["scales"]), float(d["intercept"]), float(d.get("supported_at", 0.9)),
                   float(d.get("doubt_below", 0.3)), str(d.get("fitted_on", "")),
                   {k: v for k, v in d.items() if k not in keys})


#: The shipped combiner's coefficients (written by ``python -m rag.evaluation.confidence fit``).
COMBINER_PATH = Path(__file__).with_name("confidence.json")


@lru_cache(maxsize=1)
def shipped_combiner() -> Combiner | None:
    """The combiner of :data:`COMBINER_PATH`, ``None`` when the file is absent."""
    if not COMBINER_PATH.is_file():
        return None
    return Combiner.from_json(json.loads(COMBINER_PATH.read_text(encoding="utf-8")))


def confidence(x: Mapping[str, float], combiner: Combiner | None = None) -> float | None:
    """P(the shown answer is right) for features ``x`` under ``combiner`` (default :func:`shipped_combiner`);
    ``None`` when there is no combiner."""
    c = combiner or shipped_combiner()
    return None if c is None else c.probability(x)


def feature_matrix(rows: Sequence[Mapping[str, float]], names: Sequence[str]) -> list[list[float]]:
    """``rows`` as a list of feature vectors in the order of ``names`` (missing = :data:`NEUTRAL` or 0)."""
    return [[float(r.get(n, NEUTRAL.get(n, 0.0))) for n in names] for r in rows]


# --------------------------------------------------------------------------- from the probability to a verdict

#: A code-like name in a question (``result.fingerprints``, ``run.logicalId``, ``suppressionStates``, ``set_x``):
#: the property or entity asked about, which a supported answer must name.
IDENTIFIER_RE = re.compile(r"\b[A-Za-z]\w*(?:\.[A-Za-z]\w*)+\b|\b[a-z]+[A-Z]\w*\b|\b[a-z]+_\w+\b")

#: A question that asks for a formula, or how something is computed: the expression a supported answer gives must
#: be the formula (with its variables), not one worked example's numbers.
FORMULA_RE = re.compile(r"\b(?:formulas?|equations?|formulae|computed|calculated)\b", re.IGNORECASE)
#: A LaTeX command (``\frac``, ``\text``, ``\ldots``): markup, not a variable, in :func:`numbers_only`.
_LATEX_COMMAND_RE = re.compile(r"\\[A-Za-z]+")

#: The vetoes, in plain words: why an answer cannot be shown as supported whatever its probability.
VETOES = {
    "nothing": "nothing is shown as an answer",
    "declined": "the model said the sources do not contain the answer",
    "failed": "a sentence of the answer is not supported by the sources it cites",
    "two_part": "the answer leaves out part of a two-part question",
    "number": "the question asks for a number and the answer gives none",
    "time": "the question asks when and the answer gives no date or time",
    "yes_no": "the question asks yes or no and the answer takes no side",
    "entity": "the answer does not name what the question asks about",
    "formula": "the question asks for a formula and the answer gives only a worked example's numbers",
    "swapped": "a sentence repeats its source's words but changes what they are said of",
}

#: A claim is taken as a copy of its source sentence (for :func:`swapped_words`) when its longest verbatim run
#: in the source has at least this many words and this share of the claim's words.
COPY_MIN_WORDS = 5
COPY_MIN_SHARE = 0.5
#: The most words before the copied run for them to be taken as the claim's subject (a noun phrase put in place of
#: the source's); a longer lead is a clause of the claim's own ("X fails at the end of Y because ..."), which the
#: claim check judges.
SUBJECT_MAX_WORDS = 5
#: The most words of a claim and of a source :func:`swapped_words` compares (bounded work per sentence).
SWAP_MAX_WORDS = 400


def vetoes(a: Featured, judged: Judged | None = None) -> list[str]:
    """The :data:`VETOES` keys that hold for answer ``a``: what keeps it from "supported" (issue 39, item 4: a
    supported answer addresses what the question asks: its question word, the entity asked about, every part of a
    two-part question, a yes/no question answered yes or no). Empty for a refusal."""
    if a.refused:
        return []
    j = judged or a.judged
    shown = strip_markers(j.text or "")
    if not shown.strip():
        return ["nothing"]
    out = []
    if j.declined:
        out.append("declined")
    if any(s.verdict in (ClaimVerdict.UNSUPPORTED, ClaimVerdict.GARBLED) for s in a.sentences if s.claim or s.garbled) \
            and j.shown:
        out.append("failed")
    q = asked(a.query)
    if TWO_PART_RE.search(q):
        missing, held = question_gaps(a, j.shown)
        if held and len(missing) >= GAP_MIN_WORDS and len(missing) / held >= GAP_MAX:
            out.append("two_part")
    if _claim_features(a, j)["number_missing"]:
        out.append("number")
    if WHEN_RE.search(q) and not gives_time(shown):
        out.append("time")
    if swapped(a, j.shown):
        out.append("swapped")
    return out + unaddressed(q, shown)


def _run(c: Sequence[str], p: Sequence[str]) -> tuple[int, int, int]:
    """The longest run of equal words of ``c`` and ``p``: ``(length, start in c, start in p)``."""
    best = (0, 0, 0)
    prev = [0] * (len(p) + 1)
    for i, x in enumerate(c, 1):
        cur = [0] * (len(p) + 1)
        for k, y in enumerate(p, 1):
            if x == y:
                cur[k] = prev[k - 1] + 1
                if cur[k] > best[0]:
                    best = (cur[k], i - cur[k], k - cur[k])
        prev = cur
    return best


def swapped_words(claim: str, source: str, question: str) -> tuple[set[str], set[str]] | None:
    """Where ``claim`` copies a sentence of ``source`` but puts other words in place of its subject:
    ``(put in, taken out)`` as claim words (:func:`rag.text.content_words`), or ``None``.

    The claim copies the source when its longest verbatim run of words in ``source`` has at least
    :data:`COPY_MIN_WORDS` words and :data:`COPY_MIN_SHARE` of the claim's. The claim's words before the run (at
    most :data:`SUBJECT_MAX_WORDS`) are compared with the source sentence's words before it (its subject): a swap
    is a claim word found neither in the copied sentence nor in the question, *and* a word of the source's side
    that the claim and the question lack (after the run, a paraphrase of the sentence's end is common and is not
    taken for a swap). Issue 39 (the course set's q01: "Longformer and reformer are models that try to be more
    efficient and use a sparse version of the attention matrix" answered with "Transformer models try to be more
    efficient and use a sparse version of the attention matrix [1]", shown as supported). Words are case-folded,
    punctuation stripped; at most :data:`SWAP_MAX_WORDS` of each text are compared (at most 400 x 400 steps)."""
    raw_c, raw_p = _words(claim)[:SWAP_MAX_WORDS], _words(source)[:SWAP_MAX_WORDS]
    c = [w.strip(".,;:!?()[]\"'") for w in raw_c]
    p = [w.strip(".,;:!?()[]\"'") for w in raw_p]
    n, ci, pj = _run(c, p)
    if n < COPY_MIN_WORDS or n < COPY_MIN_SHARE * len(c) or ci > SUBJECT_MAX_WORDS:
        return None
    begin = pj
    while begin > 0 and not raw_p[begin - 1].endswith((".", "?", "!")):
        begin -= 1
    end = pj + n
    while end < len(p) and not raw_p[end - 1].endswith((".", "?", "!")):
        end += 1
    sentence = _claim_set(p[begin:end])
    asked_words = set(analyse(question).claim_words) if question else set()
    whole = _claim_set(c)
    new = {w for w in _claim_set(c[:ci]) if not _near(w, sentence | asked_words)}
    lost = {w for w in _claim_set(p[begin:pj]) if not _near(w, whole | asked_words)}
    return (new, lost) if new and lost else None


def _claim_set(words: Sequence[str]) -> set[str]:
    """The claim words among ``words`` (:func:`rag.text.content_words`), a stopword again once its plural ``s``
    is stripped (``uses``) left out."""
    return {w for w in content_words(" ".join(words)) if w not in CLAIM_STOPWORDS}


def _near(word: str, words: set[str]) -> bool:
    """Whether ``word`` or another form of it is in ``words``: the same word, or one sharing all but the last two
    letters of the shorter (at least three), the longer at most three letters past it: ``trained``/``training``,
    ``use``/``used``, not ``long``/``longformer``."""
    if word in words:
        return True
    for w in words:
        k = max(3, min(len(w), len(word)) - 2)
        if min(len(w), len(word)) >= k and max(len(w), len(word)) - k <= 3 and w[:k] == word[:k]:
            return True
    return False


def swapped(a: Featured, shown: Sequence[SentenceAttribution]) -> tuple[set[str], set[str]] | None:
    """The first shown claim of answer ``a`` that :func:`swapped_words` finds swapped against a source it cites:
    ``(put in, taken out)``, or ``None``."""
    quotes = {c.index: c.quote for c in a.citations}
    for s in shown:
        if not s.claim:
            continue
        for i in s.shown_cites:
            hit = swapped_words(s.text, quotes.get(i, ""), a.query)
            if hit:
                return hit
    return None


def unaddressed(question: str, shown: str) -> list[str]:
    """What of ``question`` the ``shown`` answer does not address: ``"yes_no"`` (a yes/no question, no side taken:
    :data:`YES_NO_RE`, :data:`POLARITY_RE`) and ``"entity"`` (a code-like name asked about, :data:`IDENTIFIER_RE`,
    not named) and ``"formula"`` (a formula asked for, :data:`FORMULA_RE`, and every expression shown is numbers
    only: :func:`numbers_only`). Keys of :data:`VETOES`."""
    out = []
    if YES_NO_RE.match(question) and not POLARITY_RE.search(shown) and not restates(question, shown):
        out.append("yes_no")
    if any(not _names(m.group(0), shown) for m in IDENTIFIER_RE.finditer(question)) or _yes_elsewhere(question, shown):
        out.append("entity")
    if FORMULA_RE.search(question) and numbers_only(shown):
        out.append("formula")
    return out


def _yes_elsewhere(question: str, shown: str) -> bool:
    """Whether ``shown`` answers the yes/no ``question`` "Yes" about something else: the question's last name (the
    thing asked about, capitalised inside it: :func:`specifics`) is named nowhere in the answer ("Mac" by "macOS"). "Yes, Orbit Sync 3.0 runs on Ubuntu
    22.04 [1]." to "Does Orbit Sync support Fedora?" (a review of the claim check, 2026-12-07)."""
    if not YES_NO_RE.match(question) or not strip_markers(shown).lstrip(" *_").casefold().startswith("yes"):
        return False
    names = set(specifics(question))
    last = next((w.casefold().rstrip("?.,") for w in reversed(question.split())
                 if w.casefold().rstrip("?.,") in names and w.rstrip("?.,").isalpha()), None)
    if last is None:  # the thing asked about is its last name ("... support Fedora?"); "it" may stand for the rest
        return False
    text = strip_markers(shown)
    words = [w.casefold() for w in re.split(r"[\s\-/]+", text) if w]
    initials = "".join(w[0] for w in words)  # "SSO" by "single sign-on", whatever the case
    return not names_it(text, last) and not any(w.startswith(last) for w in words) and not (
        2 <= len(last) <= 6 and last in initials)


def restates(question: str, shown: str) -> bool:
    """Whether ``shown`` says what the yes/no ``question`` asks, as a statement: it holds at least
    :data:`rag.answer.check.claims.AFFIRM_MIN` of the question's claim roots, and no denying word the question lacks
    would be needed for "no" (a denial holds one: :data:`POLARITY_RE` then takes the side). "Raft uses randomized
    election timeouts to ensure that split votes are rare [1]." answers "Does Raft use randomized election
    timeouts?" with yes, and was "partly supported: takes no side" (a new user's walk, 2026-12-06). Every name the
    question asks about must be said too: three sentences about Orbit Sync that never name Linux do not answer
    "Does Orbit Sync support Linux?" (an adversarial review, 2026-12-07)."""
    asked_roots = question_roots(question)
    names = [x for x in specifics(question) if any(ch.isalpha() for ch in x)]
    return (bool(asked_roots) and len(asked_roots & source_roots(shown)) / len(asked_roots) >= AFFIRM_MIN
            and all(holds(shown, x) for x in names))


def numbers_only(text: str) -> bool:
    """Whether ``text`` states expressions (``x = ...``) and the right-hand side of every ``=`` is numbers only: a
    worked example (``A_i = \\frac{1 - 0.5}{0.53}``), not a formula (``A_i = \\frac{r_i - mean(r)}{std(r)}``,
    whose right side has variables). A right-hand side ends at the end of a LaTeX span (``\\)``, ``$``), a
    citation, a sentence end (``. ``) or the next ``=``; LaTeX commands are markup, not variables. False when
    ``text`` has no ``=`` (a formula told in words). Issue 39 (q24 of the course set: "What is the formula for
    the advantage value?" answered with the worked example's figures, shown as supported)."""
    sides = text.split("=")[1:]
    if not sides:
        return False
    for side in sides:
        end = len(side)
        for stop in ("\\)", "\\]", "$", "[", ". ", ";", "\n"):
            i = side.find(stop)
            if i != -1:
                end = min(end, i)
        rhs = _LATEX_COMMAND_RE.sub(" ", side[:end])
        if any(ch.isalpha() for ch in rhs) or not any(ch.isdigit() for ch in rhs):
            return False
    return True


_PART_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _names(identifier: str, text: str) -> bool:
    """Whether ``text`` names ``identifier``: a dotted path (``result.fingerprints``) as written (case-insensitive);
    a snake_case or camelCase name by at least half of its parts as words (``early_stopping_patience`` is named by
    "early stopping")."""
    if "." in identifier:
        return identifier.casefold() in text.casefold()
    parts = {p.casefold() for p in _PART_RE.findall(identifier)}
    words = {w.casefold() for w in _PART_RE.findall(text)}
    return len(parts & words) * 2 >= len(parts)


def verdict_from(p: float | None, why_not: Sequence[str], combiner: Combiner | None) -> AnswerVerdict:
    """The verdict of an answer the gate passed, from its probability ``p`` and its :func:`vetoes`: "supported" at
    ``p >= combiner.supported_at`` with no veto; "may not answer" under ``combiner.doubt_below`` or with nothing
    shown; else "partly supported". Without a combiner (``p`` ``None``) never "supported"."""
    if "nothing" in why_not:
        return AnswerVerdict.MAY_NOT_ANSWER
    if p is None or combiner is None:
        return AnswerVerdict.PARTLY_SUPPORTED
    if p >= combiner.supported_at and not why_not:
        return AnswerVerdict.SUPPORTED
    if p < combiner.doubt_below:
        return AnswerVerdict.MAY_NOT_ANSWER
    return AnswerVerdict.PARTLY_SUPPORTED


def needed_probes(combiner: Combiner | None = None) -> set[str]:
    """The model probes the combiner (default :func:`shipped_combiner`) reads: ``"a"`` (token probabilities) and/or
    ``"b"`` (the yes/no probe); empty without a combiner, so no probe runs that nothing reads."""
    c = combiner or shipped_combiner()
    return {GROUPS[f] for f in c.features if GROUPS[f] in ("a", "b")} if c is not None else set()
