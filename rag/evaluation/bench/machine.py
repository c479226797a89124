"""What every benchmark prints its figures under (issue 12): the date, the machine and its load; percentiles;
the process's memory.

Timings printed under :func:`header` are only comparable on a quiet machine: the header gives the 1-, 5- and
15-minute load averages so a reader can tell.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import numpy as np


def machine_summary() -> str:
    """One line naming this machine for benchmark output: host, OS, CPU model, usable cores, Python."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"{platform.node()} {platform.system()} {platform.machine()}, {cpu}, {n} cores usable, "
            f"Python {platform.python_version()}")


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, e.g. ``"load 1.52 0.98 0.60"`` (``"load n/a"`` where unknown)."""
    try:
        return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return "load n/a"


def header(title: str) -> str:
    """The first line of every benchmark: ``"<title>  <local date and time>  <machine>; <load>"``."""
    now = datetime.now().astimezone().isoformat(sep=" ", timespec="seconds")
    return f"{title}  {now}  {machine_summary()}; {load_average()}"


def _proc_status_mib(key: str) -> float:
    """A ``/proc/self/status`` size field (kB) in MiB; NaN where there is no such file (not Linux)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def rss_mib() -> float:
    """Resident set size of this process now, MiB (VmRSS); NaN where unknown."""
    return _proc_status_mib("VmRSS")


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, MiB (VmHWM); NaN where unknown."""
    return _proc_status_mib("VmHWM")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (``q`` in 0-100, linear interpolation as ``numpy.percentile``); NaN when empty."""
    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else float("nan")


def p50_p95(values: Sequence[float], width: int = 8, decimals: int = 3) -> str:
    """``"p50 <x>  p95 <y>"`` of ``values`` (e.g. milliseconds), each right-aligned in ``width`` characters."""
    return f"p50 {percentile(values, 50):{width}.{decimals}f}  p95 {percentile(values, 95):{width}.{decimals}f}"
