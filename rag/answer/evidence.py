"""The model helps choose the evidence (issue 24, item 3a): the listwise selector over the key passage's candidates.

The key passage is chosen lexically in about a millisecond (:mod:`rag.answer.key_passage`). Here the local
model re-ranks the best candidates: the :data:`SELECT_K` best distinct sentences of the gated sources (body
text only, :func:`rag.answer.key_passage.scored_stretches` with one unit each) are numbered and read once by
the model (:func:`rag.answer.listwise.listwise_scores`, debiased over permuted orders); each candidate's
score is its lexical score plus ``weight`` times the model's share (:func:`rag.answer.listwise.combine`).
The key passage becomes the best-scoring stretch of the sources that holds the chosen sentence, and the model
then reads it (the excerpt always holds the key passage's units).

It costs a prompt read of about ``SELECT_K`` sentences before the answer's first token: measured against the
lexical choice in ``docs/answers.md`` (both corpora, both wordings, paired sign tests, first-token time).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rag.answer.cite import Citation
from rag.answer.excerpt import citation_views, readable
from rag.answer.key_passage import KeyPassage, Stretch, distinct, passage_from, scored_stretches
from rag.answer.listwise import combine, listwise_scores
from rag.text import TermStats

#: Candidates the model reads (sentences; each about 30 tokens on the dev corpora).
SELECT_K = 6
#: Weight of the model's share beside the lexical score (both in [0, 1]); fitted on the course corpus.
SELECT_WEIGHT = 0.5


@dataclass(frozen=True)
class Selection:
    """What the selector saw and chose: ``texts`` the candidate sentences (best lexical first), ``lexical``
    their lexical scores, ``model`` the listwise scores (mean log-probabilities), ``chosen`` the index picked
    with ``weight``, ``ms`` the whole selection (model pass included), ``prompt_tokens`` read per order,
    ``sources`` each candidate's source number, ``passages`` the key passage each candidate would give."""

    texts: tuple[str, ...]
    lexical: tuple[float, ...]
    model: tuple[float, ...]
    chosen: int
    weight: float
    ms: float
    prompt_tokens: tuple[int, ...]
    sources: tuple[int, ...] = ()
    passages: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Every field, for ``bench answers --json-out`` (so another ``weight`` can be tried without the model)."""
        return {"texts": list(self.texts), "lexical": [round(x, 4) for x in self.lexical],
                "model": [round(x, 4) for x in self.model], "chosen": self.chosen, "weight": self.weight,
                "ms": round(self.ms, 1), "prompt_tokens": list(self.prompt_tokens), "sources": list(self.sources),
                "passages": list(self.passages)}


def _holding(ranked: Sequence[Stretch], unit: Stretch) -> Stretch:
    """The best-scoring stretch of ``ranked`` that holds the whole sentence ``unit``."""
    a, b = unit.spans[0]
    return next((st for st in ranked if st.source == unit.source and st.spans[0][0] <= a and b <= st.spans[-1][1]), unit)


def select_key_passage(query: str, sources: Sequence[Citation], term_stats: TermStats | None, generator: Any, *,
                       k: int = SELECT_K, weight: float = SELECT_WEIGHT, orders: int = 2) -> tuple[KeyPassage, Selection | None]:
    """The key passage chosen with the model's help (module doc), and what the selector saw; the lexical key
    passage and ``None`` when there are fewer than two candidates (nothing to choose). ``generator``: a
    :class:`rag.answer.generate.Generator` built for the selector (:func:`rag.answer.listwise.selector_generator`)."""
    t0 = time.perf_counter()
    views = citation_views(sources)
    ranked = scored_stretches(query, sources, term_stats, views=views)
    if not ranked:
        return KeyPassage((), 0.0), None
    singles = distinct(scored_stretches(query, sources, term_stats, max_units=1, views=views), k)
    if len(singles) < 2:
        return passage_from(ranked[0], sources, views, t0=t0), None
    texts = [" ".join(readable(sources[u.source].quote, u.spans[0][0], u.spans[-1][1], views[u.source][1]).split())
             for u in singles]
    result = listwise_scores(query, texts, generator, orders=orders)
    lexical = [u.score for u in singles]
    chosen = int(np.argmax(combine(lexical, result.scores, weight)))
    passages = [passage_from(_holding(ranked, u), sources, views, t0=t0) for u in singles]
    kp = passages[chosen]
    sel = Selection(tuple(texts), tuple(float(x) for x in lexical), tuple(float(x) for x in result.scores), chosen,
                    weight, (time.perf_counter() - t0) * 1000.0, result.prompt_tokens,
                    tuple(sources[u.source].index for u in singles), tuple(p.text for p in passages))
    return kp, sel
