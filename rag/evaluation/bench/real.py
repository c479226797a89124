"""The real-document benchmark (``python -m rag bench real``, issue 37): every file of the shared
``corpus/real/`` folder read by the product's extractor, and what a person sees that it kept.

The folder (``<shared>/corpus/real``: see its ``README.md``) holds real public documents in every format and a
``MANIFEST.jsonl``, one row per file: ``file`` (path relative to the folder), ``format``, and on many rows
``needles``, each ``{"text": ..., "where": ...}``: a short verbatim phrase a reader sees when the document is
open, labelled by where it sits (``body``, ``table``, ``title``, ``text_box``, ``sheet_header``, ``notes``,
``footnote``, ``header_footer``, ``chart``, ``caption`` ...). The needles were taken from the raw files by the
standard library alone, independently of the product's code.

Per file, :func:`bench_file` extracts the bytes as an upload is (:func:`rag.ingest.extract.extract_bytes`,
the settings' limits, OCR on), timing the call (wall seconds), and checks every needle in the canonical text
with :func:`rag.evaluation.metrics.holds_needle` (runs of whitespace collapsed; a needle made of table cells
matches the same cells of a Markdown row). A refused file finds none of its needles. The coverage figure is the
document's own audit where its reader has one (``Document.coverage`` once the independent audits of issue 37
land; a PDF's per-page audit, :mod:`rag.ingest.pdf.audit`, weighted equally per page), else none.

:func:`run_real` prints the date, machine and load, then per format: files, refused, coverage (median,
minimum), needles found, documents with warnings, seconds (total, slowest); needles found by placement and by
format; and every miss (file, placement, needle). Figures are reported, never asserted. Targets (issue 37):
needles >= 98 % overall and >= 90 % in every placement with 5 or more needles; median coverage >= 0.99 in
every format.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rag.errors import ExtractionError
from rag.evaluation.bench.machine import header
from rag.evaluation.data import read_jsonl
from rag.evaluation.metrics import holds_needle
from rag.ingest.extract import extract_bytes
from rag.types import Document

Echo = Callable[[str], None]


@dataclass(frozen=True)
class Needle:
    """One needle of a manifest row: its verbatim ``text``, ``where`` it sits, and whether it was ``found``."""

    text: str
    where: str
    found: bool


@dataclass
class FileResult:
    """One file's figures: ``file`` (relative path), ``format``, ``seconds`` (wall, extraction only),
    ``refused`` (the reason, ``""`` when read), ``warnings`` (the document's), ``coverage`` (0..1 or ``None``
    where the reader has no audit), ``chars`` (canonical text length), ``needles``."""

    file: str
    format: str
    seconds: float = 0.0
    refused: str = ""
    warnings: tuple[str, ...] = ()
    coverage: float | None = None
    chars: int = 0
    needles: list[Needle] = field(default_factory=list)


def real_dir(shared: Path) -> Path:
    """The real-document folder of the shared folder ``shared``: ``<shared>/corpus/real``."""
    return Path(shared) / "corpus" / "real"


def manifest(folder: Path) -> list[dict]:
    """The rows of ``folder/MANIFEST.jsonl`` in file order. Raises :class:`rag.evaluation.data.EvalInputError`
    naming the file (and the line) when the manifest is missing, unreadable or holds a row that is not JSON."""
    return [row for _, row in read_jsonl(Path(folder) / "MANIFEST.jsonl")]


def coverage_of(doc: Document) -> float | None:
    """The document's audited coverage (0..1): ``doc.coverage`` where the reader has an independent audit
    (issue 37), else the mean of a PDF's per-page audit, else ``None``."""
    if doc.coverage is not None:
        return float(doc.coverage)
    if doc.page_coverage:
        return sum(doc.page_coverage) / len(doc.page_coverage)
    return None


def bench_file(folder: Path, row: dict) -> FileResult:
    """Extract ``folder / row["file"]`` as an upload (its base name as the user's file name) and check its
    needles. Never raises for a refused file: the reason is kept in ``refused``."""
    path = Path(folder) / row["file"]
    out = FileResult(file=row["file"], format=row.get("format") or path.suffix.lstrip(".").lower())
    data = path.read_bytes()
    t = time.perf_counter()
    try:
        doc = extract_bytes(data, path.name)
    except ExtractionError as e:
        out.seconds = time.perf_counter() - t
        out.refused = e.reason
        doc = None
    else:
        out.seconds = time.perf_counter() - t
        out.warnings, out.coverage, out.chars = tuple(doc.warnings), coverage_of(doc), len(doc.canonical)
    text = doc.canonical if doc is not None else ""
    out.needles = [Needle(n["text"], n.get("where", "body"), bool(text) and holds_needle(text, n["text"]))
                   for n in row.get("needles") or ()]
    return out


