"""The FastAPI application put together (issue 38; ``fastapi_offline``'s, whose ``/docs`` and ``/redoc`` pages
load Swagger UI and ReDoc from the package instead of a CDN: the product runs offline): the REST routes, the OpenAI-compatible endpoint, the MCP
transport at ``/mcp``, the JSON errors and the access rule, over one :class:`rag.api.service.ApiService`.

:func:`create_app` is what ``rag serve`` runs (:mod:`rag.api.server`) and what the tests start in a subprocess.
At start-up (the lifespan) the service resumes the workers of stores with jobs left and loads the models in a
thread (503 until they are loaded); at shutdown the worker threads put their running job back in the queue.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException

import rag
from rag.api.auth import AuthMiddleware, TokenCheck
from rag.api.errors import ApiError, from_rag_error
from rag.api.routes import build_router
from rag.api.service import ApiService
from rag.api.uploads import UploadSizeGuard
from rag.errors import RagError

#: Where the app (``make run``) serves its viewer, for the passages' ``viewer_url``.
DEFAULT_APP_URL = "http://localhost:8501"


def _error(e: ApiError) -> JSONResponse:
    return JSONResponse(e.to_json(), status_code=e.status, headers=e.headers())


def _validation(e: RequestValidationError) -> ApiError:
    """A body or parameter that fails its schema: 400 when the JSON itself is malformed, else 422 naming the
    field and the reason."""
    errs = e.errors()
    if any(x.get("type") == "json_invalid" for x in errs):
        return ApiError(400, "malformed_json", "the request body is not valid JSON")
    parts = []
    for x in errs[:5]:
        where = ".".join(str(p) for p in x.get("loc", ()) if p != "body")
        parts.append(f"{where or 'body'}: {x.get('msg')}")
    return ApiError(422, "invalid", "; ".join(parts))


def create_app(service: ApiService, *, tokens: TokenCheck | None = None, app_url: str = DEFAULT_APP_URL,
               mcp: bool = True, warm_in_background: bool = True) -> FastAPI:
    """The ASGI application over ``service``. ``tokens`` the bearer-token check of a non-loopback server
    (``None``: loopback, no token; :mod:`rag.api.auth`); ``app_url`` the app's address for viewer links;
    ``mcp`` mounts the MCP streamable-HTTP transport at ``/mcp``."""
    mcp_server = None
    if mcp:
        from rag.api.mcp_server import build_mcp

        mcp_server = build_mcp(service, app_url=app_url)
        # the SDK's one route, at /mcp (its session manager runs in this app's lifespan); the Host and Origin
        # checks it makes on a loopback bind are rag.api.auth's, for every route alike
        mcp_routes = mcp_server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True,
                                                    transport_security=None, host="0.0.0.0").routes

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service.start(background=warm_in_background)
        try:
            if mcp_server is not None:
                async with mcp_server.session_manager.run():
                    yield
            else:
                yield
        finally:
            service.close()

    app = FastAPIOffline(title="Document QA with honest citations", version=rag.__version__, lifespan=lifespan,
                  description="Answers from your own documents, every claim with a checked [n] citation "
                              "(document, locator, verbatim quote, offsets into the canonical text). "
                              "See docs/api.md.")
    app.state.service = service
    app.state.app_url = app_url

    @app.exception_handler(ApiError)
    async def api_error(request: Request, e: ApiError) -> JSONResponse:
        return _error(e)

    @app.exception_handler(RagError)
    async def rag_error(request: Request, e: RagError) -> JSONResponse:
        return _error(from_rag_error(e))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, e: RequestValidationError) -> JSONResponse:
        return _error(_validation(e))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, e: HTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(e.status_code, "http_error")
        return _error(ApiError(e.status_code, code, str(e.detail)))

    app.include_router(build_router())
    from rag.api.openai_compat import build_openai_router

    app.include_router(build_openai_router())
    if mcp_server is not None:
        app.router.routes.extend(mcp_routes)
    app.add_middleware(UploadSizeGuard, max_upload_mb=service.settings.max_upload_mb)
    app.add_middleware(AuthMiddleware, tokens=tokens)  # added last: runs first
    return app

