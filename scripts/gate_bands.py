"""The gate's bands against where the passage is, per corpus and wording, and gate candidates held out (issue 40).

Collects (:func:`rag.evaluation.gate_bands.collect`: retrieval + the gate, no model) every question of each corpus
in both wordings and its out-of-domain queries, on the stores ``bench answers`` uses (``data/ba-<corpus>``,
ingested there when missing), saves the records as JSONL under ``--out``, then prints the tables of
``docs/evaluation.md`` (issue 40, the gate): the shipped gate's bands, candidate feature sets fitted on one corpus
and applied to the others, and rescue rules on top of the shipped gate.

    flock /work/wt/heavy.lock env PYTHONPATH=. .venv/bin/python scripts/gate_bands.py --corpus course \\
        --corpus pdf-dev --corpus real --out data/i40
    PYTHONPATH=. .venv/bin/python scripts/gate_bands.py --out data/i40 --tables-only   # from the saved records
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rag.evaluation import gate_bands as gb
from rag.evaluation.bench.corpora import ANSWER_CORPORA, corpus, ensure_corpus_store
from rag.evaluation.bench.machine import header
from rag.settings import get_settings

#: Feature sets tried beside the shipped relative distance + coverage (each fitted on one corpus).
CANDIDATES = {
    "+ relative unit distance": (*gb.SHIPPED, "relative_unit_distance"),
    "unit distance for distance": ("relative_unit_distance", "coverage"),
    "+ legs agree on the top hit": (*gb.SHIPPED, "top_in_both_legs"),
    "+ dense first's fused rank": (*gb.SHIPPED, "dense_first_fused_rank"),
    "+ rrf margin to the next document": (*gb.SHIPPED, "rrf_margin"),
    "+ distance margin to the next document": (*gb.SHIPPED, "distance_margin"),
    "+ BM25 weight": (*gb.SHIPPED, "bm25_weight"),
    "+ best chunk coverage": (*gb.SHIPPED, "best_chunk_coverage"),
    "+ leg overlap": (*gb.SHIPPED, "leg_overlap"),
    "+ relative gap (1st to 5th distance)": (*gb.SHIPPED, "relative_gap"),
    "+ gap 1st to 2nd distance": (*gb.SHIPPED, "distance_gap_12"),
    "+ missing specificity": (*gb.SHIPPED, "missing_specificity"),
    "+ unknown terms": (*gb.SHIPPED, "unknown_terms"),
    "+ BM25 norm": (*gb.SHIPPED, "bm25_norm"),
}
#: What the candidates are fitted on: each corpus alone, and the two the shipped gate was fitted on (-> real).
FITS = ("course", "pdf-dev", "real", ("course", "pdf-dev"))
#: Rescue rules: (feature, pass when under the cut).
RESCUES = (("relative_unit_distance", True), ("relative_distance", True), ("relative_gap", False),
           ("distance_margin", False), ("rrf_margin", False), ("top_in_both_legs", False))


def collect(names, out: Path, log=print) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        c = corpus(name)
        sd = Path("data") / f"ba-{name}"
        store = ensure_corpus_store(sd, c.files(), get_settings(store=sd), log)
        recs = gb.collect(store, name, c.questions, c.ood)
        store.close()
        gb.save(recs, out / f"gate-{name}.jsonl")
        log(f"{name}: {len(recs)} records -> {out / f'gate-{name}.jsonl'}")


def tables(out: Path, names) -> None:
    recs = [r for n in names if (out / f"gate-{n}.jsonl").is_file() for r in gb.load(out / f"gate-{n}.jsonl")]
    print("\n## The shipped gate's bands\n")
    print("\n".join(gb.band_table(recs)))
    print("\n## Feature sets fitted on one corpus, applied to the others\n")
    fits = [f for f in FITS if set((f,) if isinstance(f, str) else f) < set(names)]  # something left to test on
    print("\n".join(gb.loco_compare(recs, CANDIDATES, fits)))
    print("\n## Held-out AUC, answerable (passage in the top 4) against near out-of-domain\n")
    print("\n".join(gb.auc_table(recs, CANDIDATES, fits)))
    print("\n## Rules on top of the shipped gate: refused -> mentions\n")
    print("\n".join(gb.rescue_table(recs, RESCUES)))
    print("\n## Rules on top of the shipped gate: mentions -> answered\n")
    print("\n".join(gb.rescue_table(recs, RESCUES, band="mentions")))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", action="append", choices=ANSWER_CORPORA)
    p.add_argument("--out", type=Path, default=Path("data/i40"))
    p.add_argument("--tables-only", action="store_true")
    a = p.parse_args(argv)
    names = a.corpus or list(ANSWER_CORPORA)
    print(header("scripts/gate_bands.py " + " ".join(names)))
    if not a.tables_only:
        collect(names, a.out, lambda x: print(x, file=sys.stderr))
    tables(a.out, names)
    print(f"\nload average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
