"""The Milvus search backend (issue 18): dense vectors and Milvus's built-in BM25 in one collection.

Selected by settings ``backend = "milvus"``; ``milvus_uri`` is a local file
path ending in ``.db`` (milvus-lite: embedded, in this process, what the
tests run) or ``http://host:19530`` for a Milvus standalone or distributed
server: the same ``pymilvus`` calls either way.

One collection per store (default ``rag_chunks``) with fields ``id`` (INT64,
the SQLite chunk id), ``dense`` (FLOAT_VECTOR, unit rows, inner product),
``terms`` (VARCHAR: the chunk's :func:`rag.text.tokenize` tokens joined by
spaces, so Milvus's analyzer sees the same terms as the local BM25: tokens
are ``[^\\W_]+`` words, which the ``standard`` analyzer keeps whole) and
``sparse`` (the BM25 function's output; k1 / b from settings). The collection
property ``rag.stamp`` records the encoder that made the vectors and their dimension;
opening it with another raises :class:`rag.errors.ModelMismatchError`. The property
``rag.generation`` records the store generation the collection holds: the store's index cache
(:class:`rag.store.cache.IndexCache`) drives this backend as it drives the local one (issue 23; a subclass
of the cache with its own copy of the update path did until then).

SQLite stays the source of truth: :meth:`MilvusBackend.rebuild` drops and
refills the collection from the chunks the store passes. BM25 in Milvus is
incremental, so a batch costs its own chunks only (the local leg rebuilds
BM25 over every chunk).

Scores: Milvus's BM25 is ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``;
bm25s's Lucene variant leaves out the constant ``(k1 + 1)``, so scores are
divided by it here and mean the same as the local leg's (the learned gate reads
them). milvus-lite reports BM25 as a negative distance, a server as a positive
score: the absolute value is taken.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rag.errors import ModelMismatchError, StoreError
from rag.index.analyzer import Analyzer
from rag.store.backend import AllRows, Batch, ChunkTable, LocalBackend
from rag.text import tokenize

#: The collection property holding the stamp (encoder, dimension, BM25 k1 and b).
STAMP_PROPERTY = "rag.stamp"
#: The collection property holding the store generation its rows match.
GENERATION_PROPERTY = "rag.generation"
#: Rows per insert call.
INSERT_BATCH = 2000
#: Largest ``terms`` string (characters) Milvus accepts in the VARCHAR field.
MAX_TERMS_CHARS = 65_535


def terms_of(text: str) -> str:
    """The ``terms`` value for a chunk text: its tokens joined by single spaces (at most 65,535 characters)."""
    return " ".join(tokenize(text))[:MAX_TERMS_CHARS]


def resolve_uri(uri: str, store: Path | str | None = None) -> str:
    """``uri`` itself, or ``<store>/milvus.db`` when empty (milvus-lite). Raises :class:`StoreError` when both are."""
    if uri:
        return uri
    if store is None:
        raise StoreError("backend 'milvus' needs milvus_uri or a store directory")
    return str(Path(store).resolve() / "milvus.db")


def _id_filter(allowed: np.ndarray | None) -> dict[str, str]:
    """The ``filter`` keyword of a Milvus search keeping only the chunk ids ``allowed`` (none when ``None``)."""
    if allowed is None:
        return {}
    return {"filter": f"id in [{', '.join(str(int(i)) for i in allowed)}]"}


class _Dense:
    def __init__(self, be: "MilvusBackend"):
        self._be = be
        self.kind = "milvus"

    def __len__(self) -> int:
        return len(self._be)

    def ids(self) -> np.ndarray:
        """Every chunk id in the collection, int64, sorted."""
        return self._be.ids()

    def search(self, q_vec: np.ndarray, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` by inner product: ``(ids int64, cosine distances float32)``, best first.

        ``allowed`` (int64 ids) keeps only those chunks (issue 16's scope, a Milvus ``id in [...]`` filter).
        """
        k = min(int(k), len(self._be) if allowed is None else len(allowed))
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        res = self._be.client.search(self._be.collection, data=[np.asarray(q_vec, np.float32).tolist()],
                                     anns_field="dense", limit=k, output_fields=["id"], **_id_filter(allowed),
                                     search_params={"metric_type": "IP", "params": self._be.search_params})[0]
        ids = np.array([int(r["id"]) for r in res], dtype=np.int64)
        dist = np.clip(1.0 - np.array([float(r["distance"]) for r in res], dtype=np.float32), 0.0, 2.0)
        order = np.lexsort((ids, dist))  # equal distances by id, as the local leg
        return ids[order], dist[order].astype(np.float32)

    def distances(self, q_vec: np.ndarray, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Cosine distances of the stored vectors of ``ids`` to ``q_vec``. Raises :class:`StoreError` for an unknown id."""
        if len(ids) == 0:
            return np.zeros(0, dtype=np.float32)
        vecs = self._be.vectors(ids)
        return np.clip(1.0 - vecs @ np.asarray(q_vec, np.float32).reshape(-1), 0.0, 2.0).astype(np.float32)


class _Lexical:
    """Milvus's BM25 over plain :func:`rag.text.tokenize` terms: no stemming, and no coverage weight in the
    fusion (:meth:`coverage` gives ``None``, so the design's equal RRF weights apply)."""

    #: How queries are analysed (plain tokens, the terms the collection holds).
    analyzer = Analyzer(stem=False)

    def __init__(self, be: "MilvusBackend"):
        self._be = be

    def coverage(self, query: str, chunk_id: int) -> float | None:
        """Not known for Milvus's BM25: ``None`` (BM25 keeps its full RRF vote)."""
        return None

    def __len__(self) -> int:
        return len(self._be)

    def ids(self) -> np.ndarray:
        """Every chunk id in the collection (terms and vectors live in the same rows)."""
        return self._be.ids()

    def search(self, query: str, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` by BM25 (Milvus's function): ``(ids int64, scores float32)``, best first, score > 0 only.

        ``allowed`` (int64 ids) keeps only those chunks (issue 16's scope).
        """
        empty = (np.zeros(0, np.int64), np.zeros(0, np.float32))
        q = terms_of(query)
        if not q or k <= 0 or not len(self._be) or (allowed is not None and not len(allowed)):
            return empty
        res = self._be.client.search(self._be.collection, data=[q], anns_field="sparse", limit=int(k),
                                     output_fields=["id"], search_params={"metric_type": "BM25"},
                                     **_id_filter(allowed))[0]
        scale = 1.0 + self._be.k1
        pairs = [(int(r["id"]), abs(float(r["distance"])) / scale) for r in res]
        pairs = [(i, s) for i, s in pairs if s > 0]
        pairs.sort(key=lambda p: (-p[1], p[0]))  # score desc, then id: deterministic ties
        if not pairs:
            return empty
        return np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.float32)


class MilvusBackend:
    """A Milvus collection as the search backend (see the module docstring).

    ``uri`` a ``.db`` file path (milvus-lite) or a server URL; ``encoder`` the
    stamp of the vectors' encoder (:data:`rag.index.embed.ENCODERS` name) and
    ``dim`` their dimension; ``index_type`` of the dense field (``FLAT`` exact,
    or ``HNSW`` / ``IVF_FLAT`` with ``search_params``). Raises
    :class:`ModelMismatchError` when the collection holds another encoder's
    vectors, :class:`StoreError` when Milvus cannot be reached or pymilvus is
    missing. Thread-safe (writes are serialised).
    """

    kind = "milvus"

    def __init__(self, uri: str, *, encoder: str, dim: int = 384, collection: str = "rag_chunks",
                 k1: float = 1.2, b: float = 0.75, index_type: str = "FLAT", index_params: dict | None = None,
                 search_params: dict | None = None):
        if uri.endswith(".db"):
            # milvus-lite's in-process server answers the client's keepalive pings with GOAWAY "too_many_pings",
            # which gRPC's C core prints to stderr on every command; the client reconnects by itself
            os.environ.setdefault("GRPC_VERBOSITY", "NONE")
        try:
            from pymilvus import MilvusClient
        except ImportError as e:
            raise StoreError("backend 'milvus' needs pymilvus and milvus-lite: pip install -r requirements.txt") from e
        self.uri, self.collection, self.encoder, self.dim = uri, collection, encoder, int(dim)
        self.lite = uri.endswith(".db")
        self.k1, self.b = float(k1), float(b)
        self.index_type, self.index_params = index_type, dict(index_params or {})
        self.search_params = dict(search_params or {})
        self._lock = threading.Lock()
        self._count: int | None = None  # rows, read from Milvus when unknown (None)
        if self.lite:
            Path(uri).parent.mkdir(parents=True, exist_ok=True)
            # pymilvus asks milvus-lite's in-process server for RPCs it does not implement (AllocTimestamp, the
            # iterator's MVCC timestamp) and falls back by itself; the server would log each as an ERROR traceback
            logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
            logging.getLogger("pymilvus").setLevel(logging.ERROR)
        try:
            self.client = MilvusClient(uri)
        except Exception as e:  # noqa: BLE001 - pymilvus raises many kinds
            raise StoreError(f"cannot reach Milvus at {uri}: {e}") from e
        self._open()
        self.dense = _Dense(self)
        self.bm25 = _Lexical(self)

    # ------------------------------------------------------------------ schema

    @property
    def stamp(self) -> str:
        """What the collection's property ``rag.stamp`` records: ``encoder=<name>;dim=<d>;k1=<k1>;b=<b>``."""
        return f"encoder={self.encoder};dim={self.dim};k1={self.k1};b={self.b}"

    def _open(self) -> None:
        if self.client.has_collection(self.collection):
            props = self.client.describe_collection(self.collection).get("properties") or {}
            have = dict(p.split("=", 1) for p in str(props.get(STAMP_PROPERTY, "")).split(";") if "=" in p)
            if have.get("encoder") != self.encoder or int(have.get("dim", -1)) != self.dim:
                raise ModelMismatchError(
                    f"the Milvus collection {self.collection} at {self.uri} holds vectors of {have.get('encoder')} "
                    f"({have.get('dim')}-d), not {self.encoder} ({self.dim}-d); vectors are never mixed: rebuild it")
            if have.get("k1") != str(self.k1) or have.get("b") != str(self.b):
                self._create(drop=True)  # BM25 parameters live in the index: rebuild needed (store refills it)
            self.client.load_collection(self.collection)
            return
        self._create(drop=False)

    def _create(self, *, drop: bool) -> None:
        from pymilvus import DataType, Function, FunctionType

        if drop and self.client.has_collection(self.collection):
            self.client.drop_collection(self.collection)
        schema = self.client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("terms", DataType.VARCHAR, max_length=MAX_TERMS_CHARS, enable_analyzer=True,
                         analyzer_params={"tokenizer": "standard"})
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=self.dim)
        schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["terms"],
                                     output_field_names=["sparse"]))
        ip = self.client.prepare_index_params()
        ip.add_index(field_name="dense", index_type=self.index_type, metric_type="IP", params=self.index_params)
        bm25 = {"bm25_k1": self.k1, "bm25_b": self.b}
        # milvus-lite reads index parameters only from a JSON string under "params" (flat keys are dropped and
        # its BM25 silently runs with k1 1.5); a Milvus server takes them flat
        ip.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                     params={"params": json.dumps(bm25)} if self.lite else bm25)
        self.client.create_collection(self.collection, schema=schema, index_params=ip, consistency_level="Strong")
        self.client.alter_collection_properties(self.collection, properties={STAMP_PROPERTY: self.stamp})
        self.client.load_collection(self.collection)
        self._count = 0

    @property
    def generation(self) -> int | None:
        """The store generation the collection holds (property ``rag.generation``), ``None`` when never set."""
        props = self.client.describe_collection(self.collection).get("properties") or {}
        g = props.get(GENERATION_PROPERTY)
        return int(g) if g not in (None, "") else None

    def set_generation(self, gen: int) -> None:
        """Record that the collection now matches the store's generation ``gen``."""
        self.client.alter_collection_properties(self.collection, properties={GENERATION_PROPERTY: str(int(gen))})

    def holds(self, gen: int) -> bool:
        """Whether the collection holds the store's generation ``gen`` (its ``rag.generation`` property)."""
        return self.generation == gen

    def load(self, gen: int) -> bool:
        """The collection is searched where it is: True when it holds generation ``gen`` (else the store refills it)."""
        return self.holds(gen)

    def save(self, gen: int) -> None:
        """Record that the collection now matches the store's generation ``gen`` (:meth:`set_generation`)."""
        self.set_generation(gen)

    # ------------------------------------------------------------------ SearchBackend

    def __len__(self) -> int:
        if self._count is None:
            self._count = int(self.client.get_collection_stats(self.collection).get("row_count", 0))
        return self._count

    def update(self, added: Batch | None = None, removed: Sequence[int] = (), *,
               all_rows: AllRows | None = None) -> None:
        """Apply one batch: delete ``removed`` ids, insert ``added`` (BM25 terms computed here). ``all_rows`` unused."""
        with self._lock:
            if len(removed):
                self.client.delete(self.collection, ids=[int(i) for i in removed])
            if added is not None and len(added.ids):
                vecs = np.asarray(added.vectors, np.float32).reshape(-1, self.dim)
                for s in range(0, len(added.ids), INSERT_BATCH):
                    rows = [{"id": int(i), "terms": terms_of(t), "dense": v.tolist()}
                            for i, t, v in zip(added.ids[s:s + INSERT_BATCH], added.texts[s:s + INSERT_BATCH],
                                               vecs[s:s + INSERT_BATCH])]
                    self.client.insert(self.collection, rows)  # chunk ids are never reused (AUTOINCREMENT)
            self._count = None

    def rebuild(self, ids: np.ndarray, vectors: np.ndarray, texts: Sequence[str], *,
                table: ChunkTable | None = None) -> None:
        """Drop the collection and refill it with these chunks (from SQLite; ``table`` unused: Milvus's BM25
        reads plain terms)."""
        with self._lock:
            self._create(drop=True)
        self.update(Batch(np.asarray(ids, np.int64), vectors, list(texts)))

    def ids(self) -> np.ndarray:
        """Every chunk id in the collection, int64, sorted."""
        out = []
        it = self.client.query_iterator(self.collection, batch_size=4096, filter="id >= 0", output_fields=["id"])
        while True:
            rows = it.next()
            if not rows:
                it.close()
                break
            out += [int(r["id"]) for r in rows]
        return np.array(sorted(out), dtype=np.int64)

    def vectors(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Stored vectors of ``ids`` ((len(ids), dim) float32, same order). Raises :class:`StoreError` for an unknown id."""
        ids = [int(i) for i in ids]
        got = {int(r["id"]): r["dense"] for r in self.client.get(self.collection, ids=ids, output_fields=["dense"])}
        missing = [i for i in ids if i not in got]
        if missing:
            raise StoreError(f"Milvus collection {self.collection}: unknown chunk id(s) {missing[:5]}")
        return np.asarray([got[i] for i in ids], dtype=np.float32).reshape(len(ids), self.dim)

    def hybrid(self, query: str, q_vec: np.ndarray, *, k: int = 20, depth: int = 20, rrf_k: int = 60) -> list[int]:
        """Milvus's own hybrid search: both legs (``depth`` each) fused server-side by RRF (``rrf_k``); top ``k`` ids.

        The store fuses the legs itself (:func:`rag.store.backend.search`) so that each hit keeps its leg ranks
        and BM25 score; this is the one-round-trip form, used to check that both fusions agree.
        """
        from pymilvus import AnnSearchRequest, RRFRanker

        reqs = [AnnSearchRequest(data=[np.asarray(q_vec, np.float32).tolist()], anns_field="dense",
                                 param={"metric_type": "IP", "params": self.search_params}, limit=depth)]
        terms = terms_of(query)
        if terms:
            reqs.append(AnnSearchRequest(data=[terms], anns_field="sparse", param={"metric_type": "BM25"}, limit=depth))
        res = self.client.hybrid_search(self.collection, reqs, ranker=RRFRanker(rrf_k), limit=k, output_fields=["id"])
        return [int(r["id"]) for r in res[0]]

    def close(self) -> None:
        """Close the client (a milvus-lite server stops with the process)."""
        self.client.close()


def open_backend(settings, store_path: Path | str | None = None, *, encoder: str, dim: int = 384):
    """The backend selected by ``settings.backend``: a :class:`MilvusBackend` for ``milvus`` (URI from
    ``settings.milvus_uri`` or ``<store>/milvus.db``), else a new empty :class:`rag.store.backend.LocalBackend`."""

    if settings.backend == "milvus":
        return MilvusBackend(resolve_uri(settings.milvus_uri, store_path), encoder=encoder, dim=dim,
                             k1=settings.bm25_k1, b=settings.bm25_b)
    return LocalBackend(dim, k1=settings.bm25_k1, b=settings.bm25_b)
