"""Who may call the API (issue 38, item 4): like the app, nobody but this machine unless a token says so.

* On a loopback address (``127.0.0.0/8``, ``::1``, ``localhost``: :func:`rag.access.is_loopback`) no token is
  needed. A browser page from elsewhere must still not drive it: a request whose ``Host`` is not a loopback
  name (DNS rebinding) or whose ``Origin`` is another site's is refused (403), as the MCP SDK does for its own
  transport.
* On any other address every request needs ``Authorization: Bearer <token>`` (401 without, 403 with a revoked
  or unknown one), and the server refuses to start while no token exists (:func:`check_bind`). The OpenAPI
  description (``/docs``, ``/openapi.json``) is open: it holds no document.
* Tokens: ``rag access create-token NAME`` prints a new random token once (32 bytes, URL-safe); only its
  SHA-256 is kept (a token is a random secret, not a password: a slow hash adds nothing), in
  ``<data folder>/api_tokens.json`` (mode 0600) with its name and dates; ``rag access tokens`` lists them,
  ``rag access revoke-token NAME`` removes one, effective at the next request (the file is read again when it
  changes). Compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rag.access import is_loopback, login_required
from rag.api.errors import ApiError

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

#: The file holding the tokens' hashes, in the data folder (``settings.store``).
TOKENS_FILE = "api_tokens.json"
#: Paths anyone may read without a token (the API's description: no document, no answer).
OPEN_PATHS = ("/docs", "/docs/oauth2-redirect", "/openapi.json", "/redoc")
#: Path prefixes anyone may read: the offline docs pages' scripts and styles (``fastapi_offline``).
OPEN_PREFIXES = ("/static-offline-docs/",)


@dataclass(frozen=True)
class TokenInfo:
    """One token as listed: its ``name``, when it was ``created`` (ISO 8601 UTC) and first characters (``hint``)."""

    name: str
    created: str
    hint: str


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _read(root: Path) -> dict[str, dict[str, str]]:
    try:
        return json.loads((Path(root) / TOKENS_FILE).read_text(encoding="utf-8")).get("tokens", {})
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise ValueError(f"{Path(root) / TOKENS_FILE}: unreadable ({e}); remove it and create the tokens again") from e


def _write(root: Path, tokens: dict[str, dict[str, str]]) -> Path:
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    path = root / TOKENS_FILE
    tmp = path.with_name(f".{TOKENS_FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump({"tokens": tokens}, fh, indent=1)
    os.replace(tmp, path)
    return path


def create_token(root: Path, name: str) -> str:
    """A new token named ``name`` for the data folder ``root``; returns it (shown once, never stored). Raises
    ``ValueError`` for an empty name or one already used (revoke it first)."""
    name = (name or "").strip()
    if not name or len(name) > 64 or not name.isprintable():
        raise ValueError("a token needs a name of 1-64 printable characters")
    tokens = _read(root)
    if name in tokens:
        raise ValueError(f"a token named {name!r} exists; revoke it first (rag access revoke-token {name})")
    token = "rag_" + secrets.token_urlsafe(32)
    tokens[name] = {"sha256": _digest(token), "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "hint": token[:8]}
    _write(root, tokens)
    return token


def revoke_token(root: Path, name: str) -> bool:
    """Remove the token named ``name``; returns whether there was one."""
    tokens = _read(root)
    if name not in tokens:
        return False
    del tokens[name]
    _write(root, tokens)
    return True


def list_tokens(root: Path) -> list[TokenInfo]:
    """The tokens of ``root``, by name (never the tokens themselves)."""
    return [TokenInfo(n, t.get("created", ""), t.get("hint", "")) for n, t in sorted(_read(root).items())]


class TokenCheck:
    """Verifies bearer tokens against ``<root>/api_tokens.json``, read again whenever the file changes (a
    revoked token stops working at the next request). Thread-safe."""

    def __init__(self, root: Path):
        self.path = Path(root) / TOKENS_FILE
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._digests: list[str] = []

    def _load(self) -> list[str]:
        try:
            st = self.path.stat()
            stamp = (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            return []
        with self._lock:
            if stamp != self._stamp:
                self._digests = [t["sha256"] for t in _read(self.path.parent).values()]
                self._stamp = stamp
            return self._digests

    def valid(self, token: str) -> bool:
        """Whether ``token`` is one of the stored ones (constant-time compare against each)."""
        d = _digest(token)
        return any(hmac.compare_digest(d, x) for x in self._load())


def check_bind(host: str, root: Path, require_token: bool = False) -> bool:
    """The start rule: ``True`` when tokens are required (a non-loopback ``host``, or ``require_token``: settings
    ``require_login``, behind a reverse proxy on this machine, as the app's password,
    :func:`rag.access.login_required`); raises ``ValueError`` when they are and none exists, so the server never
    listens beyond this machine unprotected."""
    if not login_required(host, require_token):
        return False
    if not list_tokens(root):
        raise ValueError(f"refusing to serve on {host}: any address but 127.0.0.1 needs a token, and none exists "
                         f"for {root}; create one with: rag access create-token NAME")
    return True


_LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def _host_name(value: str) -> str:
    v = value.strip().lower()
    if v.startswith("["):
        return v.split("]", 1)[0] + "]"
    return v.rsplit(":", 1)[0] if v.count(":") == 1 else v


def _local(name: str) -> bool:
    return name in _LOCAL_HOSTS or is_loopback(name.strip("[]"))


def refusal(headers: dict[str, str], path: str, tokens: TokenCheck | None) -> ApiError | None:
    """Why a request with ``headers`` (lower-case names) to ``path`` is refused, or ``None`` when it may pass.
    ``tokens`` ``None``: a loopback server (no token; the ``Host`` and ``Origin`` must be local)."""
    if tokens is None:
        if not _local(_host_name(headers.get("host", "127.0.0.1"))):
            return ApiError(403, "forbidden", "this server answers only on this machine (the Host header names "
                                              "another)")
        origin = headers.get("origin")
        if origin and origin != "null" and not _local(_host_name(origin.split("://", 1)[-1])):
            return ApiError(403, "forbidden", f"requests from web pages of {origin} are refused")
        return None
    if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
        return None
    auth = headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return ApiError(401, "unauthorized", "a bearer token is needed (Authorization: Bearer <token>; create one "
                                             "on the server with: rag access create-token NAME)")
    if not tokens.valid(token.strip()):
        return ApiError(403, "forbidden", "this token is not valid (unknown or revoked)")
    return None


class AuthMiddleware:
    """ASGI middleware applying :func:`refusal` to every HTTP request (the REST routes, the OpenAI endpoint and
    the mounted MCP transport alike); a refused request gets the JSON error and nothing else runs."""

    def __init__(self, app: ASGIApp, tokens: TokenCheck | None):
        self.app, self.tokens = app, tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        err = refusal(headers, scope.get("path", ""), self.tokens)
        if err is None:
            return await self.app(scope, receive, send)
        from starlette.responses import JSONResponse

        extra = {"WWW-Authenticate": "Bearer"} if err.status == 401 else {}
        await JSONResponse(err.to_json(), status_code=err.status, headers=extra)(scope, receive, send)
