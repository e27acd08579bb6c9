"""Every error the HTTP API answers, mapped to a status code in one place, each body
``{"detail": ..., "field": ...}``: bad input 422 (a body that is not UTF-8 JSON too, saying where it
broke), unknown things 404, a write the graph changed under (or a load into a group that is not
empty) 409, a redaction key that does not open a vault 403, a body over the limit 413, the LLM failing
502, the store failing, the server stopping, no LLM (or no redaction key) for a route that needs one
503, a time limit 504. A 405 lists in ``Allow`` every method the path
answers (Starlette names only the first route's). schemathesis checks the documented responses
(``tests/serve/test_fuzz``).
"""

from __future__ import annotations

import logging
import re
from functools import cache
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from ..errors import ConfigError, ConflictError, InputError, LLMError, NotFound, StoreError, VaultKeyError
from .auth import AuthError, BadGroup
from .schemas import LimitExceeded, error_body
from .service import ServerStopping

log = logging.getLogger("epigraph.serve")

_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}


def json_error(
    status: int, field: str | None, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(field, message), status_code=status, headers=headers)


def allowed_methods(request: Request) -> list[str] | None:
    """The methods the OpenAPI document gives the request's path (None: no documented path matches).

    Starlette's 405 names the methods of the first route that matched the path alone: ``GET`` for
    ``/episodes/{uuid}``, though ``DELETE`` is another route there. Among the documented paths that
    match, the one with the most fixed characters wins (``/episodes/batch`` over ``/episodes/{uuid}``),
    as OpenAPI matches a concrete path before a templated one."""
    paths: dict[str, dict[str, Any]] = request.app.openapi().get("paths", {})
    best: tuple[int, str] | None = None
    for template in paths:
        if _template(template).fullmatch(request.url.path):
            fixed = len(_PARAM.sub("", template))
            if best is None or fixed > best[0]:
                best = (fixed, template)
    if best is None:
        return None
    return sorted(m.upper() for m in paths[best[1]] if m.upper() in _METHODS)


_PARAM = re.compile(r"\{[^}/]+\}")


@cache
def _template(path: str) -> re.Pattern[str]:
    parts = _PARAM.split(path)
    return re.compile("[^/]+".join(re.escape(part) for part in parts))


def where_json_broke(document: Any, position: Any) -> str:
    """``line L, column C`` of a character position in the body (FastAPI gives the position only)."""
    if not isinstance(document, str) or not isinstance(position, int):
        return f"position {position}"
    line = document.count("\n", 0, position) + 1
    column = position - (document.rfind("\n", 0, position) + 1) + 1
    return f"line {line}, column {column}"


def install(app: FastAPI) -> None:
    """Register the handlers on ``app``."""

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        cause = exc.__cause__
        if exc.status_code == 400 and cause is not None:  # FastAPI could not read the body
            if isinstance(cause, UnicodeDecodeError):
                return json_error(422, "body", f"the body is not UTF-8: byte {cause.start} "
                                  f"(0x{cause.object[cause.start]:02x}) cannot be decoded")  # fmt: skip
            return json_error(422, "body", f"the body could not be read as JSON ({type(cause).__name__})")
        if exc.status_code == 413:
            return json_error(413, "body", str(exc.detail))
        if exc.status_code in (204, 304):
            return Response(status_code=exc.status_code, headers=exc.headers)
        headers = dict(exc.headers or {})
        allowed = allowed_methods(request) if exc.status_code == 405 else None
        if allowed:
            headers["Allow"] = ", ".join(allowed)
        return json_error(exc.status_code, None, str(exc.detail), headers)

    @app.exception_handler(AuthError)
    async def auth_error(_: Request, exc: AuthError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return json_error(exc.status, None, exc.detail, headers)

    @app.exception_handler(BadGroup)
    async def bad_group(_: Request, exc: BadGroup) -> JSONResponse:
        return json_error(422, "group_id", str(exc))

    @app.exception_handler(LimitExceeded)
    async def limit(_: Request, exc: LimitExceeded) -> JSONResponse:
        return json_error(exc.status, exc.field, exc.message)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors: list[Any] = list(exc.errors())
        first = errors[0] if errors else {}
        if first.get("type") == "json_invalid":  # loc is ("body", character position)
            position = first.get("loc", ("body", None))[-1]
            reason = first.get("ctx", {}).get("error", "invalid JSON")
            return json_error(422, "body", f"the body is not valid JSON: {reason} at "
                              f"{where_json_broke(exc.body, position)}")  # fmt: skip
        field = ".".join(str(p) for p in first.get("loc", ())[1:]) or None
        message = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in errors)
        return json_error(422, field, message[:2000])

    @app.exception_handler(InputError)
    async def input_error(_: Request, exc: InputError) -> JSONResponse:
        return json_error(422, exc.field, str(exc))

    @app.exception_handler(ConflictError)
    async def conflict(_: Request, exc: ConflictError) -> JSONResponse:
        return json_error(409, None, str(exc))

    @app.exception_handler(NotFound)
    async def not_found(_: Request, exc: NotFound) -> JSONResponse:
        return json_error(404, None, str(exc))

    @app.exception_handler(VaultKeyError)
    async def vault_key(_: Request, exc: VaultKeyError) -> JSONResponse:
        return json_error(403, None, str(exc))

    @app.exception_handler(ConfigError)
    async def not_configured(_: Request, exc: ConfigError) -> JSONResponse:
        return json_error(503, None, str(exc).splitlines()[0])

    @app.exception_handler(LLMError)
    async def llm_error(_: Request, exc: LLMError) -> JSONResponse:
        return json_error(502, None, f"the language model failed: {type(exc).__name__}")

    @app.exception_handler(StoreError)
    async def store_error(_: Request, exc: StoreError) -> JSONResponse:
        log.error("store error: %s", exc)
        return json_error(503, None, "the graph store is unavailable")

    @app.exception_handler(ValueError)
    async def value_error(_: Request, exc: ValueError) -> JSONResponse:
        return json_error(422, None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    @app.exception_handler(ServerStopping)
    async def stopping(_: Request, exc: ServerStopping) -> JSONResponse:
        return json_error(503, None, str(exc))

    @app.exception_handler(TimeoutError)
    async def timeout(_: Request, exc: TimeoutError) -> JSONResponse:
        return json_error(504, None, "the request took longer than its time limit")

    @app.exception_handler(OverflowError)
    async def overflow(_: Request, exc: OverflowError) -> JSONResponse:
        return json_error(422, None, f"a value is out of range: {exc}")
