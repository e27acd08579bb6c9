"""The release a user installs: ``python -m build`` makes an sdist and a wheel from this checkout, their
file lists hold what a user needs and nothing of the tests, and the wheel installed into a FRESH virtual
environment (not the dev one) runs ``epigraph --version``, the quickstart and the served page.

The fresh environment gets the wheel with the ``serve`` extra only (FastAPI, uvicorn, MCP: what the
served page needs; not the torch-based ``local``), its dependencies from the package index through pip.
The quickstart falls back to the model-free HashEmbedder there and replays its recorded replies, so it
runs offline. It is the slow test of ``make test`` (about a minute, most of it pip); ``make test-fast``
leaves it out (``-m "not release"``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tarfile
import time
import venv
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from epigraph import __version__

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "examples" / "quickstart.py"
VENDORED = (
    "epigraph/explore/static/vendor/cytoscape.min.js",
    "epigraph/serve/static/vendor/swagger-ui-bundle.js",
    "epigraph/serve/static/vendor/redoc.standalone.js",
)
"""The JavaScript ``make assets`` copies into the package (gitignored, so only a build carries it)."""
NEEDED = (
    *VENDORED,
    "epigraph/py.typed",
    "epigraph/prompts/templates/extract_facts.txt",
    "epigraph/explore/static/view.js",
    "epigraph/cli/__init__.py",
)

pytestmark = pytest.mark.release


@dataclass(frozen=True)
class Built:
    wheel: Path
    sdist: Path

    def wheel_files(self) -> list[str]:
        with zipfile.ZipFile(self.wheel) as archive:
            return archive.namelist()

    def sdist_files(self) -> list[str]:
        """The sdist's paths without its top folder (``epigraph-X.Y.Z/``)."""
        with tarfile.open(self.sdist) as archive:
            return [name.partition("/")[2] for name in archive.getnames()]


def _clean_env(**extra: str) -> dict[str, str]:
    """This environment without EPIGRAPH_* (no live LLM), without PYTHONPATH (nothing of the checkout
    leaks into the fresh venv), offline for models."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPIGRAPH_") and k != "PYTHONPATH"}
    return {**env, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **extra}


def _run(
    argv: list[str | Path], timeout: float, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The finished command; a failure shows its exit code and the ends of its output."""
    argv_text = [str(a) for a in argv]
    done = subprocess.run(
        argv_text, capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd, env=env
    )
    assert done.returncode == 0, (
        f"{argv_text} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The sdist, and the wheel built from it (``python -m build``'s default), from this checkout."""
    missing = [p for p in VENDORED if not (ROOT / p).is_file()]
    assert not missing, f"the package's JavaScript is missing ({missing}): run `make assets` first"
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT], timeout=600, cwd=ROOT)
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return Built(wheel, sdist)


def test_the_archives_are_named_by_the_version(built: Built) -> None:
    assert built.wheel.name == f"epigraph-{__version__}-py3-none-any.whl"
    assert built.sdist.name == f"epigraph-{__version__}.tar.gz"


def test_the_wheel_holds_the_package_its_assets_and_nothing_else(built: Built) -> None:
    files = built.wheel_files()
    missing = [p for p in NEEDED if p not in files]
    assert not missing, f"the wheel lacks {missing}"
    outside = sorted({f.split("/")[0] for f in files} - {"epigraph", f"epigraph-{__version__}.dist-info"})
    assert not outside, f"the wheel holds more than the package: {outside}"
    with zipfile.ZipFile(built.wheel) as archive:
        meta = archive.read(f"epigraph-{__version__}.dist-info/METADATA").decode()
        scripts = archive.read(f"epigraph-{__version__}.dist-info/entry_points.txt").decode()
    assert f"Version: {__version__}\n" in meta and "Provides-Extra: serve" in meta
    assert "License-Expression: Apache-2.0" in meta and "License-File: LICENSE" in meta
    assert f"epigraph-{__version__}.dist-info/licenses/LICENSE" in files, "the wheel lacks the license text"
    assert "epigraph = epigraph.cli:main" in scripts


