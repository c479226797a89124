"""Issue 19 experiment harness: retrieval candidates measured per corpus and per wording.

Ingests both shared development corpora once (strategy E chunks as the product
cuts them; vectors through the evaluation's embedding cache; the chunk lists
pickled under ``$XDG_CACHE_HOME/rag/issue19``), runs each candidate retrieval
and prints R@1/4/8/20 and MRR per corpus x wording, with paired exact sign
tests against the product's retrieval at R@4 and R@20.

Wordings: ``doc`` = the documents' words (``query_course`` / ``query_doc``),
``user`` = a user's words (``query_ticket`` / ``query_user``). Correct = a
returned chunk's ``content`` holds the whole needle, whitespace collapsed.

    nice -n 10 .venv/bin/python scripts/retrieval_experiments.py [--only NAME ...] [--llm]

Model outputs (rewrites, hypothetical answers) are cached in
``$XDG_CACHE_HOME/rag/issue19/llm.json`` so a rerun costs nothing.
This is a measurement script, not product code: it stays out of ``rag/``.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag.evaluation.cache import EmbeddingCache  # noqa: E402
from rag.evaluation.metrics import holds_needle, sign_test  # noqa: E402
from rag.index.bm25 import BM25Index  # noqa: E402
from rag.index.dense import DenseIndex  # noqa: E402
from rag.index.fusion import rrf  # noqa: E402
from rag.ingest.chunk import chunk_document  # noqa: E402
from rag.ingest.extract import extract_path  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpus"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rag" / "issue19"
KS = (1, 4, 8, 20)
DEPTH = 20  # the product's candidates_k: hits per leg before fusion
WS = re.compile(r"\s+")


def norm(s: str) -> str:
    return WS.sub(" ", s).strip()


@dataclass
class Query:
    qid: str
    wording: str  # "doc" | "user"
    text: str
    needle: str
    vec: np.ndarray | None = None


@dataclass
class Corpus:
    name: str
    chunks: list
    doc_of: list[str]          # document name per chunk
    vecs: np.ndarray
    queries: list[Query]
    dense: DenseIndex = None
    bm25: BM25Index = None
    contents: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    def rank(self, ids, needle: str) -> int | None:
        """1-based rank of the first chunk holding the whole needle, judged as the product's evaluation judges it
        (:func:`rag.evaluation.metrics.holds_needle`: whitespace collapsed, a Markdown table row's cells read as
        words); ``None`` if none in ``ids`` does."""
        n = norm(needle)
        for r, cid in enumerate(ids, 1):
            if n in self.contents[cid] or holds_needle(self.chunks[cid].content, needle):
                return r
        return None


def load_corpus(name: str, docs_dir: Path, qfile: Path, fields: tuple[str, str], embedder, cache: EmbeddingCache) -> Corpus:
    pk = CACHE / f"{name}.chunks.pkl"
    if pk.exists():
        chunks, doc_of, docs = pickle.loads(pk.read_bytes())
    else:
        chunks, doc_of, docs = [], [], {}
        for p in sorted(docs_dir.iterdir()):
            if p.suffix.lower() not in (".md", ".pdf", ".txt"):
                continue
            d = extract_path(p)
            docs[p.name] = d.canonical
            for c in chunk_document(d, "E"):
                chunks.append(c)
                doc_of.append(p.name)
        CACHE.mkdir(parents=True, exist_ok=True)
        pk.write_bytes(pickle.dumps((chunks, doc_of, docs)))
    vecs = cache.encode([c.text for c in chunks], embedder)
    qs = []
    for line in qfile.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            qs.append(Query(r["id"], "doc", r[fields[0]], r["needle"]))
            qs.append(Query(r["id"], "user", r[fields[1]], r["needle"]))
    qv = cache.encode([q.text for q in qs], embedder)
    for q, v in zip(qs, qv):
        q.vec = v
    ids = np.arange(len(chunks), dtype=np.int64)
    c = Corpus(name, chunks, doc_of, vecs, qs)
    c.dense = DenseIndex.build(ids, vecs)
    c.bm25 = BM25Index.build([ch.text for ch in chunks], ids, stem=False)  # today's (pre-issue-19) lexical leg
    c.contents = [norm(ch.content) for ch in chunks]
    c.extra["docs"] = docs
    return c


# --------------------------------------------------------------------------- candidates
# Each candidate: (corpus, query) -> fused chunk ids, best first (at least 20 when available).

def legs(c: Corpus, q: Query, depth: int = DEPTH, bm25=None, text: str | None = None, vec=None):
    d_ids, _ = c.dense.search(q.vec if vec is None else vec, depth)
    b_ids, _ = (bm25 or c.bm25).search(q.text if text is None else text, depth)
    return d_ids.tolist(), b_ids.tolist()


def baseline(c: Corpus, q: Query) -> list[int]:
    return [i for i, _ in rrf(legs(c, q))][:20]


def dense_only(c: Corpus, q: Query) -> list[int]:
    return c.dense.search(q.vec, 20)[0].tolist()


def bm25_only(c: Corpus, q: Query) -> list[int]:
    return c.bm25.search(q.text, 20)[0].tolist()


def depth100(c: Corpus, q: Query) -> list[int]:
    return [i for i, _ in rrf(legs(c, q, depth=100))][:20]


# ---- stemming: Snowball (PyStemmer), language per document (py3langid), the query's language among the corpus's

ISO_TO_SNOWBALL = {"en": "english", "de": "german", "fr": "french", "es": "spanish", "it": "italian", "pt": "portuguese",
                   "nl": "dutch", "sv": "swedish", "da": "danish", "no": "norwegian", "fi": "finnish", "ru": "russian",
                   "tr": "turkish", "hu": "hungarian", "ro": "romanian", "ca": "catalan", "el": "greek", "pl": "polish"}


class StemBM25:
    """BM25 over stemmed tokens (rag.text.tokenize, then Snowball in each document's language)."""

    def __init__(self, c: Corpus, *, head_weight: int = 1, head_only_title: bool = False, stem: bool = True,
                 stop: str = "en"):
        import bm25s
        import Stemmer
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        from rag.text import tokenize

        self.tokenize = tokenize
        self.stem = stem
        self.lid = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        doc_lang = {d: self.lid.classify(t[:20000])[0] for d, t in c.extra["docs"].items()}
        self.langs = sorted({lang for lang in doc_lang.values() if lang in ISO_TO_SNOWBALL}) or ["en"]
        self.lid.set_languages(self.langs)
        self.stemmers = {lang: Stemmer.Stemmer(ISO_TO_SNOWBALL[lang]) for lang in self.langs}
        self.stop = stop
        toks = []
        for ch, d in zip(c.chunks, c.doc_of):
            lang = doc_lang[d] if doc_lang[d] in self.stemmers else self.langs[0]
            head = ch.text[: len(ch.text) - len(ch.content)] if ch.text.endswith(ch.content) else ""
            t = self.analyze(ch.content, lang) + self.analyze(head, lang) * head_weight
            toks.append(t or [""])
        self.bm = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        self.bm.index(toks, show_progress=False)
        self.doc_lang = doc_lang

    def analyze(self, text: str, lang: str) -> list[str]:
        from bm25s.stopwords import STOPWORDS_GERMAN

        t = self.tokenize(text)
        if self.stop == "lang" and lang == "de":
            sw = set(STOPWORDS_GERMAN)
            t = [x for x in t if x not in sw]
        return self.stemmers[lang].stemWords(t) if self.stem else t

    def query_lang(self, text: str) -> str:
        return self.lid.classify(text)[0] if len(self.langs) > 1 else self.langs[0]

    def search(self, text: str, k: int):
        q = [t for t in self.analyze(text, self.query_lang(text)) if t in self.bm.vocab_dict]
        if not q:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        s = np.asarray(self.bm.get_scores(q), dtype=np.float32)
        k = min(k, int((s > 0).sum()))
        top = np.argsort(-s, kind="stable")[:k]
        return top.astype(np.int64), s[top]


def _cached(c: Corpus, key: str, make):
    if key not in c.extra:
        c.extra[key] = make()
    return c.extra[key]


def stemmed(c: Corpus, q: Query) -> list[int]:
    return [i for i, _ in rrf(legs(c, q, bm25=_cached(c, "stem", lambda: StemBM25(c))))][:20]


def stemmed_destop(c: Corpus, q: Query) -> list[int]:
    return [i for i, _ in rrf(legs(c, q, bm25=_cached(c, "stem_ds", lambda: StemBM25(c, stop="lang"))))][:20]


def head_w(w: int, stem: bool):
    def fn(c: Corpus, q: Query) -> list[int]:
        return [i for i, _ in rrf(legs(c, q, bm25=_cached(c, f"head{w}{stem}", lambda: StemBM25(c, head_weight=w, stem=stem))))][:20]
    return fn


def wrrf(lists, weights, k=60):
    sc: dict[int, float] = {}
    for lst, w in zip(lists, weights):
        for r, cid in enumerate(lst, 1):
            sc[int(cid)] = sc.get(int(cid), 0.0) + w / (k + r)
    order = {cid: i for i, cid in enumerate(sc)}
    return [cid for cid, _ in sorted(sc.items(), key=lambda kv: (-kv[1], order[kv[0]]))]


EMB = {}


def embed(texts: list[str]) -> np.ndarray:
    return EMB["cache"].encode(texts, EMB["emb"])


def keyterms(c: Corpus, text: str, max_df: float = 0.05) -> str:
    """The query's tokens that occur in the corpus but in at most ``max_df`` of its chunks (the specific ones)."""
    from rag.text import TermStats, tokenize

    ts = _cached(c, "ts", lambda: TermStats.from_texts([ch.text for ch in c.chunks]))
    toks = [t for t in tokenize(text) if 0 < ts.df.get(t, 0) <= max_df * ts.n_chunks]
    return " ".join(dict.fromkeys(toks))


def kt_dense(c: Corpus, q: Query) -> list[int]:
    d, b = legs(c, q)
    kt = keyterms(c, q.text)
    extra = c.dense.search(embed([kt])[0], DEPTH)[0].tolist() if kt else []
    return [i for i, _ in rrf([d, b, extra])][:20]


def kt_bm25(c: Corpus, q: Query) -> list[int]:
    d, b = legs(c, q)
    kt = keyterms(c, q.text)
    extra = c.bm25.search(kt, DEPTH)[0].tolist() if kt else []
    return [i for i, _ in rrf([d, b, extra])][:20]


def dense_prf(n: int = 3, alpha: float = 1.0, replace: bool = False):
    def fn(c: Corpus, q: Query) -> list[int]:
        d, b = legs(c, q)
        fused = [i for i, _ in rrf([d, b])]
        v = q.vec + alpha * c.vecs[fused[:n]].mean(0)
        v = (v / np.linalg.norm(v)).astype(np.float32)
        extra = c.dense.search(v, DEPTH)[0].tolist()
        return [i for i, _ in rrf([extra, b] if replace else [d, b, extra])][:20]
    return fn


def bm25_weight(w: float):
    def fn(c: Corpus, q: Query) -> list[int]:
        d, b = legs(c, q)
        return wrrf([d, b], [1.0, w])[:20]
    return fn


def stem_clarity(lo: float, hi: float, stem_cov: bool = True, english_only: bool = False):
    """Stemmed BM25 leg, its RRF weight from the IDF-weighted share of the query's (stemmed) terms its best chunk holds."""
    def fn(c: Corpus, q: Query) -> list[int]:
        sb = _cached(c, "stem", lambda: StemBM25(c))
        d, _ = c.dense.search(q.vec, DEPTH)
        d = d.tolist()
        b = sb.search(q.text, DEPTH)[0].tolist()
        if stem_cov:
            import math

            lang = sb.query_lang(q.text)
            n = len(c.chunks)

            def idf(t):
                df = int(sb.bm.get_scores([t]).astype(bool).sum()) if t in sb.bm.vocab_dict else 0
                return math.log(1 + (n - df + 0.5) / (df + 0.5))
            qt = [t for t in dict.fromkeys(sb.analyze(q.text, lang)) if t in sb.bm.vocab_dict]
            if not b or not qt:
                return wrrf([d, b], [1.0, 1.0])[:20]
            ch = c.chunks[b[0]]
            top = set(sb.analyze(ch.text, sb.doc_lang.get(c.doc_of[b[0]], "en") if sb.doc_lang.get(c.doc_of[b[0]]) in sb.stemmers else sb.langs[0]))
            w_ = {t: idf(t) for t in qt}
            cov = sum(w_[t] for t in qt if t in top) / sum(w_.values())
        else:
            from rag.text import TermStats, tokenize

            ts = _cached(c, "ts", lambda: TermStats.from_texts([ch.text for ch in c.chunks]))
            qt = [t for t in dict.fromkeys(tokenize(q.text)) if ts.df.get(t, 0) > 0]
            if not b or not qt:
                return wrrf([d, b], [1.0, 1.0])[:20]
            top = set(tokenize(c.chunks[b[0]].text))
            cov = sum(ts.idf(t) for t in qt if t in top) / sum(ts.idf(t) for t in qt)
        w = float(np.clip((cov - lo) / (hi - lo), 0.0, 1.0))
        if english_only and sb.query_lang(q.text) != "en":
            w = 1.0
        out = wrrf([d, b], [1.0, w])[:20]
        nearest = float(1 - c.vecs[d[0]] @ q.vec)
        SIGNALS[(c.name, q.qid, q.wording)] = dict(cov=cov, w=w, nearest=nearest, rank=c.rank(out, q.needle))
        return out
    return fn


SIGNALS = {}
GATED_BASE = "stem + coverage .3-.7, full bm25 unless English"


def bm25_clarity(lo: float, hi: float):
    """BM25's RRF weight from how much of the query the best BM25 chunk covers (IDF-weighted): weak match -> less BM25."""
    def fn(c: Corpus, q: Query) -> list[int]:
        from rag.text import TermStats, tokenize

        ts = _cached(c, "ts", lambda: TermStats.from_texts([ch.text for ch in c.chunks]))
        d, b = legs(c, q)
        qt = [t for t in dict.fromkeys(tokenize(q.text)) if ts.df.get(t, 0) > 0]
        if not b or not qt:
            return wrrf([d, b], [1.0, 1.0])[:20]
        top = set(tokenize(c.chunks[b[0]].text))
        cov = sum(ts.idf(t) for t in qt if t in top) / sum(ts.idf(t) for t in qt)
        w = float(np.clip((cov - lo) / (hi - lo), 0.0, 1.0))
        return wrrf([d, b], [1.0, w])[:20]
    return fn


def product(band=(0.3, 0.7)):
    """The product's own retrieve() over the product's BM25Index (stemmed, language per document)."""
    from rag.index.fusion import retrieve

    def fn(c: Corpus, q: Query) -> list[int]:
        bm = _cached(c, "product_bm25", lambda: BM25Index.build([ch.text for ch in c.chunks], np.arange(len(c.chunks)),
                                                                 groups=c.doc_of))
        return [h.chunk_id for h in retrieve(q.text, q.vec, c.dense, bm, k=20, depth=DEPTH, coverage_band=band)]
    return fn


CLAUSE = re.compile(r"[?;!]+\s+|\s+-\s+|,\s+(?:or|and|but|is|are|does|do|can|how|what|why|which|who|wer|wie|was|oder)\b")


def clauses_leg(band=(0.3, 0.7)):
    """The product's retrieval plus one dense leg per clause when the question has several (users ask two at once)."""
    from rag.index.fusion import bm25_weight

    def fn(c: Corpus, q: Query) -> list[int]:
        bm = _cached(c, "product_bm25", lambda: BM25Index.build([ch.text for ch in c.chunks], np.arange(len(c.chunks)),
                                                                 groups=c.doc_of))
        d = c.dense.search(q.vec, DEPTH)[0].tolist()
        b = bm.search(q.text, DEPTH)[0].tolist()
        w = bm25_weight(q.text, bm, b[0] if b else None, band)
        parts = [p.strip() for p in CLAUSE.split(q.text) if len(p.split()) >= 3]
        lists, weights = [d, b], [1.0, w]
        if len(parts) > 1:
            for v in embed(parts):
                lists.append(c.dense.search(v, DEPTH)[0].tolist())
                weights.append(1.0 / len(parts))
        return wrrf(lists, weights)[:20]
    return fn


def with_model(kind: str, model_file: str = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", legs_of: str = "both",
               replace: bool = False):
    """The product's retrieval; for a question the gate calls weak (coverage of BM25's best chunk < 0.5), the
    model's output (rewrite or hypothetical answer) is searched too and its lists fused by RRF."""
    from rag.index.fusion import bm25_weight

    path = CACHE / f"llm-{kind}-{Path(model_file).stem}.json"

    def fn(c: Corpus, q: Query) -> list[int]:
        outs = _cached(c, f"llm-{kind}-{model_file}", lambda: json.loads(path.read_text()) if path.exists() else {})
        bm = _cached(c, "product_bm25", lambda: BM25Index.build([ch.text for ch in c.chunks], np.arange(len(c.chunks)),
                                                                 groups=c.doc_of))
        d = c.dense.search(q.vec, DEPTH)[0].tolist()
        b = bm.search(q.text, DEPTH)[0].tolist()
        w = bm25_weight(q.text, bm, b[0] if b else None)
        cov = bm.coverage(q.text, b[0]) if b else None
        lists, weights = [d, b], [1.0, w]
        if cov is not None and cov < 0.5 and q.text in outs:
            r = outs[q.text]["out"]
            if replace:
                lists, weights = [], []
            if legs_of in ("both", "dense"):
                lists.append(c.dense.search(embed([r])[0], DEPTH)[0].tolist())
                weights.append(1.0)
            if legs_of in ("both", "bm25"):
                rb = bm.search(r, DEPTH)[0].tolist()
                lists.append(rb)
                weights.append(bm25_weight(r, bm, rb[0] if rb else None))
        return wrrf(lists, weights)[:20]
    return fn


CANDIDATES = {
    "baseline": baseline,
    "dense only": dense_only,
    "bm25 only": bm25_only,
    "legs depth 100": depth100,
    "stem": stemmed,
    "stem + German stop list": stemmed_destop,
    "heading x0 (content only)": head_w(0, False),
    "heading x2": head_w(2, False),
    "heading x3": head_w(3, False),
    "stem + heading x2": head_w(2, True),
    "+ dense(key terms)": kt_dense,
    "+ bm25(key terms)": kt_bm25,
    "+ dense PRF top3": dense_prf(),
    "dense PRF top3 replaces dense": dense_prf(replace=True),
    "bm25 weight 0.5": bm25_weight(0.5),
    "bm25 weight by coverage .3-.7": bm25_clarity(0.3, 0.7),
    "bm25 weight by coverage .2-.5": bm25_clarity(0.2, 0.5),
    "bm25 weight by coverage .25-.6": bm25_clarity(0.25, 0.6),
    "bm25 weight by coverage .1-.4": bm25_clarity(0.1, 0.4),
    "stem + coverage .2-.5 (stemmed)": stem_clarity(0.2, 0.5),
    "stem + coverage .2-.5 (plain)": stem_clarity(0.2, 0.5, False),
    "stem + coverage .3-.7 (stemmed)": stem_clarity(0.3, 0.7),
    "stem + coverage .3-.7, full bm25 unless English": stem_clarity(0.3, 0.7, english_only=True),
    "stem + coverage .2-.5, full bm25 unless English": stem_clarity(0.2, 0.5, english_only=True),
    "stem + coverage .25-.6, full bm25 unless English": stem_clarity(0.25, 0.6, english_only=True),
    "product: stem + coverage .3-.7": product(),
    "product: stem only": product(None),
    "product + one dense leg per clause": clauses_leg(),
    "product + 0.5B rewrite when weak": with_model("rewrite"),
    "product + 0.5B rewrite when weak (dense leg only)": with_model("rewrite", legs_of="dense"),
    "product + 0.5B rewrite when weak (bm25 leg only)": with_model("rewrite", legs_of="bm25"),
}


# --------------------------------------------------------------------------- the local model's outputs (cached)

LLM_PROMPTS = {
    # a rewrite into the documents' vocabulary
    "rewrite": (
        "Rewrite the user's question as a short search query in the words a technical document would use for the "
        "same thing: replace casual phrases with the standard technical terms, keep names and numbers. One line, "
        "at most 15 words, in the question's language.",
        "my phone dies by lunchtime even though I barely use it, what's eating it?",
        "smartphone battery drain causes: background activity, screen brightness, idle power consumption",
        24,
    ),
    # HyDE: a short hypothetical passage that would answer it
    "hyde": (
        "Write a short passage, two sentences, in the style of a technical document or manual, that answers the "
        "question, in the question's language. Reply with the passage only.",
        "my phone dies by lunchtime even though I barely use it, what's eating it?",
        "Battery drain is mostly caused by background apps refreshing data, high screen brightness and location "
        "services. Restricting background activity and lowering brightness extends battery life considerably.",
        70,
    ),
    # doc2query (issue 27, item 3; issue 40): questions a person might type, written for a chunk at ingest
    "doc2query": (
        "Write three questions that a person who has not read this passage might type into a search box, and that "
        "the passage answers. Use plain everyday words, not the passage's technical terms where a simpler word "
        "exists. One question per line, no numbering.",
        "Battery drain is mostly caused by background apps refreshing data, high screen brightness and location "
        "services. Restricting background activity and lowering brightness extends battery life considerably.",
        "why does my phone die so fast?\nhow can I make my battery last longer?\nwhat uses up the most charge?",
        72,
    ),
}


def llm_outputs(kind: str, texts: list[str], model_file: str = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
                threads: int = 2) -> dict[str, dict]:
    """``{text: {"out": str, "ms": float}}`` for ``kind`` in :data:`LLM_PROMPTS`, generated once and cached."""
    path = CACHE / f"llm-{kind}-{Path(model_file).stem}.json"
    done = json.loads(path.read_text()) if path.exists() else {}
    todo = [t for t in dict.fromkeys(texts) if t not in done]
    if todo:
        from llama_cpp import Llama

        llm = Llama(model_path=str(ROOT / "models" / model_file), n_ctx=1024, n_threads=threads,
                    n_threads_batch=threads, verbose=False)
        system, ex_q, ex_a, max_tokens = LLM_PROMPTS[kind]
        for i, t in enumerate(todo):
            msgs = [{"role": "system", "content": system}, {"role": "user", "content": ex_q},
                    {"role": "assistant", "content": ex_a}, {"role": "user", "content": t}]
            t0 = time.perf_counter()
            r = llm.create_chat_completion(msgs, max_tokens=max_tokens, temperature=0.0, top_k=1)
            ms = (time.perf_counter() - t0) * 1000
            out = r["choices"][0]["message"]["content"].strip()
            done[t] = {"out": out, "ms": ms, "prompt_tokens": r["usage"]["prompt_tokens"],
                       "completion_tokens": r["usage"]["completion_tokens"]}
            print(f"[{kind} {i + 1}/{len(todo)} {ms:.0f} ms] {t[:60]!r} -> {out[:100]!r}", file=sys.stderr)
            path.write_text(json.dumps(done, indent=1, ensure_ascii=False))
    return done


# --------------------------------------------------------------------------- report

@dataclass
class Run:
    name: str
    ranks: dict[tuple[str, str, str], int | None]  # (corpus, qid, wording) -> rank
    ms: list[float]


def run_candidate(name, fn, corpora) -> Run:
    ranks, ms = {}, []
    for c in corpora:
        for q in c.queries:
            t0 = time.perf_counter()
            ids = fn(c, q)
            ms.append((time.perf_counter() - t0) * 1000)
            ranks[(c.name, q.qid, q.wording)] = c.rank(ids[:20], q.needle)
    return Run(name, ranks, ms)


def cell(ranks: list[int | None]) -> dict:
    n = len(ranks)
    out = {f"R@{k}": sum(1 for r in ranks if r and r <= k) / n for k in KS}
    out["MRR"] = sum(1 / r for r in ranks if r) / n
    return out


def select(run: Run, corpus: str | None, wording: str | None):
    keys = sorted(k for k in run.ranks if (corpus is None or k[0] == corpus) and (wording is None or k[2] == wording))
    return keys, [run.ranks[k] for k in keys]


def hits(ranks, k):
    return [r is not None and r <= k for r in ranks]


def report(runs: list[Run], base: Run, corpora_names: list[str]) -> str:
    lines = ["| candidate | corpus | wording | R@1 | R@4 | R@8 | R@20 | MRR | R@4 vs base | R@20 vs base | ms p50 |",
             "|---|---|---|---:|---:|---:|---:|---:|---|---|---:|"]
    groups = [(cn, w) for cn in corpora_names for w in ("doc", "user")] + [(None, "doc"), (None, "user"), (None, None)]
    for run in runs:
        for cn, w in groups:
            keys, r = select(run, cn, w)
            _, rb = select(base, cn, w)
            m = cell(r)
            t4, t20 = sign_test(hits(r, 4), hits(rb, 4)), sign_test(hits(r, 20), hits(rb, 20))
            lines.append(f"| {run.name} | {cn or 'both'} | {w or 'all'} | {m['R@1']:.3f} | {m['R@4']:.3f} | {m['R@8']:.3f} | "
                         f"{m['R@20']:.3f} | {m['MRR']:.3f} | +{t4.wins}/-{t4.losses} p={t4.p:.3f} | "
                         f"+{t20.wins}/-{t20.losses} p={t20.p:.3f} | {statistics.median(run.ms):.1f} |")
    return "\n".join(lines)


def summary(runs: list[Run], base: Run, corpora_names) -> str:
    """One line per candidate: user/doc R@4, R@20 pooled over both corpora, per-corpus user R@4, MRR all."""
    lines = ["| candidate | user R@4 | user R@20 | doc R@4 | doc R@20 | MRR all | user R@4 md/pdf | doc R@4 md/pdf | "
             "user R@4 vs base | doc R@4 vs base | user R@20 vs base | doc R@20 vs base | ms p50 |",
             "|---|---:|---:|---:|---:|---:|---|---|---|---|---|---|---:|"]
    for run in runs:
        f = {}
        for w in ("user", "doc"):
            _, r = select(run, None, w)
            _, rb = select(base, None, w)
            f[w] = (cell(r), sign_test(hits(r, 4), hits(rb, 4)), sign_test(hits(r, 20), hits(rb, 20)))
        per = {w: "/".join(f"{cell(select(run, cn, w)[1])['R@4']:.3f}" for cn in corpora_names) for w in ("user", "doc")}
        allm = cell(select(run, None, None)[1])["MRR"]

        def st(t):
            return f"+{t.wins}/-{t.losses} p={t.p:.3f}"
        lines.append(f"| {run.name} | {f['user'][0]['R@4']:.3f} | {f['user'][0]['R@20']:.3f} | {f['doc'][0]['R@4']:.3f} | "
                     f"{f['doc'][0]['R@20']:.3f} | {allm:.3f} | {per['user']} | {per['doc']} | {st(f['user'][1])} | "
                     f"{st(f['doc'][1])} | {st(f['user'][2])} | {st(f['doc'][2])} | {statistics.median(run.ms):.1f} |")
    return "\n".join(lines)


def load_all():
    from rag.index.embed import get_embedder

    emb = get_embedder()
    cache = EmbeddingCache()
    EMB.update(emb=emb, cache=cache)
    md = load_corpus("md", SHARED / "docs", SHARED / "dev_questions.jsonl", ("query_course", "query_ticket"), emb, cache)
    pdf = load_corpus("pdf", SHARED / "pdf-dev" / "docs", SHARED / "pdf-dev" / "questions.jsonl", ("query_doc", "query_user"), emb, cache)
    return emb, cache, [md, pdf]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--full", action="store_true", help="per corpus x wording table too")
    ap.add_argument("--misses", action="store_true")
    ap.add_argument("--signals", action="store_true")
    ap.add_argument("--gen-gated", nargs="*")
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--base", help="compare with this candidate instead of today's retrieval")
    ap.add_argument("--gen", nargs="*", help="only generate the model outputs of these kinds, then stop")
    ap.add_argument("--model", default="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
    a = ap.parse_args(argv)
    if a.timing:
        from rag.index.fusion import retrieve

        _, _, corpora = load_all()
        for c in corpora:
            new = BM25Index.build([ch.text for ch in c.chunks], np.arange(len(c.chunks)), groups=c.doc_of)
            t0 = time.perf_counter()
            BM25Index.build([ch.text for ch in c.chunks], np.arange(len(c.chunks)), groups=c.doc_of)
            t_new_build = time.perf_counter() - t0
            t0 = time.perf_counter()
            BM25Index.build([ch.text for ch in c.chunks], np.arange(len(c.chunks)), stem=False)
            t_old_build = time.perf_counter() - t0
            old_ms, new_ms = [], []
            for _ in range(5):
                for q in c.queries:
                    t0 = time.perf_counter()
                    retrieve(q.text, q.vec, c.dense, c.bm25, k=20, depth=DEPTH, coverage_band=None)
                    old_ms.append((time.perf_counter() - t0) * 1000)
                    t0 = time.perf_counter()
                    retrieve(q.text, q.vec, c.dense, new, k=20, depth=DEPTH)
                    new_ms.append((time.perf_counter() - t0) * 1000)
            print(f"{c.name}: {len(c.chunks)} chunks, languages {new.analyzer.languages}; retrieve (no embedding) p50 "
                  f"{np.percentile(old_ms, 50):.2f} -> {np.percentile(new_ms, 50):.2f} ms, p95 {np.percentile(old_ms, 95):.2f} -> "
                  f"{np.percentile(new_ms, 95):.2f} ms; BM25 build {t_old_build:.2f} -> {t_new_build:.2f} s")
        print(os.popen("uptime").read().strip())
        return 0
    if a.gen_gated:
        _, _, corpora = load_all()
        fn = CANDIDATES[GATED_BASE]
        texts = [q.text for c in corpora for q in c.queries if (fn(c, q) or True) and SIGNALS[(c.name, q.qid, q.wording)]["cov"] < 0.5]
        print(f"{len(texts)} gated queries", file=sys.stderr)
        for kind in a.gen_gated:
            llm_outputs(kind, texts, a.model)
        return 0
    if a.gen:
        texts = []
        for qf, f in ((SHARED / "dev_questions.jsonl", "query_ticket"), (SHARED / "pdf-dev" / "questions.jsonl", "query_user"),
                      (SHARED / "dev_questions.jsonl", "query_course"), (SHARED / "pdf-dev" / "questions.jsonl", "query_doc")):
            texts += [json.loads(x)[f] for x in qf.read_text().splitlines() if x.strip()]
        for kind in a.gen:
            llm_outputs(kind, texts, a.model)
        return 0
    t0 = time.time()
    emb, cache, corpora = load_all()
    print(f"loaded {[ (c.name, len(c.chunks), len(c.queries)) for c in corpora]} in {time.time() - t0:.1f} s", file=sys.stderr)
    names = [c.name for c in corpora]
    base = run_candidate("baseline", baseline, corpora)
    runs = [base]
    if a.base:
        base = run_candidate(a.base, CANDIDATES[a.base], corpora)
        runs.append(base)
    for n, fn in CANDIDATES.items():
        if n in ("baseline", a.base) or (a.only and n not in a.only):
            continue
        runs.append(run_candidate(n, fn, corpora))
    print(summary(runs, base, names))
    if a.full:
        print()
        print(report(runs, base, names))
    if a.signals:
        for k, v in sorted(SIGNALS.items(), key=lambda kv: kv[1]["nearest"]):
            print(k, {x: round(y, 3) if isinstance(y, float) else y for x, y in v.items()})
    if a.misses:
        for run in runs:
            miss = [k for k, r in run.ranks.items() if not r or r > 4]
            print(run.name, "misses@4:", " ".join(f"{k[0]}:{k[1]}:{k[2]}={run.ranks[k]}" for k in sorted(miss)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
