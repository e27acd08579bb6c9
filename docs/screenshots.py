"""Screenshots of the interactive view of the demo graph, now and at a past date, for the README.

    .venv/bin/python docs/screenshots.py          # writes docs/view-now.png and docs/view-2023-06-01.png

The demo graph is the quickstart conversation replayed offline (its recorded LLM answers, the hash
embedder). The browser is Debian's ``chromium`` driven by Playwright (``executable_path``: Playwright
never downloads a browser here). ``tests/explore`` shares :func:`demo_graph`, :func:`demo_view` and
:func:`browser` with this script.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script (docs/ first on the path): the examples from the root
    sys.path.insert(0, str(ROOT))

from epigraph.client import KnowledgeGraph  # noqa: E402
from epigraph.config import Settings  # noqa: E402
from epigraph.explore import GraphView  # noqa: E402
from epigraph.testing import HashEmbedder, ScriptedLLM  # noqa: E402
from examples.quickstart import GROUP, RECORDED, Replay, conversation  # noqa: E402

PAST = "2023-06-01"
SIZE = {"width": 1100, "height": 640}


def demo_graph(db: str = ":memory:", llm: ScriptedLLM | None = None) -> KnowledgeGraph:
    """The quickstart graph's KnowledgeGraph (not opened; ``add_episodes(conversation())`` fills it)."""
    replay = llm or ScriptedLLM(Replay(json.loads(RECORDED.read_text(encoding="utf-8"))))
    return KnowledgeGraph(Settings(db_path=db), llm=replay, embedder=HashEmbedder(), group_id=GROUP)


async def demo_view(entity: str = "Alice") -> GraphView:
    """The demo conversation ingested, then the view of one entity's neighbourhood."""
    async with demo_graph() as kg:
        await kg.add_episodes(conversation())
        return await kg.subgraph(entity, include_retired=True)


def chromium_path() -> str:
    found = shutil.which("chromium")
    if found is None:
        raise RuntimeError("no `chromium` on PATH: `make chromium` installs Debian's package")
    return found


@contextmanager
def browser() -> Iterator[Any]:
    """A headless Chromium (Debian's) under Playwright's sync API."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # root in CI: no sandbox; a small /dev/shm in containers: shared memory in /tmp instead
        args = ["--no-sandbox", "--disable-dev-shm-usage"]
        launched = pw.chromium.launch(executable_path=chromium_path(), args=args)
        try:
            yield launched
        finally:
            launched.close()


def shoot(view: GraphView, out: Path) -> list[Path]:
    """Save the view, open it, and photograph it now and at :data:`PAST`."""
    page_file = view.save(out / "view.html")
    written = []
    with browser() as chrome:
        page = chrome.new_page(viewport=SIZE)
        page.goto(page_file.as_uri())
        page.wait_for_function("window.epigraph && window.epigraph.ready")
        page.evaluate("id => window.epigraph.select(id)", view.focus[0])  # its panel open
        page.screenshot(path=out / "view-now.png")
        written.append(out / "view-now.png")
        page.evaluate("when => window.epigraph.setTime(when)", PAST)
        page.screenshot(path=out / f"view-{PAST}.png")
        written.append(out / f"view-{PAST}.png")
    page_file.unlink()
    return written


def main() -> int:
    view = asyncio.run(demo_view())
    for path in shoot(view, ROOT / "docs"):
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
