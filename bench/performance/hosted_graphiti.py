"""The hosted bench's Graphiti row: graphiti-core on the same simulated provider (latency and limits) and a
real Neo4j (``tools/neo4j``), both ``add_episode`` and ``add_episode_bulk``.

graphiti-core is pinned (``GRAPHITI_VERSION``) in a virtual environment of its own, ``.bench-venv/graphiti``
(its dependencies never meet ours), made on first use or by hand::

    python -m bench hosted --setup-graphiti  # python -m venv .bench-venv/graphiti, pip install

The row hands ``hosted_graphiti_child`` a job and reads its answer; the provider's own counters give the
calls, tokens and 429s (Graphiti's OpenAI-compatible client keeps no token count). Concurrency is Graphiti's
``max_coroutines`` (its SEMAPHORE_LIMIT) at the upper end of what its MCP server's README recommends per
OpenAI tier (``SEMAPHORE``: "Tier 1: 1-2, Tier 2: 5-8"), every group at once, each group's episodes in
order (``add_episode``) or in one call (``add_episode_bulk``), as its README asks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.performance.hosted_figures import latencies, refused
from bench.performance.hosted_provider import (
    API_KEY,
    CHAT_MODEL,
    EMBED_DIM,
    EMBED_MODEL,
    PRICE,
    SimProvider,
    Tier,
)
from bench.shared.paths import ROOT
from epigraph.episodes.inputs import EpisodeInput

VENV = ROOT / ".bench-venv" / "graphiti"
GRAPHITI_VERSION = "0.31.2"
PINS = (f"graphiti-core=={GRAPHITI_VERSION}", "openai==2.32.0")
"""openai as in Graphiti's own ``uv.lock``: graphiti-core 0.31.2 imports ``httpx``, which openai 3.x no
longer brings (it uses ``httpx2``), so with pip's newest openai it fails at import."""
SEMAPHORE = {"tier1": 2, "tier2": 8}
MODES = {
    "add_episode": ("add_episode", None),
    "add_episode_bulk": ("add_episode_bulk", None),
    "add_episode_max_tokens_2048": ("add_episode", 2048),
    "add_episode_bulk_max_tokens_2048": ("add_episode_bulk", 2048),
}
"""Row name -> (Graphiti's method, the client's output cap: None is its default, 16,384). The last is a
user who lowers the cap, because the provider charges it against the tokens per minute."""


def python() -> Path:
    return VENV / "bin" / "python"


def setup() -> Path:
    """The Graphiti venv's Python, made (and graphiti-core installed, pinned) unless it is there."""
    if not python().exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    versions = "import importlib.metadata as m; print(m.version('graphiti-core'), m.version('openai'))"
    check = subprocess.run([str(python()), "-c", versions], capture_output=True, text=True, check=False)
    if check.stdout.split() != [p.split("==")[1] for p in PINS]:
        subprocess.run([str(python()), "-m", "pip", "install", "-q", *PINS], check=True)
    return python()


def job(
    sim: SimProvider, tier: Tier, row: str, items: Sequence[EpisodeInput], cap_s: float
) -> dict[str, Any]:
    mode, max_tokens = MODES[row]
    groups: dict[str, list[dict[str, str]]] = {}
    for item in items:
        groups.setdefault(f"{row.replace('_', '-')}-{item.group_id}", []).append(
            {"speaker": item.speaker or "", "text": item.content, "time": item.reference_time.isoformat()}
        )
    return {
        "url": sim.url,
        "api_key": API_KEY,
        "model": CHAT_MODEL,
        "embed_model": EMBED_MODEL,
        "embed_dim": EMBED_DIM,
        "neo4j_uri": os.environ["EPIGRAPH_NEO4J_URI"],
        "neo4j_user": os.environ.get("EPIGRAPH_NEO4J_USER"),
        "neo4j_password": os.environ.get("EPIGRAPH_NEO4J_PASSWORD"),
        "semaphore": SEMAPHORE[tier.name],
        "mode": mode,
        "max_tokens": max_tokens,
        "groups": groups,
        "cap_s": cap_s,
    }


def run_mode(
    sim: SimProvider, tier: Tier, row: str, items: Sequence[EpisodeInput], cap_s: float, log: Path
) -> dict[str, float]:
    """One row of ``MODES`` on a provider of its own; its figures."""
    with log.open("a") as err:
        answer = subprocess.run(
            [str(setup()), str(Path(__file__).with_name("hosted_graphiti_child.py"))],
            input=json.dumps(job(sim, tier, row, items, cap_s)),
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            check=True,
            timeout=cap_s + 600,
        )
    result = json.loads(answer.stdout.strip().splitlines()[-1])
    stats = sim.stats()
    usage = stats["usage"].get("graphiti", {"calls": 0, "input_tokens": 0, "output_tokens": 0})
    done = result["done_at"]
    wall = (max(done) if done else result["finished"]) - result["started"]
    finished = len(done) + result["failed"]  # a failed episode spent its calls too
    count = finished or 1
    figures: dict[str, float] = {
        "messages": float(result["messages"]),
        "done": float(len(done)),
        "failed": float(result["failed"]),
        "failed_rate_limited": float(result["failed_rate_limited"]),
        "cut_by_time_cap": float(result["messages"] - len(done) - result["failed"]) if result["cut"] else 0.0,
        "wall_s": round(wall, 1),
        "messages_per_min": round(len(done) / wall * 60, 3) if wall > 0 else 0.0,
        "http_429": float(refused(stats)),
        "llm_calls": float(usage["calls"]),
        "input_tokens": float(usage["input_tokens"]),
        "output_tokens": float(usage["output_tokens"]),
        "semaphore_limit": float(SEMAPHORE[tier.name]),
    }
    if finished:  # per message only over episodes that ended (none did when the cap cut every call)
        charged = sum(a[1] for a in stats["chat"]["admissions"])
        figures |= {
            "llm_calls_per_message": round(usage["calls"] / count, 2),
            "input_tokens_per_message": round(usage["input_tokens"] / count),
            "output_tokens_per_message": round(usage["output_tokens"] / count),
            "charged_tokens_per_message": round(charged / count),
            "dollars_per_1k_messages": round(
                PRICE.dollars(usage["input_tokens"], usage["output_tokens"]) / count * 1000, 4
            ),
        }
    figures.update(latencies("processing", result["durations"]))
    for failure in result["failures"]:
        print(f"    graphiti {row}: {failure}", flush=True)
    return figures
