"""Slide-deck questions answered from body text? (issue 28, item 1; figures in docs/answers.md)

Usage: python scripts/deck_answers.py OUT.json SHARED_DIR

Two decks: the dev deck ``SHARED_DIR/corpus/pdf-dev/docs/04-slides-git-github.pdf`` with its questions d14-d16
(both wordings), and the Beamer-style deck made by ``tests/decks.py`` (41 pages, headline, footline, overlays,
a title slide naming the author) with its questions b1-b5. Each deck is ingested into a fresh store with the
real embedder; each question is searched and gated (the default gate) and its key passage chosen
(:func:`rag.answer.key_passage.key_passage`), with no model. Per question: the verdict, whether the key
passage holds every answer-key group, whether it comes from body text (not the title slide, not a running
footer or headline: for code without roles, a key passage on page 1 or holding footline text counts as not
body), and the first source's role. Runs with any version of the code on ``PYTHONPATH`` (before and after).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from decks import AUTHOR, DATE, QUESTIONS, beamer_deck  # noqa: E402

from rag.answer.cite import citations  # noqa: E402
from rag.answer.key_passage import key_passage  # noqa: E402
from rag.answer.pipeline import search_and_gate  # noqa: E402
from rag.settings import get_settings  # noqa: E402

try:
    from rag.store.store import Store  # noqa: E402
except ImportError:  # the code before arch2's move
    from rag.index.store import Store  # noqa: E402

FOOTLINE = (AUTHOR, DATE, "/ 41", "/ 40")


def _holds(text: str, keys: list[list[str]]) -> bool:
    low = text.lower()
    return all(any(k.lower() in low for k in group) for group in keys)


def _one(store, q: dict, query: str) -> dict:
    gate = search_and_gate(store, query)
    verdict = str(getattr(gate, "verdict", "refused" if gate.refused else "answered"))
    if gate.refused:
        return {"id": q["id"], "query": query, "verdict": verdict, "key_holds": False, "key_body": False}
    cites = citations(gate, store)
    kp = key_passage(query, cites, store.term_stats())
    text = " ".join(s.text for s in kp.sentences)
    src = next((c for c in cites if kp.sentences and c.index == kp.sentences[0].index), None)
    role = str(getattr(src, "role", "")) if src is not None else ""
    furniture = any(f in text for f in FOOTLINE) or (src is not None and src.page == 1)
    body = (role in ("", "body")) and not furniture
    return {"id": q["id"], "query": query, "verdict": verdict, "key_passage": text[:300],
            "key_holds": _holds(text, q["answer_keys"]), "key_body": body,
            "key_holds_from_body": _holds(text, q["answer_keys"]) and body, "key_role": role,
            "first_source_role": str(getattr(cites[0], "role", "")) if cites else "",
            "first_source_page": cites[0].page if cites else None}


def main(out: str, shared: str) -> None:
    shared_dir = Path(shared)
    dev = [json.loads(line) for line in (shared_dir / "corpus/pdf-dev/questions.jsonl").read_text().splitlines()
           if line.strip()]
    dev = [q for q in dev if q["doc"] == "04-slides-git-github.pdf"]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for deck, data, name, questions in (
                ("dev deck (04, 40 pages)", (shared_dir / "corpus/pdf-dev/docs/04-slides-git-github.pdf").read_bytes(),
                 "04-slides-git-github.pdf", [(q, w) for q in dev for w in ("query_doc", "query_user")]),
                ("Beamer-style deck (tests/decks.py, 41 pages)", beamer_deck(), "bsd-deck.pdf",
                 [(q, "query") for q in QUESTIONS])):
            root = Path(tmp) / name
            store = Store(root, settings=get_settings(store=root))
            store.ingest_bytes(data, name)
            chunks = store.chunk_count
            for q, wording in questions:
                row = _one(store, q, q[wording])
                row.update(deck=deck, wording=wording, chunks=chunks)
                results.append(row)
                print(json.dumps(row)[:400], file=sys.stderr, flush=True)
            store.close()
    Path(out).write_text(json.dumps(results, indent=1, ensure_ascii=False))
    for deck in dict.fromkeys(r["deck"] for r in results):
        rows = [r for r in results if r["deck"] == deck]
        print(f"{deck}: {len(rows)} questions, {rows[0]['chunks']} chunks; key passage holds the answer "
              f"{sum(r['key_holds'] for r in rows)}, from body text {sum(r.get('key_holds_from_body', False) for r in rows)}, "
              f"refused {sum(r['verdict'] == 'refused' for r in rows)}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
