"""``python -m rag bench scale`` (issue 18): the encoder comparison, the scale curve to 1M chunks, the backends.

Five parts (``ingest``, ``encoders``, ``encoder-speed``, ``curve``, ``backends``), each printed with the date,
the machine and its load; what each measures: :mod:`rag.evaluation.bench.scale` and
:mod:`rag.evaluation.bench.curve`. Nothing here is enforced.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import click

from rag.evaluation.bench.corpora import CORPORA, load_chunked
from rag.evaluation.bench.curve import bench_curve
from rag.evaluation.bench.machine import machine_summary
from rag.evaluation.bench.scale import bench_backends, bench_encoder_speed, bench_encoders, bench_ingest


@click.command()
@click.option("--part", "parts", type=click.Choice(["ingest", "encoders", "encoder-speed", "curve", "backends"]),
              multiple=True,
              help="Which parts to run (repeatable; default all).")
@click.option("--sizes", default="1000,10000,100000,1000000", show_default=True,
              help="Scale curve: index sizes in chunks.")
@click.option("--hnsw-max", type=int, default=100_000, show_default=True,
              help="Scale curve: measure HNSW (for comparison) up to this size.")
@click.option("--encoder", "encoders", type=click.Choice(["minilm", "minilm-int8"]), multiple=True,
              help="encoder-speed: which encoders (repeatable; default both).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
              help="Also write every figure to this JSON file.")
def bench_scale_cmd(parts: tuple[str, ...], sizes: str, hnsw_max: int, encoders: tuple[str, ...],
                    json_path: str | None) -> None:
    """Encoder comparison, scale curve to 1M chunks, local vs Milvus backend (issue 18; nothing enforced)."""
    parts = parts or ("ingest", "encoders", "encoder-speed", "curve", "backends")
    out: dict = {"date": datetime.now().astimezone().isoformat(timespec="seconds"), "machine": machine_summary()}
    if "ingest" in parts:
        out["ingest"] = bench_ingest(click.echo)
    corpora = [load_chunked(name) for name in CORPORA] if set(parts) - {"ingest"} else []
    for c in corpora:
        click.echo(f"{c.name}: {len(c.chunks)} chunks, {c.pages} pages; extract {c.extract_s:.1f} s, "
                   f"chunk {c.chunk_s:.1f} s")
    if "encoders" in parts:
        out["encoders"] = bench_encoders(corpora, click.echo)
    if "encoder-speed" in parts:
        out["encoder_speed"] = bench_encoder_speed(corpora, click.echo,
                                                   encoders=encoders or ("minilm", "minilm-int8"))
    if "curve" in parts:
        out["curve"] = bench_curve(corpora, [int(x) for x in sizes.split(",") if x.strip()], click.echo,
                                   hnsw_max=hnsw_max)
    if "backends" in parts:
        out["backends"] = bench_backends(corpora, click.echo)
    if json_path:
        Path(json_path).write_text(json.dumps(out, indent=2, default=str))
