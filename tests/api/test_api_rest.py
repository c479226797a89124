"""The REST API over a real server (issue 38, item 1): ``rag serve`` in a subprocess on a free loopback port,
driven by ``httpx``; the models are the fakes (``serve_fake.py``), the store, queue, worker and answer are real.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import apiserver  # noqa: E402

POLICY = ("# Leave\n\nStaff get 25 days of paid leave per year. Part-time staff get leave pro rata.\n\n"
          "# Parking\n\nThe car park opens at 7 am and closes at 8 pm on weekdays.\n")
GUIDE = ("# Install\n\nRun the installer and restart the machine. The licence key is printed on the box.\n\n"
         "# Support\n\nWrite to the help desk; answers come within two working days.\n")


def wait_jobs(c: httpx.Client, job_ids: list[int], timeout: float = 180.0) -> list[dict]:
    """Poll ``/v1/jobs/{id}`` until every job is finished; returns them."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        jobs = [c.get(f"/v1/jobs/{j}").json() for j in job_ids]
        if all(j["state"] not in ("queued", "running") for j in jobs):
            return jobs
        time.sleep(0.2)
    raise TimeoutError(f"jobs {job_ids} not finished in {timeout} s: {jobs}")


def sse_events(r: httpx.Response) -> list[tuple[str, dict]]:
    """The ``(event, data)`` pairs of a Server-Sent Events body."""
    out, event = [], None
    for line in r.iter_lines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            out.append((event, json.loads(line[6:])))
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server over a store holding two Markdown files uploaded through the API."""
    data = tmp_path_factory.mktemp("api") / "data"
    with apiserver.running(data) as url:
        with httpx.Client(base_url=url, timeout=30) as c:
            r = c.post("/v1/documents", files=[("files", ("policy.md", POLICY.encode())),
                                               ("files", ("guide.md", GUIDE.encode()))])
            assert r.status_code == 202, r.text
            jobs = wait_jobs(c, [f["job_id"] for f in r.json()["files"]])
            assert [j["state"] for j in jobs] == ["done", "done"], jobs
        yield url, data


@pytest.fixture
def client(server):
    with httpx.Client(base_url=server[0], timeout=30) as c:
        yield c


def test_uploads_are_queued_at_once_and_end_ready(client):
    docs = client.get("/v1/documents").json()["documents"]
    assert sorted(d["name"] for d in docs) == ["guide.md", "policy.md"]
    assert {d["status"] for d in docs} == {"ready"}
    one = client.get(f"/v1/documents/{docs[0]['id'][:10]}").json()  # a unique prefix, as the CLI takes
    assert one["id"] == docs[0]["id"] and one["chunk_count"] >= 1 and one["job"]["state"] == "done"
    assert {"warnings", "coverage", "pages", "versions"} <= set(one)
    job = client.get(f"/v1/jobs/{one['job']['id']}").json()
    assert job["fraction"] == 1.0 and job["elapsed_s"] >= 0 and job["reason"] is None


def test_search_gives_scores_locators_and_verbatim_offsets(client):
    r = client.post("/v1/search", json={"query": "when does the car park open", "k": 3})
    assert r.status_code == 200, r.text
    hits = r.json()["hits"]
    assert hits and hits[0]["document_name"] == "policy.md" and "car park" in hits[0]["content"]
    assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1))
    assert all(0 <= h["cosine_distance"] <= 2 and h["rrf_score"] > 0 and h["locator"]["kind"] for h in hits)
    p = client.get(f"/v1/passages/{hits[0]['chunk_id']}").json()
    assert p["text"] == hits[0]["content"] and (p["start"], p["end"]) == (hits[0]["start"], hits[0]["end"])
    assert p["viewer_url"].startswith("http://localhost:8501/Source?doc=" + p["document_id"])
    scoped = client.post("/v1/search", json={"query": "car park", "documents": [
        d["id"] for d in client.get("/v1/documents").json()["documents"] if d["name"] == "guide.md"]}).json()
    assert all(h["document_name"] == "guide.md" for h in scoped["hits"])


def test_ask_gives_the_record_with_citations_as_data(client):
    r = client.post("/v1/ask", json={"question": "How many days of paid leave do staff get?"})
    assert r.status_code == 200, r.text
    a = r.json()
    assert a["format"] == 3 and a["refused"] is False and a["verdict"] == "supported"
    assert "25 days" in a["answer"] and "[1]" in a["answer"]
    c = a["citations"][0]
    assert {"index", "document_id", "document_name", "locator", "locator_label", "quote", "start", "end"} <= set(c)
    assert client.get(f"/v1/passages/{c['chunk_id']}").json()["text"] == c["quote"]  # canonical[start:end]
    assert "confidence" in a and 0 < a["gate"]["score"] <= 1 and a["key_passage"]["index"] == 1


def test_a_question_the_documents_do_not_hold_is_refused(client):
    a = client.post("/v1/ask", json={"question": "What is the capital of Mongolia?"}).json()
    assert a["refused"] is True and a["verdict"] == "refused" and a["answer"] is None
    assert a["refusal"].startswith("NO ANSWER")


def test_the_stream_sends_sources_key_passage_tokens_verdict_done(client):
    with client.stream("POST", "/v1/ask", json={"question": "How many days of paid leave do staff get?",
                                                "stream": True}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = sse_events(r)
    names = [e for e, _ in events]
    assert names[0] == "sources" and names[1] == "key_passage" and names[-2:] == ["verdict", "done"]
    assert set(names[2:-2]) == {"token"}
    streamed = "".join(d["text"] for e, d in events if e == "token")
    done = events[-1][1]
    assert done["model_answer"] == streamed and done["verdict"] == events[-2][1]["verdict"] == "supported"
    assert events[0][1]["citations"][0]["quote"] == done["citations"][0]["quote"]


def test_the_answer_is_the_same_record_as_ask_json(server, client, fake_embedder, fake_generator):
    """The API and ``rag ask --json`` give the same record for the same question and store (times aside)."""
    from click.testing import CliRunner

    from rag.cli.main import main

    q = "How many days of paid leave do staff get?"
    api = client.post("/v1/ask", json={"question": q}).json()
    r = CliRunner().invoke(main, ["ask", "--store", str(server[1]), "--json", q])
    assert r.exit_code == 0, r.output
    cli = json.loads(r.output)

    def timeless(x):
        if isinstance(x, dict):
            return {k: timeless(v) for k, v in x.items() if not (k == "ms" or k.endswith("_ms"))}
        return [timeless(v) for v in x] if isinstance(x, list) else x

    extra = {"format"}
    assert timeless({k: v for k, v in api.items() if k not in extra}) == timeless(cli)


def test_bad_inputs_get_clear_json_errors(client):
    def err(r, status):
        assert r.status_code == status, r.text
        return r.json()["error"]

    assert err(client.post("/v1/ask", content=b"{not json", headers={"content-type": "application/json"}),
               400)["code"] == "malformed_json"
    assert err(client.post("/v1/documents", files=[("files", ("empty.txt", b""))]), 400)["file"] == "empty.txt"
    e = err(client.post("/v1/documents", files=[("files", ("old.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600)))]),
            415)
    assert e["file"] == "old.doc" and "legacy Office" in e["message"]
    assert "not a PDF" in err(client.post("/v1/documents", files=[("files", ("a.pdf", b"hello"))]), 415)["message"]
    assert "mode" in err(client.post("/v1/search", json={"query": "x", "mode": "fuzzy"}), 422)["message"]
    assert err(client.post("/v1/ask", json={"question": ""}), 422)["code"] == "invalid"
    assert "white space" in err(client.post("/v1/ask", json={"question": "  \n "}), 422)["message"]
    assert err(client.post("/v1/search", json={"query": "   "}), 422)["code"] == "invalid"
    # one bad file among good ones is its own entry; the good ones are queued (a new user's walk, 2026-12-06)
    mixed = client.post("/v1/documents", files=[("files", ("good.md", b"# Kettle\n\nThe kettle is descaled monthly.\n")),
                                                ("files", ("empty.docx", b"")), ("files", ("junk.pdf", b"hello"))])
    assert mixed.status_code == 202, mixed.text
    got = {f["name"]: f for f in mixed.json()["files"]}
    assert got["good.md"]["status"] == "queued" and got["good.md"]["job_id"]
    assert got["empty.docx"]["status"] == "failed" and got["empty.docx"]["error"] == "empty_file"
    assert got["junk.pdf"]["error"] == "unsupported_type" and "not a PDF" in got["junk.pdf"]["reason"]
    assert err(client.get("/v1/documents/abcdef0123"), 404)["code"] == "not_found"
    assert err(client.get("/v1/jobs/99999"), 404)["code"] == "not_found"
    assert err(client.get("/v1/passages/99999"), 404)["code"] == "not_found"
    assert err(client.get("/v1/documents", params={"collection": "Nope"}), 404)["code"] == "not_found"
    assert err(client.post("/v1/ask", json={"question": "leave?", "documents": ["ffff0000"]}), 404)["code"] == "not_found"
    assert "guide.md" in {d["name"] for d in client.get("/v1/documents").json()["documents"]}  # nothing else harmed


def test_a_page_of_another_site_cannot_drive_the_loopback_server(client):
    assert client.get("/healthz", headers={"Host": "attacker.example:8000"}).status_code == 403
    r = client.post("/v1/documents", headers={"Origin": "https://attacker.example"},
                    files=[("files", ("x.md", b"# hi\n\nsome words here.\n"))])
    assert r.status_code == 403
    assert client.get("/healthz", headers={"Origin": "http://localhost:8501"}).status_code == 200


def test_delete_removes_the_document(client):
    r = client.post("/v1/documents", files=[("files", ("note.txt", b"The boiler is serviced every March.\n"))])
    job = wait_jobs(client, [r.json()["files"][0]["job_id"]])[0]
    assert job["state"] == "done"
    doc_id = r.json()["files"][0]["document_id"]
    assert client.delete(f"/v1/documents/{doc_id}").json()["deleted"] == doc_id
    assert client.get(f"/v1/documents/{doc_id}").status_code == 404
    assert client.delete(f"/v1/documents/{doc_id}").status_code == 404


def test_a_saved_turn_is_the_record_the_app_reopens(server, client, fake_embedder):
    """With ``chat: "new"`` the turn is saved in the store's chats as the app saves its turns; reopened the way the
    app reopens a chat (``Turn.from_json``), its answer is the record the API gave."""
    from rag.answer.history import Turn
    from rag.store.store import Store

    a = client.post("/v1/ask", json={"question": "How many days of paid leave do staff get?", "chat": "new"}).json()
    assert isinstance(a["chat_id"], int)
    with Store(server[1]) as st:
        rows = st.chats.turns(a["chat_id"])
    reopened = Turn.from_json(rows[0].record, rows[0].created_at).answer.to_json()
    api = {k: v for k, v in a.items() if k not in ("format", "chat_id")}
    assert api["verdict"] == "supported" and api["key_passage"]
    for key in ("answer", "verdict", "verdict_reason", "key_passage", "answer_sentences", "refused"):
        assert reopened.get(key) == api.get(key), key
    data = ("index", "document_id", "document_name", "locator", "locator_label", "fragment", "quote", "start", "end")
    assert [{k: c[k] for k in data} for c in reopened["citations"]] == [{k: c[k] for k in data} for c in api["citations"]]


def test_the_openapi_page_is_served_without_a_cdn(client):
    page = client.get("/docs").text
    assert "/static-offline-docs/swagger-ui-bundle.js" in page and "cdn." not in page  # offline: no CDN
    assert client.get("/static-offline-docs/swagger-ui-bundle.js").status_code == 200
    spec = client.get("/openapi.json").json()
    assert {"/v1/documents", "/v1/search", "/v1/ask", "/v1/passages/{chunk_id}", "/v1/chat/completions"} <= set(
        spec["paths"])