def tally(results: Iterable[FileResult], key: Callable[[FileResult, Needle], str]) -> dict[str, tuple[int, int]]:
    """``{group: (found, total)}`` of every needle, grouped by ``key(file, needle)``, sorted by total, largest first."""
    counts: dict[str, list[int]] = {}
    for r in results:
        for n in r.needles:
            c = counts.setdefault(key(r, n), [0, 0])
            c[0] += n.found
            c[1] += 1
    return {k: (f, t) for k, (f, t) in sorted(counts.items(), key=lambda kv: (-kv[1][1], kv[0]))}


def format_rows(results: list[FileResult]) -> list[dict]:
    """Per format: ``files``, ``refused``, ``coverage_median`` / ``coverage_min`` (over the files with a
    coverage figure; ``None`` when none has one), ``audited`` (how many have one), ``found`` / ``needles``,
    ``warned`` (files with a warning), ``seconds`` (total) and ``slowest`` (one file's)."""
    rows = []
    for fmt in sorted({r.format for r in results}):
        rs = [r for r in results if r.format == fmt]
        covs = [r.coverage for r in rs if r.coverage is not None]
        rows.append({
            "format": fmt, "files": len(rs), "refused": sum(bool(r.refused) for r in rs),
            "coverage_median": statistics.median(covs) if covs else None, "coverage_min": min(covs, default=None),
            "audited": len(covs), "found": sum(n.found for r in rs for n in r.needles),
            "needles": sum(len(r.needles) for r in rs), "warned": sum(bool(r.warnings) for r in rs),
            "seconds": sum(r.seconds for r in rs), "slowest": max((r.seconds for r in rs), default=0.0),
        })
    return rows


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


def report(results: list[FileResult], echo: Echo) -> dict:
    """Print the tables of :func:`run_real` for ``results``; returns the figures (``formats``, ``placements``,
    ``by_format``, ``misses``, ``files``) for ``--json``."""
    rows = format_rows(results)
    echo(f"\n{'format':7s} {'files':>5} {'refused':>7} {'coverage median':>15} {'min':>8} {'needles':>9} "
         f"{'warned':>6} {'seconds':>8} {'slowest':>8}")
    for r in rows:
        echo(f"{r['format']:7s} {r['files']:5d} {r['refused']:7d} {_pct(r['coverage_median']):>15} "
             f"{_pct(r['coverage_min']):>8} {r['found']:4d}/{r['needles']:<4d} {r['warned']:6d} "
             f"{r['seconds']:8.2f} {r['slowest']:8.2f}")
    found = sum(r["found"] for r in rows)
    total = sum(r["needles"] for r in rows)
    echo(f"{'all':7s} {len(results):5d} {sum(r['refused'] for r in rows):7d} {'':>15} {'':>8} "
         f"{found:4d}/{total:<4d} {sum(r['warned'] for r in rows):6d} {sum(r['seconds'] for r in rows):8.2f}")
    places = tally(results, lambda r, n: n.where)
    by_format = tally(results, lambda r, n: r.format)
    echo("\nneedles by placement: " + ", ".join(f"{k} {f}/{t}" for k, (f, t) in places.items()))
    echo("needles by format: " + ", ".join(f"{k} {f}/{t}" for k, (f, t) in by_format.items()))
    misses = [{"file": r.file, "where": n.where, "needle": n.text, "refused": r.refused}
              for r in results for n in r.needles if not n.found]
    if misses:
        echo(f"\nmissed ({len(misses)}):")
        for m in misses:
            why = f"  [file refused: {m['refused'][:80]}]" if m["refused"] else ""
            echo(f"  {m['where']:13s} {m['file']}: {m['needle']!r}{why}")
    for r in results:
        if r.refused:
            echo(f"  refused: {r.file}: {r.refused[:160]}")
    return {"formats": rows, "placements": places, "by_format": by_format, "misses": misses,
            "files": [asdict(r) for r in results]}


def run_real(folder: Path, echo: Echo = print, formats: Iterable[str] = ()) -> dict:
    """The whole benchmark on ``folder`` (a ``corpus/real`` folder holding ``MANIFEST.jsonl``), printed through
    ``echo``; ``formats`` (``"odt"``, ``"pdf"`` ...) keeps only those rows when given. Returns the figures of
    :func:`report`. Raises :class:`rag.evaluation.data.EvalInputError` when the folder has no manifest."""
    keep = {f.lower() for f in formats}
    rows = [r for r in manifest(folder) if not keep or (r.get("format") or "").lower() in keep]
    echo(header("bench real"))
    echo(f"{folder}: {len(rows)} files, {sum(len(r.get('needles') or ()) for r in rows)} needles")
    results = []
    for row in rows:
        r = bench_file(folder, row)
        results.append(r)
        echo(f"  {r.file}: {r.seconds:.2f} s, {sum(n.found for n in r.needles)}/{len(r.needles)} needles"
             + (f", refused: {r.refused[:80]}" if r.refused else f", {len(r.warnings)} warning(s)"))
    return report(results, echo)
