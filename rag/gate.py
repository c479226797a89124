"""Stage 7 of the design: the distance gate (a comparison of two numbers, not a prompt).

PUBLIC API: :class:`GateResult`, :func:`apply_gate`, :func:`refusal_text`.
Keep at most ``max_sources`` (4) fused hits whose cosine distance is under the
threshold (0.675); if none pass, refuse with
``NO ANSWER: nothing under cosine distance 0.675 for "<query>"`` and never call
the model. A learned gate (issue 8) may be added to this module later; this
distance gate stays simple and separate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rag.retrieve import Hit


def refusal_text(query: str, threshold: float) -> str:
    """The refusal line: ``NO ANSWER: nothing under cosine distance <threshold> for "<query>"``.

    The threshold prints in its shortest form (``0.675``, ``0.6``).
    """
    return f'NO ANSWER: nothing under cosine distance {threshold:g} for "{query}"'


@dataclass(frozen=True)
class GateResult:
    """The gate's decision for one query.

    ``sources`` the kept hits in fused (final) order, at most ``max_sources``,
    each with ``cosine_distance < threshold``; ``refused`` true when none
    pass, then ``refusal`` holds :func:`refusal_text` (else ``None``);
    ``candidates`` every hit the gate saw, with distances (for the app's
    chart); ``nearest_distance`` the smallest cosine distance among the
    candidates (``None`` when there were none).
    """

    query: str
    threshold: float
    max_sources: int
    refused: bool
    refusal: str | None
    sources: tuple[Hit, ...]
    candidates: tuple[Hit, ...]
    nearest_distance: float | None


def apply_gate(query: str, hits: Sequence[Hit], threshold: float = 0.675, max_sources: int = 4) -> GateResult:
    """Keep the first ``max_sources`` hits (in the given fused order) with cosine distance < ``threshold``.

    A hit with an unknown (NaN) distance never passes. Raises ``ValueError``
    if ``max_sources < 1`` or the threshold is outside ``[0, 2]``.
    """
    if max_sources < 1:
        raise ValueError(f"max_sources must be >= 1, got {max_sources}")
    if not 0.0 <= threshold <= 2.0:
        raise ValueError(f"threshold is a cosine distance in [0, 2], got {threshold}")
    passing = [h for h in hits if not math.isnan(h.cosine_distance) and h.cosine_distance < threshold]
    kept = tuple(passing[:max_sources])
    dists = [h.cosine_distance for h in hits if not math.isnan(h.cosine_distance)]
    refused = not kept
    return GateResult(
        query=query, threshold=threshold, max_sources=max_sources, refused=refused,
        refusal=refusal_text(query, threshold) if refused else None,
        sources=kept, candidates=tuple(hits), nearest_distance=min(dists) if dists else None,
    )
