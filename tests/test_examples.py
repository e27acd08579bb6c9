"""The examples run offline and show what they promise.

- ``examples/explore.py`` (a jupytext percent notebook) is executed cell by cell in a real IPython
  kernel of *this* interpreter (a kernelspec written to a temp dir, so nothing depends on what is
  installed in the user's Jupyter paths), and its outputs are checked.
- ``examples/explore.ipynb`` is the same notebook, kept in sync (``jupytext --sync examples/explore.py``).
- ``examples/quickstart.py`` (the demo) runs as a subprocess on its recorded responses.
- The framework examples (``langchain_memory.py``, ``langgraph_memory.py``, ``openai_agents_tools.py``,
  ``pydantic_ai_tools.py``) run the same way, each on the quickstart's recording.
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
KERNEL = "epigraph-test"


def _offline_env() -> dict[str, str]:
    """The current environment without EPIGRAPH_* (so no live LLM is picked up), offline; this
    checkout's ``epigraph`` first on the path (a script's own directory hides the working directory)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPIGRAPH_")}
    path = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return {
        **env,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "EPIGRAPH_EMBEDDER": "hash",
        "PYTHONPATH": path,
    }


def _run_example(name: str) -> str:
    """The example run offline as a script; its output (it must succeed, saying it runs recorded)."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        env=_offline_env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "running on RECORDED responses" in done.stdout.splitlines()[0]
    return done.stdout


def _kernel_manager(tmp: Path) -> AsyncKernelManager:
    """A kernel of the running interpreter, from a kernelspec that exists only for this test."""
    spec = tmp / "kernels" / KERNEL
    spec.mkdir(parents=True)
    kernel = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "epigraph tests",
        "language": "python",
        "env": {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
    }
    (spec / "kernel.json").write_text(json.dumps(kernel))
    specs = KernelSpecManager(kernel_dirs=[str(tmp / "kernels")])
    return AsyncKernelManager(kernel_name=KERNEL, kernel_spec_manager=specs)


def _outputs(cell: Any) -> str:
    """Everything a cell showed: streams, plain-text, HTML and SVG reprs."""
    parts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            parts.append(out["text"])
        for mime in ("text/plain", "text/html", "image/svg+xml"):
            if mime in out.get("data", {}):
                parts.append(f"[{mime}]\n{out['data'][mime]}")
    return "\n".join(parts)


@pytest.fixture(scope="module")
def explored(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """explore.py executed; the outputs of its code cells, in order."""
    nb = jupytext.read(EXAMPLES / "explore.py")
    client = NotebookClient(
        nb,
        km=_kernel_manager(tmp_path_factory.mktemp("jupyter")),
        timeout=300,
        resources={"metadata": {"path": str(EXAMPLES)}},
    )
    client.execute()  # raises CellExecutionError naming the cell on any error
    return [_outputs(cell) for cell in nb.cells if cell.cell_type == "code"]


def test_explore_runs_and_shows_current_facts_then_the_past(explored: list[str]) -> None:
    assert explored[0].startswith("group 'quickstart' in EmbeddedStore(':memory:'), embedder 'hash'")
    ingest = next(o for o in explored if "LLM calls for 9 episodes" in o)
    assert "Alice: Big news: I moved to Berlin last month and joined" in ingest
    assert "retired 2" in ingest

    now = next(o for o in explored if o.startswith("current:"))
    first_line = now.splitlines()[0]
    assert "Alice lives in Berlin." in first_line and "Alice works at Globex." in first_line
    assert "Alice lives in Paris." not in first_line
    assert "[text/html]" in now and "epigraph-table" in now, "results render as HTML in notebooks"

    then = next(o for o in explored if o.startswith("as of 2023-06-01:"))
    first_line = then.splitlines()[0]
    assert "Alice lives in Paris." in first_line and "Alice works at Acme as a designer." in first_line
    assert "Alice lives in Berlin." not in first_line


def test_explore_shows_history_pandas_networkx_and_a_picture(explored: list[str]) -> None:
    history = next(o for o in explored if o.startswith("retired:"))
    paris = "retired: 'Alice lives in Paris.' (true until 2023-08-01), retired by 'Alice lives in Berlin.'"
    assert paris in history
    assert "History (retired facts)" in history

    table = next(o for o in explored if "source_name" in o and "[text/html]" in o)
    assert "Alice works at Globex." in table and "<table" in table

    graph = next(o for o in explored if " nodes, " in o and " edges" in o)
    assert "Alice -LIVES_IN-> Paris (retired)" in graph
    assert "Alice -LIVES_IN-> Berlin (current)" in graph

    picture = next(o for o in explored if o.startswith("saved alice.html"))
    assert "6 facts drawn, 4 more embedded for 'expand'" in picture.splitlines()[0]
    assert '[text/html]\n<iframe class="epigraph-view" srcdoc=' in picture  # the interactive view
    page = html.unescape(picture.split('srcdoc="', 1)[1])
    assert "cytoscape" in page and '"text":"Alice lives in Paris."' in page and '"expired_at":"' in page


def test_the_ipynb_is_in_sync_with_the_py() -> None:
    py = jupytext.read(EXAMPLES / "explore.py")
    ipynb = nbformat.read(EXAMPLES / "explore.ipynb", as_version=4)
    assert [(c.cell_type, c.source) for c in ipynb.cells] == [(c.cell_type, c.source) for c in py.cells], (
        "regenerate it: jupytext --sync examples/explore.py"
    )
    assert not any(c.get("outputs") for c in ipynb.cells if c.cell_type == "code"), "commit it clean"


def test_the_quickstart_runs_on_recorded_responses_and_shows_history() -> None:
    out = _run_example("quickstart.py")
    history = out.split("History: retired facts", 1)[1]
    assert "Alice lives in Paris." in history and "retired by: Alice lives in Berlin." in history


def test_the_langchain_example_reads_the_history_back_and_retrieves_windows() -> None:
    out = _run_example("langchain_memory.py")
    assert "The history holds 9 messages" in out
    assert "AIMessage    Congrats! I've been teaching" in out
    now, then = out.split("Retriever, now:", 1)[1].split("Retriever, as of 2023-06-01:")
    assert "2023-08-01 .. now        Alice lives in Berlin." in now and "Alice lives in Paris." not in now
    assert "2023-03-10 .. 2023-08-01 Alice lives in Paris." in then and "Alice lives in Berlin." not in then


def test_the_langgraph_example_remembers_in_its_nodes() -> None:
    out = _run_example("langgraph_memory.py")
    assert out.count("recalled ") == 9
    found = out.split("query='Where does Alice work?')", 1)[1].split("What the group", 1)[0]
    assert "turn-6   Alice: Yes, Carol founded Globex in 2019, and I work there now." in found
    learned = out.split("learned about Alice, with windows", 1)[1]
    assert "2023-03-10 18:00 → 2023-08-01 Alice lives in Paris." in learned
    assert "2023-08-01 → now             Alice lives in Berlin." in learned


@pytest.mark.parametrize("name", ["openai_agents_tools.py", "pydantic_ai_tools.py"])
def test_the_agent_examples_remember_then_search_now_and_then(name: str) -> None:
    out = _run_example(name)
    assert "The agent called: remember, remember, remember, remember, search, search" in out
    now, then = out.split("Its answer:\nNow:\n", 1)[1].split("On 2023-06-01:\n")
    assert (
        "- Alice lives in Berlin. (valid 2023-08-01 → now; id " in now and "Alice lives in Paris." not in now
    )
    assert "- Alice lives in Paris. (valid 2023-03-10 18:00 → 2023-08-01; id " in then
    assert "Alice lives in Berlin." not in then
