"""``python -m rag bench extract``: speed and shape of stages 1-2 (extraction + strategy-E chunking).

Prints the date and machine, then for the 13-page two-column PDF and for the
markdown corpus: characters/s and ms per page (PDF) through extraction and
chunking, chunk count, chunks that needed a token split, chunks over the
encoder window, and the header's share of embedded word-pieces (the design's
figure is 21.2 %). Timings exclude the tokenizer load and are the best of
``--repeat`` runs. Targets (reported, never asserted): PDFs >= 50 pages/s;
the markdown corpus chunked in < 2 s.
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from rag.cli import common
from rag.index.embed import ENCODER_WINDOW, get_tokenizer
from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes

DPR_PDF = "01-dpr-paper-two-column-13p.pdf"


def _best(fn, repeat: int):
    """(best wall time in s, last result) of ``repeat`` calls of ``fn``."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def token_stats(chunks) -> dict:
    """Chunk count, token-split count, chunks over 256 word-pieces, header share of embedded word-pieces."""

    tok = get_tokenizer()
    texts = [c.text for c in chunks]
    contents = [c.content for c in chunks]
    n_text = [len(i) for i in tok(texts, add_special_tokens=True, truncation=False)["input_ids"]] if texts else []
    n_content = [len(i) for i in tok(contents, add_special_tokens=True, truncation=False)["input_ids"]] if texts else []
    total = sum(n_text)
    return {
        "chunks": len(chunks),
        "token_split": sum(c.token_split for c in chunks),
        "over_window": sum(n > ENCODER_WINDOW for n in n_text),
        "header_share": (total - sum(n_content)) / total if total else 0.0,
    }


def _report(label: str, chars: int, pages: int | None, t_extract: float, t_chunk: float, stats: dict) -> None:
    t = t_extract + t_chunk
    click.echo(f"\n{label}")
    click.echo(f"  characters           {chars:,}")
    if pages:
        click.echo(f"  pages                {pages}")
        click.echo(f"  ms per page          {1000 * t / pages:.1f}  (extract {1000 * t_extract / pages:.1f}, "
                   f"chunk {1000 * t_chunk / pages:.1f})  -> {pages / t:.1f} pages/s (target >= 50)")
    click.echo(f"  extract + chunk      {t:.3f} s  (extract {t_extract:.3f}, chunk E {t_chunk:.3f})"
               f"  -> {chars / t:,.0f} chars/s")
    click.echo(f"  chunks (E)           {stats['chunks']}")
    click.echo(f"  token-split chunks   {stats['token_split']}")
    click.echo(f"  over 256 word-pieces {stats['over_window']}")
    click.echo(f"  header share         {100 * stats['header_share']:.1f} % of embedded word-pieces (design: 21.2 %)")


@click.command()
@click.option("--corpus", "corpus", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder holding docs/*.md and pdfs/*.pdf (default: the shared folder's corpus/).")
@common.shared_option
@click.option("--repeat", type=click.IntRange(1, 20), default=3, show_default=True, help="Runs per timing (best kept).")
@click.option("--pymupdf4llm", "compare", is_flag=True, help="Also time pymupdf4llm.to_markdown on the PDF.")
def bench_extract_cmd(corpus: Path | None, shared: Path | None, repeat: int, compare: bool) -> None:
    """Benchmark extraction + strategy-E chunking on the two-column PDF and the markdown corpus."""
    corpus = corpus or common.corpus("course", shared).docs.parent
    get_tokenizer()  # model load excluded from every timing
    click.echo(common.header("bench extract"))

    pdf = corpus / "pdfs" / DPR_PDF
    if pdf.is_file():
        data = pdf.read_bytes()
        t_ex, doc = _best(lambda: extract_bytes(data, pdf.name), repeat)
        t_ch, chunks = _best(lambda: chunk_document(doc), repeat)
        _report(f"PDF {pdf.name}", len(doc.canonical), doc.page_count, t_ex, t_ch, token_stats(chunks))
        click.echo(f"  headings found       {len(doc.headings)}  title: {doc.title!r}")
        if compare:
            import pymupdf4llm

            t4, md = _best(lambda: pymupdf4llm.to_markdown(str(pdf)), 1)
            click.echo(f"  pymupdf4llm          {1000 * t4 / doc.page_count:.1f} ms per page ({len(md):,} chars)")
    else:
        click.echo(f"\n(no {pdf}; PDF figures skipped)")

    files = sorted((corpus / "docs").glob("*.md"))
    if not files:
        raise click.ClickException(f"no markdown files under {corpus / 'docs'}")
    blobs = [(p.name, p.read_bytes()) for p in files]
    t_ex, docs = _best(lambda: [extract_bytes(b, n) for n, b in blobs], repeat)
    t_ch, per_doc = _best(lambda: [chunk_document(d) for d in docs], repeat)
    chunks = [c for cs in per_doc for c in cs]
    _report(f"Markdown corpus {corpus / 'docs'} ({len(docs)} files)", sum(len(d.canonical) for d in docs), None,
            t_ex, t_ch, token_stats(chunks))
    click.echo(f"  chunked in           {t_ch:.3f} s (target < 2 s, model load excluded)")
