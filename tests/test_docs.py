"""ARCHITECTURE.md stays a map a newcomer reads in fifteen minutes, and says nothing the tree contradicts.

The measured decisions live in docs/decisions/ (one dated file each, indexed by its README); the map
names modules and points there. These checks catch drift: a length past the bound, a module path or a
link that no longer exists, a module missing from its package's row in "Where things live".
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from epigraph import __version__

ROOT = Path(__file__).resolve().parent.parent
MAP = ROOT / "ARCHITECTURE.md"
DOCS = ROOT / "docs"
DECISIONS = DOCS / "decisions"
README_MAX_LINES = 250
MAX_LINES = 250

PATH = re.compile(r"(?<![\w/.-])((?:[A-Za-z_][\w.]*/)+(?:\w+\.(?:py|md|json|js|css|txt))?|\w+\.py)(?![\w/])")
"""A path in the map: ``epigraph/ingestion/runner.py``, ``ingestion/runner.py``, ``serve/``, ``runner.py``."""

LINK = re.compile(r"\]\(([^)#\s]+)\)")


def resolves(path: str, base: Path = ROOT) -> bool:
    """True when ``path`` names a file or directory from ``base``, or from the package (short form)."""
    clean = path.rstrip("/")
    if (base / clean).exists() or (ROOT / "epigraph" / clean).exists():
        return True
    return "/" not in clean and any((ROOT / "epigraph").rglob(clean))  # a file or folder named in context


def test_architecture_is_a_short_map() -> None:
    lines = MAP.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, (
        f"ARCHITECTURE.md has {len(lines)} lines (at most {MAX_LINES}): move the figures and reasons to a "
        "dated file in docs/decisions/ and leave a pointer"
    )


def paths_in(text: str) -> set[str]:
    return {m for m in PATH.findall(text) if not m.startswith(("http", "../"))}


def test_every_path_the_map_names_exists() -> None:
    text = MAP.read_text(encoding="utf-8")
    named = paths_in(text)
    missing = sorted(p for p in named if not resolves(p))
    assert "epigraph/serve/deps.py" in named and "ingestion/runner.py" in named
    assert not missing, f"ARCHITECTURE.md names paths that do not exist: {missing}"


def test_every_link_resolves() -> None:
    broken = []
    for doc in [MAP, ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.rglob("*.md"))]:
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            if "://" not in target and not (doc.parent / target).exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert not broken, "links to nothing:\n" + "\n".join(broken)


def test_package_rows_name_every_module() -> None:
    """A row ``| `epigraph/<pkg>/` | ... |`` names each module of that package (``routes_explore`` was
    once missing from the serve row)."""
    rows = re.findall(r"^\| `(epigraph/[\w/]+/)` \|(.*)\|$", MAP.read_text(encoding="utf-8"), re.MULTILINE)
    assert len(rows) > 10
    unnamed = []
    for package, job in rows:
        named = set(re.findall(r"`([\w.]+)", job))
        for module in sorted((ROOT / package).glob("*.py")):
            if module.stem != "__init__" and module.stem not in named:
                unnamed.append(f"{package}{module.name}")
    assert not unnamed, "modules missing from their row of 'Where things live':\n" + "\n".join(unnamed)


def test_the_decision_log_is_indexed_and_dated() -> None:
    index = (DECISIONS / "README.md").read_text(encoding="utf-8")
    files = sorted(p.name for p in DECISIONS.glob("*.md") if p.name != "README.md")
    assert files
    undated = [f for f in files if not re.fullmatch(r"\d{4}-\d{2}-\d{2}-[a-z0-9-]+\.md", f)]
    unindexed = [f for f in files if f"]({f})" not in index]
    assert not undated, f"decision files are named YYYY-MM-DD-topic.md: {undated}"
    assert not unindexed, (
        f"decision files missing from docs/decisions/README.md: {unindexed} (and add them to mkdocs.yml nav)"
    )


def test_the_checker_sees_paths() -> None:
    text = (
        "`epigraph/ingestion/runner.py`, ingestion/claims.py, retry.py and `serve/`; not `a.b`, 1/2, ../x.md"
    )
    assert paths_in(text) == {"epigraph/ingestion/runner.py", "ingestion/claims.py", "retry.py", "serve/"}
    assert resolves("ingestion/runner.py") and resolves("retry.py") and resolves("static/")
    assert not resolves("pipeline/nowhere.py") and not resolves("nowhere.py")


def test_the_changelog_has_a_section_for_this_version() -> None:
    """A development version (``0.2.0.dev0``) is the changelog's "Unreleased" section, a release its own
    ``## X.Y.Z`` heading; either way above every earlier version's."""
    headings = re.findall(r"^## (.+)$", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.MULTILINE)
    release = re.sub(r"\.dev\d+$", "", __version__)
    expected = f"Unreleased ({__version__})" if release != __version__ else release
    assert headings and headings[0] == expected, f"CHANGELOG.md opens with {headings[:1]}, not {expected}"
    assert "0.1.0" in headings


def test_the_readme_is_short_and_points_to_the_site() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): move guide text to a page of docs/"
    )
    assert lines[3].startswith("make demo") and lines[4].startswith("make test"), "the set-up commands first"
    assert "](docs/getting-started.md)" in text


def nav_pages(nav: object) -> list[str]:
    """Every page file a mkdocs nav names, depth first."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [p for item in nav for p in nav_pages(item)]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in nav_pages(value)]
    return []


def test_every_page_of_the_site_is_in_the_nav() -> None:
    """A page left out of mkdocs.yml's nav is built but found by no one; a nav entry without its file
    fails the build."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    named = nav_pages(config["nav"])
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(set(named)) == sorted(named), "a page is in the nav twice"
    assert not (missing := sorted(set(pages) - set(named))), f"pages missing from mkdocs.yml's nav: {missing}"
    assert not (gone := sorted(set(named) - set(pages))), (
        f"mkdocs.yml's nav names pages that do not exist: {gone}"
    )


def test_the_site_builds_offline_and_strict() -> None:
    """Material's Google fonts off, no plugin that fetches, warnings are errors."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["strict"] is True and config["theme"]["font"] is False
    plugins = [next(iter(p)) if isinstance(p, dict) else p for p in config["plugins"]]
    assert plugins == ["search", "mkdocstrings"]


BUILT = {"dist/", "site/"}
"""Folders the README names that a build makes (``python -m build``, ``mkdocs build``)."""


def test_every_path_the_readme_and_the_guides_name_exists() -> None:
    """A module moved or renamed leaves no stale path in the user's pages (the decision records are
    history, and keep the paths of their day)."""
    docs = [ROOT / "README.md", *sorted(DOCS.glob("*.md")), *sorted((DOCS / "guides").glob("*.md"))]
    stale = [
        f"{doc.relative_to(ROOT)}: {p}"
        for doc in docs
        for p in sorted(paths_in(doc.read_text(encoding="utf-8")) - BUILT)
        if not resolves(p) and not resolves(p, base=doc.parent)
    ]
    assert not stale, "paths that do not exist:\n" + "\n".join(stale)
