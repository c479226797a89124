"""Start ``rag serve`` (with the fakes, :mod:`serve_fake`) in a subprocess on a free loopback port, for the API's
tests and the benchmark; stopped with SIGTERM (then SIGKILL) when the block ends."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).resolve().parent / "serve_fake.py"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now (the kernel's pick)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def start(store_dir: Path, *args: str, host: str = "127.0.0.1", env: dict[str, str] | None = None,
          fake: bool = True, log: Path | None = None) -> tuple[subprocess.Popen, str]:
    """Launch the server; returns the process and its base URL (not waited for)."""
    port = free_port(host)
    cmd = ([sys.executable, str(FAKE), "rag"] if fake else [sys.executable, "-m", "rag"]) + [
        "serve", "--store", str(store_dir), "--host", host, "--port", str(port), "--log-level", "warning", *args]
    full = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "RAG_WORKER_IDLE_EXIT_S": "30",
            **(env or {})}
    out = open(log, "ab") if log else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, cwd=ROOT, env=full, stdout=out, stderr=subprocess.STDOUT if log else subprocess.PIPE)
    return proc, f"http://{host}:{port}"


def wait_up(proc: subprocess.Popen, url: str, *, ready: bool = True, timeout: float = 180.0) -> None:
    """Wait until ``/healthz`` answers (and says ``ready`` with ``ready``; or asks for a token, without ``ready``);
    raises if the process exits first."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"the server exited with {proc.returncode}: {err[-2000:]}")
        try:
            r = httpx.get(url + "/healthz", timeout=2)
            if r.status_code == 200 and (not ready or r.json()["status"] == "ready"):
                return
            if r.status_code == 401 and not ready:  # up, and asking for a token
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"the server at {url} did not come up in {timeout} s")


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 10 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@contextlib.contextmanager
def running(store_dir: Path, *args: str, ready: bool = True, **kw) -> Iterator[str]:
    """``rag serve`` on a free port for the block; yields its base URL."""
    proc, url = start(store_dir, *args, **kw)
    try:
        wait_up(proc, url, ready=ready)
        yield url
    finally:
        stop(proc)
