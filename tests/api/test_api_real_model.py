"""The API with the real models (issue 38; marked slow): ``rag serve`` loads MiniLM and the 0.5B GGUF in its own
process, indexes an upload and answers from it with a checked citation, streamed and not."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import apiserver  # noqa: E402
from test_api_rest import POLICY, sse_events, wait_jobs  # noqa: E402


@pytest.mark.slow
def test_the_real_models_answer_through_the_api(tmp_path, gguf_path):
    with apiserver.running(tmp_path / "data", fake=False) as url, httpx.Client(base_url=url, timeout=300) as c:
        assert c.get("/healthz").json()["model"].endswith(".gguf")
        r = c.post("/v1/documents", files=[("files", ("policy.md", POLICY.encode()))])
        assert wait_jobs(c, [r.json()["files"][0]["job_id"]], timeout=300)[0]["state"] == "done"
        a = c.post("/v1/ask", json={"question": "How many days of paid leave do staff get per year?"}).json()
        assert a["refused"] is False and "25" in a["answer"] and a["verdict"] in ("supported", "partly_supported")
        assert a["citations"][0]["quote"].startswith("Staff get 25 days")
        with c.stream("POST", "/v1/ask", json={"question": "When does the car park open?", "stream": True}) as s:
            events = sse_events(s)
        assert "token" in [e for e, _ in events] and events[-1][0] == "done"
        assert "7 am" in (events[-1][1]["answer"] or "")
        assert c.post("/v1/ask", json={"question": "Who won the 1966 football world cup?"}).json()["refused"]
