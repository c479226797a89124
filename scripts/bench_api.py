"""The API's concurrency benchmark (issue 38, item 5): p50/p95 of search and of the time to the first token
under 1, 4 and 16 concurrent clients, and 100 uploads sent at once that must all end ``ready`` or ``failed``
with a reason. Starts ``rag serve`` on a free 127.0.0.1 port over a fresh store, uploads the shared course
corpus through the API, drives it with httpx threads, prints a Markdown table (the one in ``docs/api.md``)
with the date, the machine and its load, and stops the server. Nothing is enforced.

    PYTHONPATH=$PWD .venv/bin/python scripts/bench_api.py            # the real models (0.5B GGUF, MiniLM)
    PYTHONPATH=$PWD .venv/bin/python scripts/bench_api.py --fake     # the test fakes: the plumbing alone

Time to first token is measured at the client: from sending ``POST /v1/ask`` with ``stream`` to the first
``token`` event (queueing for the model included); ``sources`` (the key passage's event) comes before it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "api"))

import apiserver  # noqa: E402

from rag.evaluation.bench.machine import load_average, machine_summary, percentile  # noqa: E402

CORPUS = Path(os.environ.get("RAG_SHARED", ROOT.parent / "shared")) / "corpus"  # as tests/conftest.py finds it


def _questions() -> list[str]:
    path = CORPUS / "dev_questions.jsonl"
    if path.is_file():
        return [json.loads(x)["query_course"] for x in path.read_text().splitlines() if x.strip()]
    return ["How many days of paid leave do staff get?"] * 16


def _upload_corpus(c: httpx.Client) -> None:
    docs = sorted((CORPUS / "docs").glob("*.md")) if (CORPUS / "docs").is_dir() else []
    files = [("files", (p.name, p.read_bytes())) for p in docs] or [
        ("files", ("policy.md", b"# Leave\n\nStaff get 25 days of paid leave per year.\n"))]
    r = c.post("/v1/documents", files=files, timeout=120)
    r.raise_for_status()
    _wait_jobs(c, [f["job_id"] for f in r.json()["files"] if f["job_id"]], timeout=1800)


def _wait_jobs(c: httpx.Client, ids: list[int], timeout: float) -> list[dict]:
    t0, left, done = time.monotonic(), set(ids), {}
    while left and time.monotonic() - t0 < timeout:
        for j in list(left):
            job = c.get(f"/v1/jobs/{j}").json()
            if job["state"] not in ("queued", "running"):
                done[j] = job
                left.discard(j)
        time.sleep(0.5)
    return [done.get(j, {"id": j, "state": "unfinished"}) for j in ids]


def _search(url: str, q: str) -> float:
    t0 = time.perf_counter()
    httpx.post(url + "/v1/search", json={"query": q, "k": 20}, timeout=120).raise_for_status()
    return (time.perf_counter() - t0) * 1000


def _first_token(url: str, q: str) -> tuple[float | None, float | None, str]:
    """ms to the ``sources`` event and to the first ``token`` (``None`` for a refusal: no token), and the verdict."""
    t0 = time.perf_counter()
    src = tok = None
    verdict = "?"
    with httpx.stream("POST", url + "/v1/ask", json={"question": q, "stream": True}, timeout=600) as r:
        event = None
        for line in r.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                if event == "sources" and src is None:
                    src = (time.perf_counter() - t0) * 1000
                elif event == "token" and tok is None:
                    tok = (time.perf_counter() - t0) * 1000
                elif event == "done":
                    verdict = json.loads(line[6:])["verdict"]
                elif event == "error":
                    verdict = "error " + line[6:][:80]
    return src, tok, verdict


def _run(level: int, jobs: list, fn) -> list:
    with ThreadPoolExecutor(level) as pool:
        return list(pool.map(lambda a: fn(*a), jobs))


def _p(values: list[float]) -> str:
    vals = [v for v in values if v is not None]
    if not vals:
        return "n/a"
    return f"{percentile(vals, 50) / 1000:.2f} / {percentile(vals, 95) / 1000:.2f}"


def _uploads(url: str, n: int) -> tuple[dict[str, int], float, list[str]]:
    """``n`` uploads at once (one request each; 5 % are a PDF's header over junk, which the worker fails);
    returns the end states, the seconds until every job ended, and the failures' reasons."""
    def one(i: int) -> dict:
        if i % 20 == 19:
            name, data = f"broken-{i}.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 8
        else:
            name, data = f"note-{i:03d}.md", (f"# Note {i}\n\nThe reading of meter {i} was {i * 37 % 1000} units "
                                              f"on day {i % 28 + 1}.\n").encode()
        r = httpx.post(url + "/v1/documents", files=[("files", (name, data))], timeout=120)
        return r.json()["files"][0] if r.status_code == 202 else {"status": f"http {r.status_code}", "job_id": None}

    t0 = time.perf_counter()
    with ThreadPoolExecutor(min(n, 32)) as pool:  # 32 connections at once; every request is sent without waiting
        accepted = list(pool.map(one, range(n)))
    with httpx.Client(base_url=url, timeout=60) as c:
        jobs = _wait_jobs(c, [a["job_id"] for a in accepted if a.get("job_id")], timeout=1800)
    states: dict[str, int] = {}
    for j in jobs:  # a finished job's document: ready (or a duplicate); else the job's own state
        s = (j.get("result") or {}).get("status") if j["state"] == "done" else j["state"]
        states[s or j["state"]] = states.get(s or j["state"], 0) + 1
    for a in accepted:
        if not a.get("job_id"):
            states[a["status"]] = states.get(a["status"], 0) + 1
    reasons = sorted({j["reason"] or "" for j in jobs if j["state"] == "failed"})
    return states, time.perf_counter() - t0, reasons


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fake", action="store_true", help="The test fakes for the models (plumbing only).")
    ap.add_argument("--asks", type=int, default=8, help="Questions per level (at least one per client).")
    ap.add_argument("--searches", type=int, default=48, help="Searches per level.")
    ap.add_argument("--uploads", type=int, default=100)
    ap.add_argument("--levels", default="1,4,16", help="Concurrent clients, comma-separated.")
    args = ap.parse_args()
    questions = _questions()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        proc, url = apiserver.start(Path(tmp) / "data", "--max-waiting", "64", fake=args.fake, log=log,
                                    env={"RAG_WORKER_IDLE_EXIT_S": "600"})
        try:
            apiserver.wait_up(proc, url, timeout=600)
            with httpx.Client(base_url=url) as c:
                t0 = time.perf_counter()
                _upload_corpus(c)
                corpus_s = time.perf_counter() - t0
            rows = []
            for level in [int(x) for x in args.levels.split(",")]:
                qs = [(url, questions[i % len(questions)]) for i in range(args.searches)]
                search_ms = _run(level, qs, _search)
                n = max(level, args.asks)
                asks = [(url, questions[(i * 7) % len(questions)]) for i in range(n)]
                got = _run(level, asks, _first_token)
                rows.append((level, search_ms, [g[0] for g in got], [g[1] for g in got], [g[2] for g in got]))
                print(f"level {level} done", file=sys.stderr, flush=True)
            states, upload_s, reasons = _uploads(url, args.uploads)
        finally:
            apiserver.stop(proc)
    print(f"`scripts/bench_api.py{' --fake' if args.fake else ''}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{machine_summary()}, {load_average()} at the end; corpus indexed through the API in {corpus_s:.0f} s\n")
    print("| clients | search p50 / p95 (s) | key passage (sources event) p50 / p95 (s) | first token p50 / p95 (s) "
          "| asks | verdicts |")
    print("|---|---|---|---|---|---|")
    for level, s, src, tok, verdicts in rows:
        counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
        print(f"| {level} | {_p(s)} | {_p(src)} | {_p(tok)} | {len(verdicts)} | "
              + ", ".join(f"{k} {v}" for k, v in counts.items()) + " |")
    print(f"\n{args.uploads} uploads sent at once: " + ", ".join(f"{v} {k}" for k, v in sorted(states.items()))
          + f", all ended {math.ceil(upload_s)} s after the first was sent"
          + (f"; failure reasons: {'; '.join(r[:120] for r in reasons)}" if reasons else ""))


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    main()
