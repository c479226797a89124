"""Access like the app's (issue 38, item 4): no token on 127.0.0.1; any other address refuses to start without
one (the test never binds beyond loopback: the refusal happens before listening); with ``--require-token`` every
request needs a valid bearer token, and a revoked one stops working at the next request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))

import apiserver  # noqa: E402

from rag.cli.main import main  # noqa: E402


def _cli(*args: str):
    return CliRunner().invoke(main, list(args))


def test_tokens_are_created_listed_stored_hashed_and_revoked(tmp_path):
    r = _cli("access", "create-token", "--store", str(tmp_path), "laptop")
    assert r.exit_code == 0, r.output
    token = r.stdout.strip().splitlines()[0]
    assert token.startswith("rag_") and len(token) > 40
    stored = (tmp_path / "api_tokens.json").read_text()
    assert token not in stored and "laptop" in stored
    assert oct((tmp_path / "api_tokens.json").stat().st_mode & 0o777) == "0o600"
    listed = json.loads(_cli("access", "tokens", "--store", str(tmp_path), "--json").stdout)
    assert [t["name"] for t in listed] == ["laptop"] and token not in json.dumps(listed)
    assert _cli("access", "create-token", "--store", str(tmp_path), "laptop").exit_code == 2  # names are unique
    assert _cli("access", "revoke-token", "--store", str(tmp_path), "laptop").exit_code == 0
    assert json.loads(_cli("access", "tokens", "--store", str(tmp_path), "--json").stdout) == []
    assert _cli("access", "revoke-token", "--store", str(tmp_path), "laptop").exit_code == 2


def _refused(store: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(apiserver.FAKE), "rag", "serve", "--store", str(store), "--port",
           str(apiserver.free_port()), *args]
    return subprocess.run(cmd, cwd=apiserver.ROOT, env={**os.environ, "PYTHONPATH": str(apiserver.ROOT)},
                          capture_output=True, text=True, timeout=120)


def test_any_other_address_refuses_to_start_without_a_token(tmp_path):
    r = _refused(tmp_path / "data", "--host", "0.0.0.0")
    assert r.returncode == 2 and "refusing to serve on 0.0.0.0" in r.stderr and "create-token" in r.stderr
    assert "serving" not in r.stderr  # it never listened
    r = _refused(tmp_path / "data", "--require-token")  # 127.0.0.1 behind a proxy: the same rule
    assert r.returncode == 2 and "refusing to serve" in r.stderr


def test_with_require_token_every_request_needs_a_valid_token(tmp_path):
    data = tmp_path / "data"
    token = _cli("access", "create-token", "--store", str(data), "ci").stdout.strip().splitlines()[0]
    with apiserver.running(data, "--require-token", ready=False) as url:
        with httpx.Client(base_url=url, timeout=30) as c:
            r = c.get("/v1/documents")
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
            assert r.json()["error"]["code"] == "unauthorized"
            assert c.get("/v1/documents", headers={"Authorization": "Bearer rag_wrong"}).status_code == 403
            ok = {"Authorization": f"Bearer {token}"}
            assert c.get("/v1/documents", headers=ok).status_code == 200
            assert c.post("/mcp", json={}).status_code == 401  # the MCP transport too
            assert c.get("/openapi.json").status_code == 200  # the description holds no document
            assert c.get("/static-offline-docs/swagger-ui.css").status_code == 200
            assert _cli("access", "revoke-token", "--store", str(data), "ci").exit_code == 0
            assert c.get("/v1/documents", headers=ok).status_code == 403