def test_the_sdist_holds_the_sources_and_the_changelog_not_the_tests(built: Built) -> None:
    files = built.sdist_files()
    wanted = (*NEEDED, "pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE")
    missing = [p for p in wanted if p not in files]
    assert not missing, f"the sdist lacks {missing}"
    stray = sorted(f for f in files if f.split("/")[0] in ("tests", "bench", "docs", "examples", "tools"))
    assert not stray, f"the sdist holds files a user does not need: {stray[:10]}"


@pytest.fixture(scope="module")
def fresh(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment (no packages of the dev one) with the wheel and its serve extra
    installed; its bin folder."""
    home = tmp_path_factory.mktemp("fresh")
    venv.EnvBuilder(with_pip=True, clear=True).create(home / "venv")
    bin_dir = home / "venv" / "bin"
    _run(
        [bin_dir / "python", "-m", "pip", "install", "-q", f"{built.wheel}[serve]"],
        timeout=900,
        env=_clean_env(),
    )
    return bin_dir


def test_the_installed_command_prints_the_version(fresh: Path) -> None:
    done = _run([fresh / "epigraph", "--version"], timeout=60, env=_clean_env())
    assert done.stdout == f"epigraph {__version__}\n"
    where = _run([fresh / "python", "-c", "import epigraph; print(epigraph.__file__)"], timeout=60,
                 env=_clean_env(), cwd=fresh)  # fmt: skip
    assert Path(where.stdout.strip()).is_relative_to(fresh.parent), "epigraph came from outside the venv"


def test_the_quickstart_runs_from_the_installed_wheel(fresh: Path, tmp_path: Path) -> None:
    """Run from a temp folder: the checkout's package is not on the path, only the installed one."""
    done = _run([fresh / "python", QUICKSTART], timeout=300, env=_clean_env(), cwd=tmp_path)
    first, *_ = done.stdout.splitlines()
    assert "running on RECORDED responses" in first
    history = done.stdout.split("History: retired facts", 1)[1]
    assert "Alice lives in Paris." in history and "retired by: Alice lives in Berlin." in history


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(fresh: Path, tmp_path: Path) -> Iterator[str]:
    """``epigraph serve`` from the fresh venv on a free loopback port; its URL. Stopped after."""
    port = _free_port()
    env = _clean_env(EPIGRAPH_DB=str(tmp_path / "graph.db"), EPIGRAPH_EMBEDDER="hash")
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([fresh / "epigraph", "serve", "--port", str(port)], env=env, cwd=tmp_path,
                              stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, f"epigraph serve exited:\n{(tmp_path / 'serve.log').read_text()}"
            try:
                if httpx.get(f"{url}/v1/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"no answer on {url}:\n{(tmp_path / 'serve.log').read_text()}"
            time.sleep(0.3)
        yield url
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        finally:
            if server.poll() is None:
                server.kill()
            log.close()


def test_the_served_page_and_api_from_the_installed_wheel(served: str, built: Built) -> None:
    with httpx.Client(base_url=served, timeout=30) as c:
        page = c.get("/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        with zipfile.ZipFile(built.wheel) as archive:
            cytoscape = archive.read(VENDORED[0]).decode()
        assert cytoscape[:2000] in page.text, "the page does not inline the packaged graph library"
        swagger = c.get("/docs/assets/swagger-ui-bundle.js")
        assert swagger.status_code == 200 and len(swagger.content) > 100_000
        assert c.get("/openapi.json").json()["info"]["version"] == __version__
        episode_in = {"content": "Alice: I moved to Lisbon.", "reference_time": "2024-02-01T10:00:00Z"}
        added = c.post("/v1/groups/release/episodes", json=episode_in)
        assert added.status_code == 202, added.text
        (episode,) = added.json()["episodes"]
        stats = c.get("/v1/groups/release/stats").json()
        assert stats["episodes"] == 1 and stats["pending_episodes"] == 1  # no LLM here: it waits, stored
        listed = json.loads(c.get(f"/v1/groups/release/episodes/{episode['uuid']}").text)
        assert listed["status"] == "pending"
