"""Limits and concurrency on a real server (issue 38, items 4 and 5): 503 while the models load and when one is
missing, 413 over the upload limit, 409 for a document still indexing, the bounded answer queue (each waiting
stream told its place, one too many answered 429), and uploads that survive a restart of the server."""

from __future__ import annotations

import socket
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import apiserver  # noqa: E402
from test_api_rest import POLICY, sse_events, wait_jobs  # noqa: E402

QUESTION = "How many days of paid leave do staff get?"
SLOW = {"RAG_MAX_UPLOAD_MB": "1", "FAKE_LOAD_S": "4", "FAKE_TOKEN_S": "0.15"}


def _wait_state(c: httpx.Client, job_id: int, state: str, timeout: float = 60.0) -> dict:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        job = c.get(f"/v1/jobs/{job_id}").json()
        if job["state"] == state:
            return job
        time.sleep(0.05)
    raise TimeoutError(f"job {job_id} never {state}: {job}")


@pytest.fixture(scope="module")
def slow(tmp_path_factory):
    """A server whose generator takes 4 s to load and 0.15 s per word, with a 1 MiB upload limit and room for
    one waiting question."""
    data = tmp_path_factory.mktemp("limits") / "data"
    with apiserver.running(data, "--max-waiting", "1", ready=False, env=SLOW) as url:
        yield url


def test_503_while_the_models_load_then_answers(slow):
    with httpx.Client(base_url=slow, timeout=30) as c:
        r = c.post("/v1/ask", json={"question": QUESTION})
        assert r.status_code == 503 and r.json()["error"]["code"] == "models_loading"
        assert int(r.headers["retry-after"]) >= 1
        assert c.post("/v1/search", json={"query": "leave"}).status_code == 503
        up = c.post("/v1/documents", files=[("files", ("policy.md", POLICY.encode()))])
        assert up.status_code == 202  # uploads are accepted meanwhile
        assert wait_jobs(c, [up.json()["files"][0]["job_id"]])[0]["state"] == "done"
        t0 = time.monotonic()
        while c.get("/healthz").json()["status"] != "ready" and time.monotonic() - t0 < 30:
            time.sleep(0.1)
        assert c.post("/v1/ask", json={"question": QUESTION}).json()["verdict"] == "supported"


def test_413_over_the_upload_limit_names_the_file(slow):
    with httpx.Client(base_url=slow, timeout=30) as c:
        big = ("word " * 230_000).encode()  # 1.1 MiB of text
        r = c.post("/v1/documents", files=[("files", ("big.txt", big))])
        assert r.status_code == 413, r.text
        assert r.json()["error"]["file"] == "big.txt" and "max_upload_mb" in r.json()["error"]["message"]
    host, port = slow.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:  # declares 200 MiB, sends 1 byte
        s.sendall(b"POST /v1/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 209715200\r\n"
                  b"Content-Type: multipart/form-data; boundary=b\r\n\r\nx")
        head = b""
        while b'"}}' not in head and len(head) < 8192:
            got = s.recv(4096)
            if not got:
                break
            head += got
        head = head.decode("latin-1")
    assert head.startswith("HTTP/1.1 413") and '"too_large"' in head  # refused before the body is read


def test_the_answer_queue_tells_each_its_place_and_refuses_one_too_many(slow):
    with httpx.Client(base_url=slow, timeout=60) as c:
        t0 = time.monotonic()
        while c.get("/healthz").json()["status"] != "ready" and time.monotonic() - t0 < 30:
            time.sleep(0.1)
        got: dict[str, list] = {}

        def streamed(key: str) -> None:
            with httpx.Client(base_url=slow, timeout=60) as own:
                with own.stream("POST", "/v1/ask", json={"question": QUESTION, "stream": True}) as r:
                    got[key] = sse_events(r)

        first = threading.Thread(target=streamed, args=("first",))
        first.start()
        while not c.get("/healthz").json()["answering"]:
            time.sleep(0.02)
        second = threading.Thread(target=streamed, args=("second",))
        second.start()
        while c.get("/healthz").json()["waiting"] < 1:
            time.sleep(0.02)
        r = c.post("/v1/ask", json={"question": QUESTION})  # the model answers one, one waits: no room
        assert r.status_code == 429 and r.json()["error"]["code"] == "queue_full" and r.headers["retry-after"]
        first.join(60)
        second.join(60)
    assert [e for e, _ in got["first"]][0] == "sources"  # the model was free: no queue event
    names = [e for e, _ in got["second"]]
    assert names[0] == "queue" and got["second"][0][1]["position"] == 1 and names[-1] == "done"
    assert got["first"][-1][1]["answer"] == got["second"][-1][1]["answer"]


def test_409_for_a_document_still_indexing_and_uploads_survive_a_restart(tmp_path):
    data = tmp_path / "data"
    proc, url = apiserver.start(data, env={"FAKE_EMBED_S": "2"})
    try:
        apiserver.wait_up(proc, url)
        with httpx.Client(base_url=url, timeout=30) as c:
            r = c.post("/v1/documents", files=[("files", ("policy.md", POLICY.encode()))])
            job_id, doc_id = r.json()["files"][0]["job_id"], r.json()["files"][0]["document_id"]
            _wait_state(c, job_id, "running")
            d = c.delete(f"/v1/documents/{doc_id}")
            assert d.status_code == 409 and d.json()["error"]["code"] == "still_indexing", d.text
            a = c.post("/v1/ask", json={"question": "How many days of leave?", "documents": [doc_id]})
            assert a.status_code == 409 and a.json()["error"]["file"] == "policy.md", a.text
    finally:
        apiserver.stop(proc)  # mid-indexing: the job goes back to the queue
    with apiserver.running(data) as url2, httpx.Client(base_url=url2, timeout=30) as c:
        job = wait_jobs(c, [job_id])[0]
        assert job["state"] == "done", job
        assert c.get(f"/v1/documents/{doc_id}").json()["status"] == "ready"


def test_503_names_a_missing_model_and_searches_still_work(tmp_path):
    with apiserver.running(tmp_path / "data", env={"FAKE_MISSING_MODEL": "1"}) as url:
        with httpx.Client(base_url=url, timeout=30) as c:
            r = c.post("/v1/ask", json={"question": QUESTION})
            assert r.status_code == 503 and "model file missing" in r.json()["error"]["message"]
            assert c.post("/v1/search", json={"query": "leave"}).status_code == 200
