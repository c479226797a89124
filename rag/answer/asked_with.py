"""Which of the gate's knobs a turn was decided with differ from the defaults (issue 42).

A question answered at threshold 1.5 with the answerability cut at 0 reads like any other answer unless the
turn says how it was asked: the chat shows "Asked with non-default settings: ..." under such a turn and the
export writes the same line. The knobs are the ones that decide a refusal (design stage 7: the threshold is a
product decision shown as a slider; issue 15's cuts): the cosine-distance ``threshold``, ``max_sources`` and
the two answerability cuts ``min_score`` / ``mention_score``. The values are read from the gate's own
decision (:class:`rag.answer.gate.GateResult`, saved with the turn), so a reopened chat says the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rag.answer.gate import GateResult
from rag.answer.gate.gates import GATES
from rag.settings import Settings

#: The knobs compared, in the order they are named, with how a person reads each.
KNOB_LABELS: dict[str, str] = {
    "threshold": "threshold (cosine distance)",
    "max_sources": "max sources",
    "min_score": "answerability cut",
    "mention_score": "mention cut",
}


@dataclass(frozen=True)
class Changed:
    """One knob away from its default: ``name`` (a :data:`KNOB_LABELS` key), the ``value`` used, the ``default``."""

    name: str
    value: float
    default: float

    def text(self) -> str:
        """``"answerability cut 0 (default 0.62)"``."""
        return f"{KNOB_LABELS[self.name]} {self.value:g} (default {self.default:g})"


def default_knobs(settings: Settings) -> dict[str, float | None]:
    """The knobs' defaults under ``settings``: its ``threshold`` and ``max_sources``; its cuts when it sets them,
    else the configured gate's own (``mention_score`` ``None`` for a gate without a "mentions" band)."""
    gate = GATES[settings.gate]
    cut = settings.min_score if settings.min_score is not None else gate.default_min_score()
    mention = settings.mention_score if settings.mention_score is not None else gate.default_mention_score()
    return {"threshold": float(settings.threshold), "max_sources": int(settings.max_sources),
            "min_score": float(cut), "mention_score": None if mention is None else float(mention)}


def gate_knobs(gate: GateResult | None) -> dict[str, float | None]:
    """The knob values a decided gate used (``{}`` without one; a cut is ``None`` for the distance gate)."""
    if gate is None:
        return {}
    return {"threshold": gate.threshold, "max_sources": gate.max_sources, "min_score": gate.min_score,
            "mention_score": gate.mention_score}


def changed_knobs(values: Mapping[str, float | None], defaults: Mapping[str, float | None]) -> tuple[Changed, ...]:
    """The knobs of ``values`` that differ from ``defaults`` (to 4 decimals: a slider's float steps are no
    change), in :data:`KNOB_LABELS` order; a knob missing or ``None`` on either side is not compared."""
    out = []
    for name in KNOB_LABELS:
        v, d = values.get(name), defaults.get(name)
        if v is None or d is None or round(float(v), 4) == round(float(d), 4):
            continue
        out.append(Changed(name, float(v), float(d)))
    return tuple(out)


def asked_with_line(changed: tuple[Changed, ...]) -> str:
    """``"Asked with non-default settings: threshold (cosine distance) 1.5 (default 0.675)."``; ``""`` for none."""
    if not changed:
        return ""
    return "Asked with non-default settings: " + ", ".join(c.text() for c in changed) + "."
