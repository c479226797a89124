"""Existing clients against the real server (issue 38, items 2 and 3): the ``openai`` client on
``/v1/chat/completions`` (stream and not) and ``/v1/models``; the ``mcp`` SDK's own client over stdio (``rag mcp``)
and over streamable HTTP (``/mcp`` in ``rag serve``). Models are the fakes; store, queue and answers are real.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import apiserver  # noqa: E402
from test_api_rest import GUIDE, POLICY, wait_jobs  # noqa: E402

QUESTION = "How many days of paid leave do staff get?"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("clients") / "data"
    with apiserver.running(data) as url:
        with httpx.Client(base_url=url, timeout=30) as c:
            r = c.post("/v1/documents", files=[("files", ("policy.md", POLICY.encode())),
                                               ("files", ("guide.md", GUIDE.encode()))])
            assert [j["state"] for j in wait_jobs(c, [f["job_id"] for f in r.json()["files"]])] == ["done", "done"]
        yield url, data


def test_the_openai_client_gets_the_checked_answer_and_the_record(server):
    from openai import OpenAI

    client = OpenAI(base_url=server[0] + "/v1", api_key="not-needed-on-loopback")
    assert [m.id for m in client.models.list().data] == ["rag"]
    r = client.chat.completions.create(model="rag", messages=[{"role": "user", "content": QUESTION}])
    text = r.choices[0].message.content
    assert "25 days" in text and "[1]" in text and "\nSources:\n[1] policy.md" in text
    rec = r.model_extra["rag"]
    assert rec["verdict"] == "supported" and rec["citations"][0]["quote"].startswith("Staff get 25 days")
    refused = client.chat.completions.create(model="rag", messages=[
        {"role": "user", "content": "What is the capital of Mongolia?"}])
    assert refused.choices[0].message.content.startswith("NO ANSWER") and refused.model_extra["rag"]["refused"]


def test_the_openai_client_streams_and_the_last_chunk_carries_the_record(server):
    from openai import OpenAI

    client = OpenAI(base_url=server[0] + "/v1", api_key="x")
    chunks = list(client.chat.completions.create(model="rag", stream=True, messages=[
        {"role": "user", "content": "What is the car park?"}, {"role": "assistant", "content": "..."},
        {"role": "user", "content": QUESTION}]))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert "25 days" in text and chunks[-1].choices[0].finish_reason == "stop"
    rec = chunks[-1].model_extra["rag"]
    assert rec["answer"] in text and rec["followup"]["question"] == QUESTION
    with pytest.raises(Exception, match="model_not_found|no model"):
        client.chat.completions.create(model="gpt-4", messages=[{"role": "user", "content": QUESTION}])


async def _use_mcp(target) -> dict:
    from mcp import Client

    async with Client(target, read_timeout_seconds=60) as c:
        tools = sorted(t.name for t in (await c.list_tools()).tools)
        found = await c.call_tool("search_documents", {"query": "car park opening", "k": 2})
        hit = found.structured_content["hits"][0]
        passage = await c.call_tool("get_passage", {"chunk_id": hit["chunk_id"]})
        answer = await c.call_tool("ask", {"question": QUESTION})
        docs = await c.call_tool("list_documents", {})
        bad = await c.call_tool("get_passage", {"chunk_id": 99999})
        resources = (await c.list_resources()).resources
        text = (await c.read_resource(str(resources[0].uri))).contents[0].text
        return {"tools": tools, "hit": hit, "passage": passage.structured_content, "answer": answer.structured_content,
                "docs": docs.structured_content, "bad": (bad.is_error, bad.content[0].text),
                "resources": sorted(r.name for r in resources), "text": text}


def _check_mcp(got: dict) -> None:
    assert got["tools"] == ["ask", "get_passage", "list_documents", "search_documents"]
    assert "car park" in got["hit"]["content"] and got["passage"]["text"] == got["hit"]["content"]
    a = got["answer"]
    assert a["verdict"] == "supported" and "25 days" in a["answer"] and a["citations"][0]["n"] == 1
    assert a["citations"][0]["quote"].startswith("Staff get 25 days") and a["citations"][0]["locator"]["kind"]
    assert sorted(d["name"] for d in got["docs"]["documents"]) == ["guide.md", "policy.md"]
    assert got["bad"][0] is True and "no chunk with id 99999" in got["bad"][1]
    assert got["resources"] == ["guide.md", "policy.md"] and got["text"].lstrip().startswith("#")


def test_the_mcp_client_over_streamable_http(server):
    _check_mcp(asyncio.run(_use_mcp(server[0] + "/mcp")))


def test_the_mcp_client_over_stdio(server):
    from mcp import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(apiserver.FAKE), "rag", "mcp", "--store",
                                                                  str(server[1])],
                                   env={**os.environ, "PYTHONPATH": str(apiserver.ROOT)}, cwd=str(apiserver.ROOT))
    got = asyncio.run(_use_mcp(params))
    _check_mcp(got)
    json.dumps(got)  # everything an assistant gets is plain JSON
