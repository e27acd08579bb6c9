"""The documentation site builds: ``mkdocs build --strict`` (mkdocs.yml) into a temp folder, so a broken
link, a page missing from the nav, a snippet whose file is gone or an API reference that no longer
resolves fails here, and the pages a newcomer needs come out with their content."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, (
        f"mkdocs build --strict failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    )
    return out


def page(site: Path, path: str) -> str:
    return (site / path / "index.html").read_text(encoding="utf-8")


def test_the_api_reference_is_generated_from_the_docstrings(site: Path) -> None:
    reference = page(site, "reference/knowledge-graph")
    for method in ("add_episode", "add_episodes", "search", "entity", "ask"):
        assert f'id="epigraph.KnowledgeGraph.{method}"' in reference, (
            f"KnowledgeGraph.{method} is not documented"
        )
    assert 'id="epigraph.IngestOptions"' in page(site, "reference/options")
    assert 'id="epigraph.GraphStore"' in page(site, "reference/protocols")


def test_the_guides_the_changelog_and_the_decisions_are_pages(site: Path) -> None:
    assert "Your first episodes" in page(site, "getting-started")
    for guide in ("python", "cli", "http", "mcp", "notebook", "frameworks", "kafka", "neo4j", "local-model"):
        assert (site / "guides" / guide / "index.html").is_file(), f"no guide {guide}"
    assert '<h2 id="010">0.1.0' in page(site, "changelog"), "CHANGELOG.md is not included in its page"
    assert (site / "decisions" / "2026-11-25-ask" / "index.html").is_file()


def test_the_site_fetches_nothing(site: Path) -> None:
    """No web fonts and no script or stylesheet from another host: the pages read offline."""
    fetched = [
        f"{p.relative_to(site)}: {host}"
        for p in site.rglob("*.html")
        for host in ("fonts.googleapis.com", "fonts.gstatic.com", "cdn.jsdelivr.net", "unpkg.com")
        if host in p.read_text(encoding="utf-8")
    ]
    assert not fetched, f"pages that load from the web: {fetched[:5]}"
