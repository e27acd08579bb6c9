"""The view as one self-contained HTML document: the graph library, our page script and the data inlined.

Nothing is fetched when the page opens (it works offline, in JupyterLab, in an exported notebook and as a
saved file); only the served page (``api`` set) talks to its own server, for search, ask and expansion.

The graph library is Cytoscape.js (npm ``cytoscape``, pinned in ``package.json`` / ``package-lock.json``).
``make assets`` (part of ``make install``) runs ``npm ci`` and copies its ``dist/cytoscape.min.js`` into
``epigraph/explore/static/vendor/``, which is package data: a wheel built after it carries the file, so a
``pip install epigraph`` user needs no Node. :func:`library_js` says exactly that when the file is missing.
"""

from __future__ import annotations

import html
import json
from functools import cache
from importlib import resources
from typing import Any

LIBRARY = "cytoscape.min.js"
_STATIC = "static"


class MissingAsset(RuntimeError):
    """The graph library's JavaScript is not where the package expects it."""


def _static(name: str) -> str:
    return resources.files(__package__).joinpath(_STATIC, name).read_text(encoding="utf-8")


@cache
def library_js() -> str:
    """Cytoscape.js as shipped in the package (``static/vendor/cytoscape.min.js``)."""
    path = resources.files(__package__).joinpath(_STATIC, "vendor", LIBRARY)
    if not path.is_file():
        raise MissingAsset(
            f"the interactive view needs {LIBRARY} at {path}: in a source checkout run `make assets` "
            "(npm ci copies it from the pinned npm package `cytoscape`); released wheels ship it"
        )
    return path.read_text(encoding="utf-8")


@cache
def page_js() -> str:
    return _static("view.js")


@cache
def served_js() -> str:
    """The served page's part: search, ask and fetching neighbours (only when ``api`` is set)."""
    return _static("served.js")


@cache
def page_css() -> str:
    return _static("view.css")


def script_json(data: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` can end the tag."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _inline_script(code: str) -> str:
    return "<script>" + code.replace("</script", "<\\/script") + "</script>"


def document(data: dict[str, Any], *, api: dict[str, Any] | None = None, title: str = "") -> str:
    """The whole page. ``api``: the served page's settings (base URL, group, whether keys are on)."""
    config = {"api": api}
    name = html.escape(title or data.get("title") or "epigraph", quote=True)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{name}</title>",
            f"<style>{page_css()}</style>",
            "</head><body>",
            '<div id="ep-app"></div>',
            f'<script id="epigraph-data" type="application/json">{script_json(data)}</script>',
            f'<script id="epigraph-config" type="application/json">{script_json(config)}</script>',
            _inline_script(library_js()),
            _inline_script(page_js()),
            _inline_script(served_js()) if api else "",
            "</body></html>",
            "",
        ]
    )


def iframe(document_html: str, height: int = 620) -> str:
    """The document inside an ``<iframe srcdoc>``: a notebook cell gets its own page (no clash with the
    notebook's scripts, styles or require.js; several views per notebook), and it stays self-contained
    in an exported notebook."""
    src = html.escape(document_html, quote=True)
    return (
        f'<iframe class="epigraph-view" srcdoc="{src}" style="width:100%;height:{height}px;'
        'border:1px solid #ddd;border-radius:4px" sandbox="allow-scripts allow-popups allow-downloads">'
        "</iframe>"
    )
