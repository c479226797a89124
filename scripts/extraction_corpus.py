"""Corpus test of stage 1-2 (issue 28, item 6): every file of some folders extracted and chunked, one child
process per file, with its outcome, coverage, chunk noise, peak memory and seconds.

Usage: python scripts/extraction_corpus.py OUT.json DIR_OR_FILE [DIR_OR_FILE ...]

Each file runs in its own ``python -c`` child (so one file's memory is its own: ``ru_maxrss`` of the
child, MiB) with a 600 s limit. Per file: ``outcome`` (``ready`` or ``refused``), ``reason`` (the
refusal), ``media_type``, ``pages``, ``chars`` of canonical text, ``chunks`` (strategy E, 512 characters,
256 word-pieces), ``short_chunks`` (content under 120 characters: the noise count of issue 28), ``roles``
(chunks per :class:`rag.types.TextRole` where the chunker gives one), ``min_coverage`` (the worst page's
audited coverage, PDFs and paged formats), ``ocr_pages``, ``warnings`` (count), ``seconds`` (extract +
chunk, wall, the child's imports not counted: ``import_s``) and ``peak_mib``. Prints a Markdown table; writes the raw figures to ``OUT.json``.

Run it with the code to measure first on ``PYTHONPATH`` (``PYTHONPATH=/tmp/base`` for a checkout of an
older commit), so before and after are the same script.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_CHILD = r"""
import json, resource, sys, time
from collections import Counter
t0 = time.perf_counter()
out = {}
try:
    from rag.ingest.extract import extract_bytes
    from rag.ingest.chunk import chunk_document
    from rag.errors import ExtractionError
    import_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    data = open(sys.argv[1], "rb").read()
    try:
        doc = extract_bytes(data, sys.argv[1].rsplit("/", 1)[-1])
    except ExtractionError as e:
        out = {"outcome": "refused", "reason": e.reason}
    else:
        chunks = chunk_document(doc, "E")
        roles = Counter(str(getattr(c, "role", "body")) for c in chunks)
        out = {"outcome": "ready", "media_type": doc.media_type, "pages": len(doc.pages), "chars": len(doc.canonical),
               "chunks": len(chunks), "short_chunks": sum(len(c.content) < 120 for c in chunks),
               "roles": dict(roles), "min_coverage": min(doc.page_coverage) if doc.page_coverage else None,
               "ocr_pages": len(doc.ocr_pages), "warnings": len(doc.warnings), "warning_text": list(doc.warnings)}
except Exception as e:
    out = {"outcome": "crash", "reason": f"{type(e).__name__}: {e}"[:300]}
out["seconds"] = round(time.perf_counter() - t0, 2)
out["import_s"] = round(locals().get("import_s", 0.0), 2)
out["peak_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
print(json.dumps(out))
"""


#: Seconds one file may take (extract + chunk, in its child) before it is counted as a timeout.
TIMEOUT_S = 600

#: Files of the shared folders that describe the inputs rather than being inputs.
_NOT_INPUTS = {"README.md", "SOURCES.md", "ROUND2.md"}


def files_of(args: list[str]) -> list[Path]:
    """Every regular file named or under a named folder (not recursing into dot folders), sorted by path."""
    out: list[Path] = []
    for a in args:
        p = Path(a)
        if p.is_dir():
            out += [f for f in p.rglob("*") if f.is_file() and not any(x.startswith(".") for x in f.parts)
                    and f.name not in _NOT_INPUTS and f.suffix.lower() not in (".py", ".json", ".jsonl")]
        elif p.is_file():
            out.append(p)
    return sorted(set(out))


def run_one(path: Path) -> dict:
    """Extract and chunk ``path`` in a child process; its figures (see the module doc)."""
    try:
        res = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True,
                             timeout=TIMEOUT_S, env=os.environ.copy())
        line = res.stdout.strip().splitlines()[-1] if res.stdout.strip() else ""
        got = json.loads(line) if line.startswith("{") else {"outcome": "crash", "reason": res.stderr[-300:]}
    except subprocess.TimeoutExpired:
        got = {"outcome": "timeout", "reason": f"over {TIMEOUT_S} s", "seconds": float(TIMEOUT_S)}
    got["file"] = path.name
    got["bytes"] = path.stat().st_size
    return got


def table(rows: list[dict]) -> str:
    """The figures as a Markdown table."""
    head = ("| file | outcome | pages | chunks (< 120 chars) | worst page coverage | OCR pages | s | peak MiB |\n"
            "|---|---|---:|---|---:|---:|---:|---:|")
    lines = [head]
    for r in rows:
        outcome = r["outcome"] if r["outcome"] == "ready" else f"{r['outcome']}: {r.get('reason', '')[:90]}"
        cov = f"{100 * r['min_coverage']:.1f} %" if r.get("min_coverage") is not None else ""
        chunks = f"{r['chunks']} ({r['short_chunks']})" if "chunks" in r else ""
        lines.append(f"| {r['file']} | {outcome} | {r.get('pages', '') or ''} | {chunks} | {cov} | "
                     f"{r.get('ocr_pages', '') or ''} | {r.get('seconds', '')} | {r.get('peak_mib', '')} |")
    return "\n".join(lines)


def main(out: str, *args: str) -> None:
    rows = []
    for f in files_of(list(args)):
        rows.append(run_one(f))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    Path(out).write_text(json.dumps(rows, indent=1, ensure_ascii=False))
    print(table(rows))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], *sys.argv[2:])
