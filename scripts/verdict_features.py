"""Issue 39: run every dev question once through the product's path and record everything, so that the features
and the combiner are fitted offline (``python -m rag.evaluation.confidence``).

Per query (both wordings, and the out-of-domain ones) of each corpus (course, pdf-dev, real): the answer
(``Answer.to_json(full=True)``), its features (:func:`rag.answer.check.confidence.answer_features`) with the two model
probes (:mod:`rag.answer.check.probes`), the wall time of each feature group in ms, and whether the shown answer, the key
passage and the model's answer hold the answer key. One JSON object per line, appended as each query finishes; a
second run skips the queries already in the file.

    PYTHONPATH=$PWD .venv/bin/python scripts/verdict_features.py --out data/i39/features.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from itertools import zip_longest
from pathlib import Path

from rag.answer.check.confidence import answer_features
from rag.answer.check.judged import AnswerFrom
from rag.answer.check.probes import answer_token_probs, probe_generator, yes_no
from rag.answer.generate import get_default_generator
from rag.answer.pipeline import ask
from rag.evaluation.answers import contains_answer, load_answer_keys
from rag.evaluation.bench.corpora import ANSWER_CORPORA, corpus, ensure_corpus_store
from rag.evaluation.data import expand_queries, load_ood, load_questions
from rag.settings import get_settings


def _done(out: Path) -> set[tuple[str, str]]:
    if not out.is_file():
        return set()
    return {(r["corpus"], r["key"]) for r in map(json.loads, out.read_text(encoding="utf-8").splitlines()) if r}


def queries(corpus_name: str, limit: int | None, log, seed: int | None = None) -> list[tuple]:
    """``(corpus, store, settings, key, wording, text, answer key)`` of every query of one corpus: its in-domain
    queries (both wordings) with an out-of-domain one after every fourth, so that a run cut short covers all.
    With ``seed``, the questions (both wordings of one together) and the out-of-domain queries come in a random
    order drawn with it (``--limit`` then takes a random subsample, and a run cut short is one too)."""
    c = corpus(corpus_name)
    sd = Path("data") / f"ba-{corpus_name}"
    s = get_settings(store=sd)
    store = ensure_corpus_store(sd, c.files(), s, log)
    keys = load_answer_keys(c.questions)
    qs = load_questions(c.questions)
    oods = load_ood(c.ood) if c.ood.is_file() else []
    if seed is not None:
        rng = random.Random(seed)
        qs, oods = rng.sample(qs, len(qs)), rng.sample(oods, len(oods))
    inq = [(q.key, str(q.wording), q.text, keys.get(q.qid)) for q in expand_queries(qs[:limit])]
    ood = [(o.id, "ood", o.query, None) for o in oods[:limit]]
    items = []
    for i, it in enumerate(inq):
        items.append(it)
        if i % 4 == 3 and ood:
            items.append(ood.pop(0))
    items += ood
    return [(corpus_name, store, s, *it) for it in items]


def run(items: list[tuple], out: Path, answer_check: bool, log, probes: bool = True) -> None:
    """Run ``items`` (:func:`queries`), appending one row per query to ``out``; those already there are skipped.
    Without ``probes`` the two model probes (a, b) do not run: their features take their neutral values."""
    done = _done(out)
    for corpus_name, store, s, key, wording, text, ak in items:
        if (corpus_name, key) in done:
            continue
        gen = get_default_generator(s)
        probe = probe_generator(s) if probes else None
        t0 = time.perf_counter()
        stream = ask(store, text, s)
        a = stream.run()
        answer_ms = (time.perf_counter() - t0) * 1000.0
        tp = yn = None
        ms = {}
        if probes and a.generated and not a.refused:
            prompt = gen.fit(a.query, stream.prompt_sources(gen.count_tokens), s.max_answer_tokens)
            same = [int(t) for t in gen.llm.input_ids[:len(prompt.tokens)]] == list(prompt.tokens)
            tp = answer_token_probs(gen, len(prompt.tokens)) if same else None
            ms["a"] = tp.ms if tp is not None else None
            kp = a.key_passage
            passage = (kp.body or kp.text) if kp is not None and kp.sentences else " ".join(x.quote for x in a.citations[:1])
            shown = a.judged.text if a.judged.answer_from == AnswerFrom.MODEL and answer_check else None
            yn = yes_no(probe, a.query, passage, shown)
            ms["b"] = yn.ms
        t1 = time.perf_counter()
        feats = answer_features(a, tp, yn)
        ms["cde"] = (time.perf_counter() - t1) * 1000.0
        row = dict(corpus=corpus_name, key=key, wording=wording, answer_keys=ak, answer_ms=round(answer_ms, 1),
                   at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), load=round(os.getloadavg()[0], 2),
                   verdict=str(a.judged.verdict), verdict_reason=a.judged.reason,
                   answer_from=str(a.judged.answer_from), shown_correct=bool(ak and contains_answer(a.judged.text, ak)),
                   kp_correct=bool(ak and a.key_passage and contains_answer(a.key_passage.text, ak)),
                   model_correct=bool(ak and a.generated and contains_answer(a.text, ak)),
                   features=feats, token_probs=tp.to_json() if tp else None, yes_no=yn.to_json() if yn else None,
                   feature_ms=ms, answer=a.to_json(full=True))
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        mark = "" if ak is None else (" ok" if row["shown_correct"] else " --")
        log(f"{corpus_name} {key}{mark} {row['verdict']} a={ms.get('a')} b={ms.get('b')} "
            f"answer={answer_ms:.0f}ms {(a.judged.text or 'REFUSED')[:90]!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--corpus", action="append", choices=ANSWER_CORPORA)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--no-probes", action="store_true", help="skip the two model probes (a, b): verdicts only, faster")
    ap.add_argument("--seed", type=int, default=None, help="ask the questions in a random order drawn with this seed")
    ap.add_argument("--answer-check", action="store_true", help="also ask the probe whether the shown answer is right")
    args = ap.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    log = lambda x: print(x, file=sys.stderr, flush=True)  # noqa: E731
    per = [queries(name, args.limit, log, args.seed) for name in args.corpus or ANSWER_CORPORA]
    mixed = [it for group in zip_longest(*per) for it in group if it is not None]  # round robin over the corpora
    run(mixed, args.out, args.answer_check, log, not args.no_probes)


if __name__ == "__main__":
    main()
