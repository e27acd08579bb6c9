"""The API's documentation pages, ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), with their assets served
from the package: nothing comes from a CDN, so both render offline (FastAPI's own pages load them from
the internet).

The assets come from the npm packages ``swagger-ui-dist`` and ``redoc`` (its standalone bundle), pinned
in ``package.json`` / ``package-lock.json`` beside the view's ``cytoscape``; ``make assets`` copies them
into ``epigraph/serve/static/vendor/``, package data that a wheel built after it carries. Where they are
missing (a source checkout before ``make assets``) the pages answer 503 saying so.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, PlainTextResponse, Response

ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
    "redoc.standalone.js": "text/javascript; charset=utf-8",
}
"""What ``make assets`` copies into ``static/vendor`` (and their licences beside them)."""

ASSET_PATH = "/docs/assets"

# Nothing on the pages reaches past this server (ReDoc's footer logo is on a CDN: it hides itself)
_SELF_ONLY = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' "
    "'unsafe-inline'; img-src 'self' data:; worker-src 'self' blob:; connect-src 'self'"
}


@cache
def asset(name: str) -> bytes | None:
    """One of :data:`ASSETS` as shipped in the package (None: not there)."""
    path = resources.files(__package__).joinpath("static", "vendor", name)
    return path.read_bytes() if name in ASSETS and path.is_file() else None


def missing() -> list[str]:
    return [name for name in ASSETS if asset(name) is None]


def _unavailable() -> PlainTextResponse:
    return PlainTextResponse(
        f"the API docs need {', '.join(missing())} in epigraph/serve/static/vendor: in a source checkout "
        "run `make assets` (npm ci copies them from the pinned npm packages swagger-ui-dist and redoc); "
        "released wheels ship them. /openapi.json is the API's description.",
        status_code=503,
    )


def _self_only(page: HTMLResponse) -> HTMLResponse:
    page.headers.update(_SELF_ONLY)
    return page


def register(app: FastAPI, title: str) -> None:
    """Add ``/docs``, ``/docs/oauth2-redirect``, ``/redoc`` and their assets to ``app`` (created with
    ``docs_url=None, redoc_url=None``)."""
    openapi_url = app.openapi_url or "/openapi.json"
    redirect = "/docs/oauth2-redirect"

    async def swagger_ui() -> Response:
        if missing():
            return _unavailable()
        page = get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{title} - Swagger UI",
            oauth2_redirect_url=redirect,
            swagger_js_url=f"{ASSET_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSET_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{ASSET_PATH}/favicon-32x32.png",
            swagger_ui_parameters={"validatorUrl": None},  # Swagger UI's online validator: off
        )
        return _self_only(page)

    async def oauth2_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    async def redoc() -> Response:
        if missing():
            return _unavailable()
        page = get_redoc_html(
            openapi_url=openapi_url,
            title=f"{title} - ReDoc",
            redoc_js_url=f"{ASSET_PATH}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSET_PATH}/favicon-32x32.png",
            with_google_fonts=False,
        )
        return _self_only(page)

    async def served_asset(name: str) -> Response:
        content = asset(name)
        if content is None:
            return PlainTextResponse(f"no such asset: {name}", status_code=404)
        return Response(content, media_type=ASSETS[name], headers={"Cache-Control": "public, max-age=3600"})

    for path, endpoint in (("/docs", swagger_ui), (redirect, oauth2_redirect), ("/redoc", redoc),
                           (f"{ASSET_PATH}/{{name}}", served_asset)):  # fmt: skip
        app.add_api_route(path, endpoint, methods=["GET"], include_in_schema=False)
