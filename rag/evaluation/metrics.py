"""Retrieval metrics and the statistics the design reports them with ("How retrieval is judged").

* :func:`first_hit_rank`, :func:`hits_at`, :func:`recall_at`, :func:`mean_reciprocal_rank`,
  :func:`hit_within_chars`, :func:`destroyed_needles` - the metrics, over ranked chunk contents;
* :func:`wilson_interval` - a 95 % interval for a recall;
* :func:`sign_test` (:class:`SignTest`) and :func:`format_p` - paired exact two-sided sign tests.

* :func:`summarize_ranks` (:class:`RankSummary`, :class:`RecallCell`) - R@k with intervals and MRR of a
  group of queries (all, or one wording: issue 19).

Ranks are 1-based; ``None`` is a miss (no correct chunk in the ranked list).
A chunk is correct only when its ``content`` holds the whole needle, compared
with runs of whitespace collapsed on both sides (:func:`holds_needle`: PDF
line breaks fall where the needle has a space; a table row's cells read as words). Pure functions, no project imports.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

#: The k of Recall@k reported everywhere (design: R@1/4/8/20).
RECALL_KS = (1, 4, 8, 20)
#: Depth of every ranked list kept per query (the largest k).
DEPTH = 20
#: Equal-context-budget comparison: recall within the first N characters delivered (BASELINES.md).
CONTEXT_BUDGET_CHARS = 2000
#: z for a two-sided 95 % interval.
Z95 = 1.959963984540054


# --------------------------------------------------------------------------- statistics


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``successes / n``.

    Returns ``(low, high)`` in ``[0, 1]``; ``(0.0, 1.0)`` when ``n == 0``.
    E.g. ``wilson_interval(38, 64) == (0.4715, 0.7054)`` (the chapter's A at R@20).
    Raises ``ValueError`` unless ``0 <= successes <= n``.
    """
    if not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class SignTest:
    """Paired exact two-sided sign test: ``wins`` (a right, b wrong), ``losses`` (a wrong, b right), ``p``."""

    wins: int
    losses: int
    p: float

    def __str__(self) -> str:
        return f"+{self.wins} / -{self.losses}, p = {format_p(self.p)}"


def sign_test(a: Sequence[bool], b: Sequence[bool]) -> SignTest:
    """Exact two-sided sign test of ``a`` against ``b`` on paired outcomes (same queries, same order).

    Only discordant pairs count; ties are dropped. ``p`` is the two-sided
    binomial p-value of ``wins`` out of ``wins + losses`` at 1/2 (1.0 when no
    pair is discordant). E.g. +18 / -3 gives p = 0.0015 (the chapter's E vs A).
    Raises ``ValueError`` if the lengths differ.
    """
    if len(a) != len(b):
        raise ValueError(f"paired outcomes must have equal length, got {len(a)} and {len(b)}")
    wins = sum(1 for x, y in zip(a, b) if x and not y)
    losses = sum(1 for x, y in zip(a, b) if y and not x)
    if wins + losses == 0:
        return SignTest(0, 0, 1.0)
    from scipy.stats import binomtest  # scipy is heavy: imported when a test is first computed

    return SignTest(wins, losses, float(binomtest(wins, wins + losses, 0.5, alternative="two-sided").pvalue))


def format_p(p: float) -> str:
    """A p-value for reports: 4 decimals, or ``< 0.0001``."""
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


# --------------------------------------------------------------------------- metrics


