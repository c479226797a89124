"""``rag serve``: the API on uvicorn, and the rule that decides whether it may start (issue 38, item 4).

127.0.0.1:8000 by default, this machine only, no token. Any other address needs at least one token
(``rag access create-token NAME``) or the server refuses to start (:func:`rag.api.auth.check_bind`), and then
every request needs one. One process: the answer queue is per process (a second process would load a second
model), so ``workers`` is always 1.
"""

from __future__ import annotations

from rag.api.app import DEFAULT_APP_URL, create_app
from rag.api.auth import TokenCheck, check_bind
from rag.api.service import ApiService
from rag.settings import Settings

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def build(settings: Settings, host: str = DEFAULT_HOST, *, max_waiting: int = 8, app_url: str = DEFAULT_APP_URL,
          mcp: bool = True):
    """The ASGI app for serving on ``host``; raises ``ValueError`` when ``host`` is not loopback and no token
    exists (the server must not start)."""
    needs_token = check_bind(host, settings.store, settings.require_login)
    svc = ApiService(settings, max_waiting=max_waiting)
    return create_app(svc, tokens=TokenCheck(settings.store) if needs_token else None, app_url=app_url, mcp=mcp)


def run(app, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, log_level: str = "info") -> None:
    """Serve ``app`` (from :func:`build`) with uvicorn until Ctrl-C or SIGTERM (a running job is put back)."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level=log_level, workers=1, timeout_graceful_shutdown=5,
                proxy_headers=False, server_header=False)
