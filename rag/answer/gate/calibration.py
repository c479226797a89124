"""Store-relative calibration of the refusal gate (issue 15): what "near" and "far" mean on THIS store.

A cosine distance of 0.55 is close on one collection and far on another
(the learned gate of issue 8, fitted on 13 course chapters, answered every
near-topic question over a set of PDFs it never saw). So the gate reads each
distance against two references measured on the store itself:

* ``self_distance``: the 20 % trimmed mean nearest cosine distance of
  *pseudo-queries*, one sentence drawn from each of up to 256 of the store's
  own chunks (what a question whose answer is in the store looks like here).
  The chunks are the 256 whose content hashes lowest (:func:`pseudo_queries`),
  so adding or removing a few chunks swaps a few pseudo-queries, never the
  whole sample (issue 27: a median of 64 evenly spaced ones moved 0.418 ->
  0.371 when 10 chunks were added to the course chapters; docs/evaluation.md);
* ``far_distance``: the median nearest cosine distance of a fixed bank of
  136 everyday questions shipped with the code
  (``rag/answer/gate/unrelated_questions.txt``; what an unrelated question looks
  like here).

:func:`relative_distance` maps a query's nearest distance onto that scale
(0 = like the store's own sentences, 1 = like the unrelated bank). A store
with few chunks has few pseudo-queries: its ``self_distance`` is shrunk
towards :data:`PRIOR_SELF_DISTANCE` (the two dev corpora's value) with the
weight of :data:`PRIOR_WEIGHT` pseudo-queries, so a one-chunk store still
gets a usable scale. Identical chunk contents count once. The calibration
also records the documents' languages (share of distinct chunks per ISO
639-1 code, :mod:`rag.language`), so a question in another language
can be told apart from a question the documents do not answer.

Everything here is a pure function of the chunks, their vectors and an
``encode`` callable; the store computes it when its documents change and
keeps it with its index cache (one JSON object per index generation).
Cost: one batched encode of at most 256 short sentences (about 2-3 s on 2
cores; the bank's 136 once per process) and a ``(256, n_chunks)`` matrix
product, once per change of the documents, never per query.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from rag.text import TermStats

#: Bumped when the calibration's meaning changes: stored calibrations of another version are recomputed.
#: 2 (issue 27): 256 pseudo-queries chosen by content hash, a trimmed mean instead of a median of 64.
CALIBRATION_VERSION = 2

#: The fixed bank of unrelated everyday questions (one per line, ``#`` comments).
BANK_PATH = Path(__file__).with_name("unrelated_questions.txt")

#: Pseudo-queries drawn per store (at most one per distinct chunk). Measured on the dev corpora (issue 27):
#: with 64 the reference moved by up to 0.05 (sd 0.017) when 10 random chunks of the course chapters were
#: left out; with 256 chosen by hash and a trimmed mean, by 0.006 (sd 0.001), 0.360 against 0.360 for all 805.
MAX_PSEUDO_QUERIES = 256

#: Share of the pseudo-queries' distances cut from each end before the mean (:func:`trimmed_mean`).
TRIM = 0.2

#: The self distance of the two dev corpora (course chapters 0.360, PDFs 0.346 with 256 pseudo-queries and the
#: trimmed mean; 0.42 and 0.37 with the median of 64 before issue 27); a tiny store's own is shrunk towards it.
PRIOR_SELF_DISTANCE = 0.35

#: How many pseudo-queries the prior is worth (a store with 8 pseudo-queries weighs half its own).
PRIOR_WEIGHT = 8

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORDS = re.compile(r"\w+")


def unrelated_bank(path: Path = BANK_PATH) -> tuple[str, ...]:
    """The fixed bank of unrelated questions (stripped, comments and blank lines dropped)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return tuple(s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#"))


def gate_term_stats(texts: Sequence[str]) -> "TermStats":
    """Term statistics for the gate's lexical evidence: the store's distinct chunk ``texts`` plus the unrelated bank.

    The bank is a fixed background of everyday wording: a word that ordinary
    questions use ("long", "much", "work") never counts as a rare word the
    store lacks, even in a store of one chunk, where every absent word would
    otherwise weigh as much as a missing technical term.
    """
    return TermStats.from_texts([*texts, *unrelated_bank()])


def distinct_indices(contents: Sequence[str]) -> list[int]:
    """Positions of the first occurrence of each distinct content (whitespace collapsed), in order."""
    seen: set[str] = set()
    out = []
    for i, c in enumerate(contents):
        key = " ".join(c.split())
        if key not in seen:
            seen.add(key)
            out.append(i)
    return out


def pseudo_query(content: str, min_words: int = 5, max_words: int = 24) -> str | None:
    """One question-sized sentence of ``content``: the longest sentence of ``min_words``..``max_words`` words.

    A sentence longer than ``max_words`` is cut to its first ``max_words``
    words when nothing shorter qualifies; ``None`` when the chunk has no
    sentence of ``min_words`` words (a table, a heading alone).
    """
    sentences = [s.strip() for s in _SENTENCE.split(content) if s and s.strip()]
    scored = [(len(_WORDS.findall(s)), s) for s in sentences]
    fits = [(n, s) for n, s in scored if min_words <= n <= max_words]
    if fits:
        return max(fits, key=lambda t: t[0])[1]
    longer = [s for n, s in scored if n > max_words]
    if longer:
        return " ".join(longer[0].split()[:max_words])
    return None


def _content_hash(content: str) -> bytes:
    return hashlib.blake2b(" ".join(content.split()).encode("utf-8"), digest_size=8).digest()


def pseudo_queries(contents: Sequence[str], n: int = MAX_PSEUDO_QUERIES) -> list[tuple[int, str]]:
    """Up to ``n`` ``(chunk position, sentence)`` pairs, in position order, from the ``n`` distinct chunks whose
    content (whitespace collapsed) hashes lowest (BLAKE2b): deterministic, and a chunk's being drawn does not
    depend on the other chunks, so a few chunks more or less change a few pseudo-queries, not all of them."""
    idx = distinct_indices(contents)
    if len(idx) > n:
        idx = sorted(sorted(idx, key=lambda i: _content_hash(contents[i]))[:n])
    out = []
    for i in idx:
        q = pseudo_query(contents[i])
        if q:
            out.append((i, q))
    return out


def trimmed_mean(values: Sequence[float] | np.ndarray, trim: float = TRIM) -> float:
    """Mean of ``values`` without the ``trim`` share at each end (``int(n * trim)`` values each); the median
    when that would leave nothing. Raises ``ValueError`` for no values."""
    x = np.sort(np.asarray(values, dtype=np.float64))
    if not len(x):
        raise ValueError("trimmed_mean of no values")
    k = int(len(x) * trim)
    return float(x[k:len(x) - k].mean()) if len(x) > 2 * k else float(np.median(x))


def nearest_distances(queries: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """``(m,)`` float64: each query's smallest cosine distance ``1 - <q, v>`` to the ``(n, d)`` unit ``vectors``.

    ``queries`` is ``(m, d)`` float32, L2-normalised. With no vectors every distance is 2.0.
    """
    if len(vectors) == 0:
        return np.full(len(queries), 2.0)
    sims = np.asarray(queries, np.float32) @ np.asarray(vectors, np.float32).T
    return 1.0 - sims.max(axis=1).astype(np.float64)


@dataclass(frozen=True)
class Calibration:
    """A store's references for the gate (see the module docstring).

    ``n_chunks`` chunk rows, ``n_distinct`` distinct contents; ``n_pseudo``
    pseudo-queries used; ``self_distance_raw`` the trimmed mean of their nearest
    cosine distances (:func:`trimmed_mean`), ``self_distance`` the same shrunk towards the prior;
    ``far_distance`` the bank's median nearest distance and ``far_low`` its
    10th percentile; ``languages`` ISO 639-1 code -> share of distinct chunks
    (empty when no detector ran); ``version`` :data:`CALIBRATION_VERSION`.
    """

    n_chunks: int
    n_distinct: int
    n_pseudo: int
    self_distance_raw: float
    self_distance: float
    far_distance: float
    far_low: float
    languages: dict[str, float] = field(default_factory=dict)
    version: int = CALIBRATION_VERSION

    @property
    def span(self) -> float:
        """``far_distance - self_distance``, at least 0.05 (the scale of :func:`relative_distance`)."""
        return max(0.05, self.far_distance - self.self_distance)

    def relative_distance(self, distance: float) -> float:
        """``(distance - self_distance) / span``: 0 like the store's own sentences, 1 like the unrelated bank."""
        return (float(distance) - self.self_distance) / self.span

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Calibration":
        """Read :meth:`to_json`'s output. Raises ``ValueError`` for another version or a malformed object."""
        try:
            d = json.loads(text)
            cal = cls(**d)
        except (TypeError, json.JSONDecodeError) as e:
            raise ValueError(f"not a gate calibration: {e}") from e
        if cal.version != CALIBRATION_VERSION:
            raise ValueError(f"calibration version {cal.version}, expected {CALIBRATION_VERSION}")
        return cal


def shrink(own: float, n: int, prior: float = PRIOR_SELF_DISTANCE, weight: int = PRIOR_WEIGHT) -> float:
    """``(n * own + weight * prior) / (n + weight)``: a few pseudo-queries lean on the prior."""
    return (n * own + weight * prior) / (n + weight) if n + weight else prior


@lru_cache(maxsize=4)
def _bank_vectors(key: str, encode: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    return np.asarray(encode(list(unrelated_bank())), dtype=np.float32)


def bank_vectors(encode: Callable[[list[str]], np.ndarray], key: str = "") -> np.ndarray:
    """The bank's ``(136, d)`` float32 vectors, encoded once per process per ``key`` (the embedder's name)."""
    return _bank_vectors(key or str(id(encode)), encode)


def calibrate(contents: Sequence[str], vectors: np.ndarray, encode: Callable[[list[str]], np.ndarray], *,
              encoder_key: str = "", detect: Callable[[str], tuple[str, float]] | None = None,
              languages: Sequence[str | None] | None = None) -> Calibration:
    """Measure a store's references: ``contents`` the chunks' quoted texts, ``vectors`` their ``(n, d)`` unit vectors.

    ``encode(list of str) -> (m, d)`` float32 unit vectors (the store's
    embedder). :attr:`Calibration.languages` comes from ``languages`` (each
    content's document language as the store recorded it, issue 23: nothing
    is detected again) when given, else from ``detect(text) -> (iso code,
    probability)``, an optional language detector run on a sample of the
    chunks. An empty store gives the prior references and no languages.
    """
    vectors = np.asarray(vectors, np.float32).reshape(len(contents), -1) if len(contents) else np.zeros((0, 1))
    distinct = distinct_indices(contents)
    pq = pseudo_queries(contents)
    self_raw = trimmed_mean(nearest_distances(encode([q for _, q in pq]), vectors)) if pq and len(vectors) else \
        PRIOR_SELF_DISTANCE
    far = nearest_distances(bank_vectors(encode, encoder_key), vectors) if len(vectors) else np.array([1.0])
    if languages is not None:
        langs = stored_language_shares([languages[i] for i in distinct])
    else:
        langs = language_shares([contents[i] for i in distinct], detect) if detect else {}
    return Calibration(n_chunks=len(contents), n_distinct=len(distinct), n_pseudo=len(pq),
                       self_distance_raw=round(self_raw, 4), self_distance=round(shrink(self_raw, len(pq)), 4),
                       far_distance=round(float(np.median(far)), 4), far_low=round(float(np.quantile(far, 0.1)), 4),
                       languages=langs)


def language_shares(contents: Sequence[str], detect: Callable[[str], tuple[str, float]], *,
                    min_probability: float = 0.8, max_chunks: int = 200, chars: int = 600) -> dict[str, float]:
    """Share of (up to ``max_chunks`` evenly spaced) chunks per detected language, confident detections only.

    Each chunk's first ``chars`` characters are classified; detections under
    ``min_probability`` are left out. Shares are rounded to 3 decimals and sum to 1 (or the dict is empty).
    """
    if not contents:
        return {}
    step = max(1, len(contents) // max_chunks)
    counts: dict[str, int] = {}
    for c in contents[::step][:max_chunks]:
        lang, p = detect(c[:chars])
        if p >= min_probability:
            counts[lang] = counts.get(lang, 0) + 1
    total = sum(counts.values())
    # at least 0.001: a document of a few chunks among thousands keeps its language (rounded, it was 0.0)
    return {k: max(round(v / total, 3), 0.001) for k, v in sorted(counts.items(), key=lambda kv: -kv[1])} \
        if total else {}


def stored_language_shares(languages: Sequence[str | None]) -> dict[str, float]:
    """Share of chunks per language, from each chunk's stored document language (``None`` ones left out); rounded
    to 3 decimals (at least 0.001), most frequent first, summing to 1 (or empty; to about 1 with tiny shares)."""
    counts: dict[str, int] = {}
    for lang in languages:
        if lang:
            counts[lang] = counts.get(lang, 0) + 1
    total = sum(counts.values())
    # at least 0.001: a document of a few chunks among thousands keeps its language (rounded, it was 0.0)
    return {k: max(round(v / total, 3), 0.001) for k, v in sorted(counts.items(), key=lambda kv: -kv[1])} \
        if total else {}