def collapse_whitespace(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) made one space, ends stripped."""
    return " ".join(text.split())


_TABLE_RULE = re.compile(r"^[ \t]*(?:\|[ \t]*)?(?::?-{3,}:?[ \t]*\|[ \t]*)+(?::?-+:?[ \t]*)?$", re.M)


def table_as_read(text: str) -> str:
    """``text`` with Markdown table syntax read as a person reads the table: the ``|---|`` rule lines dropped and
    every cell separator ``|`` made a space (issue 13 writes PDF tables as Markdown rows; a needle copied from
    the PDF's plain text has the cells separated by spaces)."""
    return _TABLE_RULE.sub(" ", text).replace("|", " ")


def holds_needle(content: str, needle: str) -> bool:
    """Does ``content`` contain the whole ``needle``, runs of whitespace collapsed on both sides?

    The shared corpora say to compare needles this way (``pdf-dev/README.md``):
    a needle written with one space may cross a line break of the extracted text.
    A needle made of table cells also matches the same cells in a Markdown table row
    (:func:`table_as_read`), in the same order.
    """
    if needle in content or collapse_whitespace(needle) in collapse_whitespace(content):
        return True
    return "|" in content and collapse_whitespace(table_as_read(needle)) in collapse_whitespace(table_as_read(content))


def first_hit_rank(contents: Sequence[str], needle: str) -> int | None:
    """1-based rank of the first chunk ``content`` holding the whole ``needle`` (:func:`holds_needle`); ``None`` if none does."""
    for i, c in enumerate(contents, 1):
        if holds_needle(c, needle):
            return i
    return None


def hits_at(ranks: Sequence[int | None], k: int) -> list[bool]:
    """Per query: was the first correct chunk at rank ``<= k``?"""
    return [r is not None and r <= k for r in ranks]


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    """Recall@k: share of queries with a correct chunk in the top ``k`` (0.0 for no queries)."""
    return sum(hits_at(ranks, k)) / len(ranks) if ranks else 0.0


def mean_reciprocal_rank(ranks: Sequence[int | None]) -> float:
    """MRR over queries: mean of ``1 / rank`` of the first correct chunk (0 for a miss)."""
    return sum(1.0 / r for r in ranks if r) / len(ranks) if ranks else 0.0


def hit_within_chars(contents: Sequence[str], needle: str, budget_chars: int = CONTEXT_BUDGET_CHARS) -> bool:
    """Equal-context-budget hit: does a chunk delivered within the first ``budget_chars`` characters hold the needle?

    Chunks are delivered in rank order and a chunk counts only if it fits
    entirely (cumulative ``len(content)`` ``<= budget_chars``): a chunker that
    makes one 4000-character chunk delivers nothing within 2000.
    """
    used = 0
    for c in contents:
        used += len(c)
        if used > budget_chars:
            return False
        if holds_needle(c, needle):
            return True
    return False


def destroyed_needles(questions: Sequence, contents: Sequence[str]) -> list[str]:
    """Ids of questions (anything with ``id`` and ``needle``) whose needle no chunk ``content`` holds."""
    return [q.id for q in questions if not any(holds_needle(c, q.needle) for c in contents)]


# --------------------------------------------------------------------------- summaries


@dataclass(frozen=True)
class RecallCell:
    """Recall@k with its 95 % Wilson interval: ``hits`` of ``n`` queries."""

    k: int
    hits: int
    n: int
    value: float
    low: float
    high: float


def recall_cell(ranks: Sequence[int | None], k: int) -> RecallCell:
    """Recall@k of ``ranks`` with its Wilson interval (``value`` 0.0 for no queries)."""
    h, n = sum(hits_at(ranks, k)), len(ranks)
    lo, hi = wilson_interval(h, n)
    return RecallCell(k, h, n, h / n if n else 0.0, lo, hi)


@dataclass(frozen=True)
class RankSummary:
    """Recall@k cells (k = 1, 4, 8, 20) and MRR of one group of queries: ``group`` ``"all"``, ``"doc"`` or ``"user"``."""

    group: str
    n_queries: int
    recall: dict[int, RecallCell]
    mrr: float


def summarize_ranks(ranks: Sequence[int | None], group: str = "all", ks: Sequence[int] = RECALL_KS) -> RankSummary:
    """R@k (with Wilson intervals) and MRR of ``ranks`` (1-based, ``None`` = miss), labelled ``group``."""
    return RankSummary(group, len(ranks), {k: recall_cell(ranks, k) for k in ks}, mean_reciprocal_rank(ranks))
