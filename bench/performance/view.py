"""View bench: how big a graph the interactive view takes, in headless Chromium.

How big a graph the interactive view takes: page size, time to first picture, time to re-draw at
another moment, time to expand a node, in headless Chromium (Debian's, under Playwright).

    python -m bench view          # prints a table, writes bench/results/view.json

Synthetic graphs: people in a few clusters, each fact retired by a later one one time in three (so the
slider has history to move through), half of the facts drawn and half embedded for "expand" (the
default bounds of `kg.subgraph` are 200 drawn + 150 embedded). Times come from the page itself
(`performance.now()`): "ready" is navigation start to the end of the first layout; a slider move is
`setTime` (time filter + classes; Cytoscape paints on the next frame).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.shared.results import write_results
from docs.screenshots import SIZE, browser
from epigraph.explore import GraphView
from epigraph.graph.model import Entity, Fact, Invalidation

SIZES = (50, 350, 1000)
T0 = datetime(2020, 1, 1, tzinfo=UTC)


def synthetic(facts: int) -> GraphView:
    """``facts`` facts among ~facts/3 entities of 4 types; every third fact is retired by the next."""
    types = ("Person", "Place", "Company", "School")
    people = [Entity(group_id="g", name=f"E{i}", labels=[types[i % 4]]) for i in range(max(4, facts // 3))]
    made: list[Fact] = []
    for i in range(facts):
        a, b = people[i % len(people)], people[(i * 7 + 1) % len(people)]
        start = T0 + timedelta(days=10 * i)
        text = f"{a.name} relates to {b.name} ({i})."
        fact = Fact(group_id="g", source_uuid=a.uuid, target_uuid=b.uuid, relation=f"R{i % 5}", text=text,
                    valid_at=start, created_at=start)  # fmt: skip
        if i % 3 == 0 and made:
            newer = made[-1]
            fact = fact.model_copy(update={
                "invalid_at": start + timedelta(days=5), "expired_at": start + timedelta(days=6),
                "invalidated_by": Invalidation(fact_uuid=newer.uuid, episode_uuid="e")})  # fmt: skip
        made.append(fact)
    shown = frozenset(f.uuid for f in made[: facts // 2])
    mentions = {e.uuid: (i % 9) + 1 for i, e in enumerate(people)}
    return GraphView({e.uuid: e for e in people}, tuple(made), shown, (people[0].uuid,), mentions=mentions)


def measure(page: Any, view: GraphView, out: Path) -> dict[str, float]:
    path = view.save(out / f"view-{len(view.facts)}.html")
    page.goto(path.as_uri(), wait_until="commit")
    page.wait_for_function("window.epigraph && window.epigraph.ready", timeout=300_000)
    moves = page.evaluate(
        """() => { const ep = window.epigraph, m = ep.state.moments, out = [];
        for (let i = 0; i < 11; i++) { const t0 = performance.now();
          ep.setTime(m[Math.floor((i * (m.length - 1)) / 10)]); out.push(performance.now() - t0); }
        return out; }"""
    )
    expand = page.evaluate(
        """() => { const ep = window.epigraph, t0 = performance.now();
        return ep.expand(ep.model.focus[0]).then(() => performance.now() - t0); }"""
    )
    return {
        "html_kb": round(path.stat().st_size / 1024, 1),
        "ready_ms": round(page.evaluate("window.epigraph.readyMs"), 1),
        "script_ms": round(page.evaluate("window.epigraph.scriptMs"), 1),
        "slider_move_p50_ms": round(statistics.median(moves), 2),
        "slider_move_max_ms": round(max(moves), 2),
        "expand_ms": round(expand, 1),
        "drawn_edges": page.evaluate("window.epigraph.cy.edges().length"),
    }


def main(argv: Sequence[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)  # no options: --help
    load = os.getloadavg()[0]
    metrics: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, browser() as chrome:
        page = chrome.new_page(viewport=SIZE)
        print(f"{'facts':>6} {'html kB':>8} {'ready ms':>9} {'move p50':>9} {'move max':>9} {'expand':>8}")
        for n in SIZES:
            row = measure(page, synthetic(n), Path(tmp))
            metrics.update({f"facts_{n}.{k}": v for k, v in row.items()})
            print(f"{n:>6} {row['html_kb']:>8} {row['ready_ms']:>9} {row['slider_move_p50_ms']:>9} "
                  f"{row['slider_move_max_ms']:>9} {row['expand_ms']:>8}")  # fmt: skip
    notes = [
        "input: synthetic graphs, every third fact retired by the one before it, half drawn, half embedded",
        "ready: navigation start to the end of the first layout (concentric, then cose), in the page; "
        "script: our script's share of it (data, page, layout, first filter)",
        "slider move: setTime (temporal filter and classes); Cytoscape paints on the next frame",
        "browser: Debian's chromium, headless, under Playwright; on a shared 2-core machine",
        f"load average at the start: {load:.1f} (other programs shared the 2 cores; times scale with it)",
    ]
    print("wrote", write_results("view", metrics, notes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
