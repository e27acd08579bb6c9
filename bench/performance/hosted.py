"""Hosted bench: the library and the server against a simulated hosted model at a provider's rate limits,
beside Graphiti on the same provider.

No hosted model is reachable from here, so a provider is simulated (``hosted_provider``: gpt-4o-mini's
published limits per usage tier, a latency model from published measurements, 500s and slow replies,
the scripted gold answers on the gold turns and plausible replies elsewhere; every assumption is
stated there and in the results' notes). Rows, per tier (``--tiers``), each on a fresh provider:

- ``single_group.sequential``: one group's history (LoCoMo turns, ``hosted_turns.history``), one
  episode after another: the first ``--single-turns`` turns of a 2,000-turn history (a sequential
  2,000 turns at the simulated latency takes hours; the figures say which prefix ran), then the gold
  sets, each in its own group, one after another;
- ``single_group.window`` (``--window N``, N its ``window_setting``): the same with up to N episodes of
  the group in flight (``WINDOW_OPTION``: ``IngestOptions.in_flight``, issue 60 part 2), each still
  committed in order; the sequential row sets it to 1 (the library's default runs 8);
- ``many_groups``: 100 groups of 20 turns and the gold sets' groups, all handed in at once;
- ``serve``: ``epigraph serve`` with 50 clients posting and searching (``hosted_serve``);
- ``graphiti``: graphiti-core on the same provider and a real Neo4j (``hosted_graphiti``; needs
  ``EPIGRAPH_NEO4J_URI``, e.g. under ``tools/neo4j/neo4jctl.py run``).

Figures per row (``<row>.<tier>.<key>``; ``hosted_figures``): messages per minute, the share of the
binding limit used, 429s seen and the client's retries, failed and lost episodes, accepted-to-done and
processing p50 / p95, tokens and dollars per 1,000 messages at gpt-4o-mini's list price, and on the
gold sets the ingest bench's quality keys (``quality_mismatches``: how many differ from ingest.json's).
Writes ``bench/results/hosted.json`` (merged: a run of some rows keeps the others)::

    python tools/neo4j/neo4jctl.py run --heap 1g -- python bench/performance/hosted.py \\
        --conversation ../shared/datasets/locomo/26.json --conversation ../shared/datasets/locomo/30.json \\
        --gold bench/data/locomo26_s1-3.json --gold bench/data/locomo30_s1-3.json
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import bench.performance.hosted_turns as turns
from bench.performance.hosted_graphiti import GRAPHITI_VERSION, MODES, SEMAPHORE, run_mode, setup
from bench.performance.hosted_provider import (
    CHAT_LATENCY,
    EMBED_LATENCY,
    ERROR_RATE,
    PRICE,
    TIERS,
    SimProvider,
    Tier,
)
from bench.performance.hosted_rows import library_row
from bench.performance.hosted_serve import SEEDED, serve_row
from bench.shared.gold import GoldSet, load_sets
from bench.shared.paths import RESULTS
from bench.shared.results import write_results
from epigraph.episodes.inputs import EpisodeInput
from epigraph.pipeline.options import IngestOptions

ROWS = ("single", "many", "serve", "graphiti")
MAX_IN_FLIGHT = {"tier1": 16, "tier2": 128}
"""``EPIGRAPH_LLM_MAX_IN_FLIGHT`` per tier: about the requests a second the limit allows times a call's
seconds, with room (tier 1: 500 RPM is 8 a second, ~1.2 s a call; tier 2: 83 a second)."""
WINDOW_OPTION = "in_flight"
"""Where in ``IngestOptions`` ``--window`` sets its N (a dotted path through the option groups): a
group's episodes in flight at once, committed in order (issue 60 part 2). Its rows are
``single_group.window`` with ``window_setting`` = N; the sequential rows set it to 1."""


@dataclasses.dataclass(frozen=True)
class Plan:
    material: turns.Material
    gold: list[GoldSet]
    golds: list[Path]
    conversations: list[Path]
    single_turns: int
    groups: int
    per_group: int
    cap_s: float
    window: int
    log: Path
    serve_clients: int
    serve_seconds: float
    graphiti_groups: int
    graphiti_per_group: int
    graphiti_cap_s: float
    graphiti_modes: list[str]


def options_for(window: int, option: str = WINDOW_OPTION) -> IngestOptions:
    """``IngestOptions`` with the setting at ``option`` (a dotted path through nested option groups,
    e.g. ``context.lookahead``) set to ``window``, or for 0 (the sequential rows) to 1: one episode at a
    time, which the library's default (8 in flight) is not. Refuses, saying what to set, while the
    setting does not exist."""

    def with_value(options: Any, path: list[str]) -> Any:
        names = {f.name for f in dataclasses.fields(options)} if dataclasses.is_dataclass(options) else set()
        if path[0] not in names:
            raise SystemExit(
                f"--window {window}: IngestOptions has no {option!r} yet (issue 60 part 2); set "
                "bench/performance/hosted.py's WINDOW_OPTION to the setting's dotted path once it exists"
            )
        value = max(1, window) if len(path) == 1 else with_value(getattr(options, path[0]), path[1:])
        return dataclasses.replace(options, **{path[0]: value})

    return cast(IngestOptions, with_value(IngestOptions(), option.split(".")))


async def run_library(
    name: str, plan: Plan, tier: Tier, phases: list[list[EpisodeInput]], options: IngestOptions | None
) -> dict[str, float]:
    with (
        tempfile.TemporaryDirectory(prefix=f"hosted-{name}-") as tmp,
        SimProvider(tier.name, plan.golds, plan.conversations, log=plan.log) as sim,
    ):
        started = time.monotonic()
        figures = await library_row(
            sim,
            tier,
            phases,
            plan.gold,
            max_in_flight=MAX_IN_FLIGHT[tier.name],
            cap_s=plan.cap_s,
            workdir=Path(tmp),
            options=options,
        )
    print(f"  {name}.{tier.name}: {time.monotonic() - started:.0f} s", flush=True)
    return figures


async def single_group(plan: Plan, tier: Tier) -> dict[str, float]:
    history = turns.history(plan.material, plan.single_turns, "history")
    gold = [turns.gold_items([g]) for g in plan.gold]  # each set a phase: one group at a time throughout
    row = "window" if plan.window else "sequential"
    figures = await run_library(f"single_group.{row}", plan, tier, [history, *gold], options_for(plan.window))
    figures["window_setting"] = float(plan.window)
    if figures["messages_per_min"]:  # what the whole 2,000-turn history would take at this row's pace
        figures["projected_2000_turns_h"] = round(2000 / figures["messages_per_min"] / 60, 2)
    return {f"single_group.{row}.{tier.name}.{k}": v for k, v in figures.items()}


async def many_groups(plan: Plan, tier: Tier) -> dict[str, float]:
    items = turns.groups(plan.material, plan.groups, plan.per_group) + turns.gold_items(plan.gold)
    figures = await run_library("many_groups", plan, tier, [items], None)
    return {f"many_groups.{tier.name}.{k}": v for k, v in figures.items()}


POSTS_PER_MIN = {"tier1": 150.0, "tier2": 900.0}
"""What the serve row's clients offer together: a little above what the many_groups row reached at the
tier (tier 1: 134.7 a minute at 181b912), so the row shows the server at its provider's limit while it
serves reads. At 90 a minute (the first run) the row could not pass 90 / 134.7 of the limit, whatever
the server did; offered more, the excess waits in the queue (accepted-to-done grows with it)."""
SERVE_GROUPS = {"tier1": 40, "tier2": 100}
"""Conversations the serve row's clients post to: a server runs each group's episodes in order, so its
throughput is about the groups in flight over an episode's seconds (8 groups held tier 2 to a
twentieth of its TPM; 40 groups at ~3 s an episode allow ~800 a minute, under tier 2's limit)."""


async def serve(plan: Plan, tier: Tier) -> dict[str, float]:
    items = turns.groups(plan.material, SERVE_GROUPS[tier.name], 400, prefix="serve")
    with (
        tempfile.TemporaryDirectory(prefix="hosted-serve-") as tmp,
        SimProvider(tier.name, embeddings="hash", log=plan.log) as sim,
    ):
        started = time.monotonic()
        figures = await serve_row(
            sim, tier, items, clients=plan.serve_clients, seconds=plan.serve_seconds,
            posts_per_min=POSTS_PER_MIN[tier.name], max_in_flight=MAX_IN_FLIGHT[tier.name], workdir=Path(tmp),
            drain_s=plan.cap_s,
        )  # fmt: skip
    print(f"  serve.{tier.name}: {time.monotonic() - started:.0f} s", flush=True)
    return {f"serve.{tier.name}.{k}": v for k, v in figures.items()}


def graphiti(plan: Plan, tier: Tier) -> dict[str, float]:
    if not os.environ.get("EPIGRAPH_NEO4J_URI"):
        raise SystemExit("the graphiti row needs Neo4j: run under tools/neo4j/neo4jctl.py run -- ...")
    items = turns.groups(plan.material, plan.graphiti_groups, plan.graphiti_per_group, prefix="g")
    out: dict[str, float] = {}
    for row in plan.graphiti_modes:
        with SimProvider(tier.name, log=plan.log) as sim:
            started = time.monotonic()
            figures = run_mode(sim, tier, row, items, plan.graphiti_cap_s, plan.log)
        print(f"  graphiti.{tier.name}.{row}: {time.monotonic() - started:.0f} s", flush=True)
        out.update({f"graphiti.{tier.name}.{row}.{k}": v for k, v in figures.items()})
    # the row's headline: Graphiti's plain add_episode, with its defaults
    headline = ("messages_per_min", "input_tokens_per_message", "output_tokens_per_message")
    headline += ("llm_calls_per_message", "http_429", "failed")
    plain = f"graphiti.{tier.name}.add_episode."
    out.update({f"graphiti.{tier.name}.{k}": out[plain + k] for k in headline if plain + k in out})
    return out


def ratios(metrics: dict[str, float]) -> dict[str, float]:
    """The bar: many_groups' messages per minute over Graphiti's, per tier, where both were measured."""
    out: dict[str, float] = {}
    for tier in TIERS:
        ours, theirs = (
            metrics.get(f"many_groups.{tier}.messages_per_min"),
            metrics.get(f"graphiti.{tier}.messages_per_min"),
        )
        if ours and theirs:
            out[f"many_groups_over_graphiti.{tier}.messages_per_min_ratio"] = round(ours / theirs, 2)
    return out


def notes(plan: Plan) -> list[str]:
    conversations = ", ".join(p.name for p in plan.conversations)
    limits = "; ".join(
        f"{t.name} {t.rpm} RPM / {t.tpm} TPM, embeddings {t.embed_rpm} RPM / {t.embed_tpm} TPM"
        for t in TIERS.values()
    )
    return [
        f"provider: simulated (bench/performance/hosted_provider.py); chat latency {CHAT_LATENCY}; "
        f"embedding latency {EMBED_LATENCY}; {ERROR_RATE:.1%} of requests answered 500",
        f"limits: {limits}; a request charged its characters / 4 plus its max_tokens, never refunded",
        f"price: gpt-4o-mini list price ${PRICE.input}/M input, ${PRICE.output}/M output, embeddings "
        f"${PRICE.embedding}/M (read {PRICE.read_on}); prompt caching not simulated",
        f"turns: {len(plan.material.turns)} LoCoMo turns ({conversations}) renamed and moved in time per "
        f"pass (bench/performance/hosted_turns.py); gold sets: {', '.join(g.name for g in plan.gold)}",
        f"single_group: the first {plan.single_turns} turns of the 2,000-turn history, one after another, "
        "then the gold sets one after another",
        f"many_groups: {plan.groups} groups of {plan.per_group} turns and the gold sets' groups, at once",
        "client: KnowledgeGraph with EPIGRAPH_LLM_RPM/TPM at the tier's limits, "
        f"EPIGRAPH_LLM_MAX_IN_FLIGHT {MAX_IN_FLIGHT}",
        "limit_share: of what the provider allowed from the row's first request to 90% of its messages done",
        f"serve: epigraph serve, {plan.serve_clients} clients for {plan.serve_seconds:.0f} s posting and "
        f"reading (bench/performance/hosted_serve.py), {SERVE_GROUPS} groups seeded with {SEEDED} turns "
        f"each, posts offered {POSTS_PER_MIN} a minute",
        f"graphiti: graphiti-core {GRAPHITI_VERSION} (.bench-venv/graphiti), OpenAIGenericClient, "
        f"OpenAIEmbedder, Neo4j 5.26 (tools/neo4j); SEMAPHORE_LIMIT {SEMAPHORE} (its MCP README's Tier 1: "
        f"1-2, Tier 2: 5-8); {plan.graphiti_groups} groups of {plan.graphiti_per_group} turns at once, each "
        f"mode capped at {plan.graphiti_cap_s:.0f} s; graphiti.<tier>.<key> without a mode is add_episode "
        "with its defaults",
    ]


def previous(results_dir: Path | None) -> dict[str, float]:
    """The metrics of the results file this run merges into (the other rows' figures)."""
    path = (results_dir or RESULTS) / "hosted.json"
    try:
        return dict(json.loads(path.read_text(encoding="utf-8"))["metrics"])
    except (OSError, ValueError, KeyError):
        return {}


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--conversation", type=Path, action="append", default=[], help="a LoCoMo conversation"
    )
    parser.add_argument("--gold", type=Path, action="append", default=[], help="a gold set (repeatable)")
    parser.add_argument("--tiers", nargs="+", choices=sorted(TIERS), default=sorted(TIERS))
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    parser.add_argument("--single-turns", type=int, default=240, help="single_group: the history's prefix")
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--per-group", type=int, default=20)
    parser.add_argument("--cap-s", type=float, default=2400.0, help="each row stops after this long")
    parser.add_argument("--window", type=int, default=0, help="single_group: episodes extracted ahead")
    parser.add_argument("--serve-clients", type=int, default=50)
    parser.add_argument("--serve-seconds", type=float, default=180.0)
    parser.add_argument("--graphiti-groups", type=int, default=10)
    parser.add_argument("--graphiti-per-group", type=int, default=10)
    parser.add_argument(
        "--graphiti-cap-s", type=float, default=600.0, help="each Graphiti mode stops after this long"
    )
    parser.add_argument("--graphiti-modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--results-dir", type=Path, default=None)
    parser.add_argument(
        "--setup-graphiti", action="store_true", help="make the Graphiti venv (pinned graphiti-core) and stop"
    )
    args = parser.parse_args(argv)
    options_for(args.window)  # an unknown window setting refuses before any row runs
    if args.setup_graphiti:
        print(setup())
        return
    if not args.conversation:
        parser.error("--conversation: at least one LoCoMo conversation")
    folder = args.conversation[0].parent
    gold = load_sets(args.gold, [folder]) if args.gold else []
    log = Path(tempfile.gettempdir()) / "hosted-bench-sim.log"
    plan = Plan(
        turns.load(args.conversation),
        gold,
        args.gold,
        [folder],
        args.single_turns,
        args.groups,
        args.per_group,
        args.cap_s,
        args.window,
        log,
        args.serve_clients,
        args.serve_seconds,
        args.graphiti_groups,
        args.graphiti_per_group,
        args.graphiti_cap_s,
        args.graphiti_modes,
    )
    metrics: dict[str, float] = {}
    for name in args.tiers:
        tier = TIERS[name]
        if "single" in args.rows:
            metrics.update(await single_group(plan, tier))
        if "many" in args.rows:
            metrics.update(await many_groups(plan, tier))
        if "serve" in args.rows:
            metrics.update(await serve(plan, tier))
        if "graphiti" in args.rows:
            metrics.update(graphiti(plan, tier))
    metrics.update(ratios({**previous(args.results_dir), **metrics}))
    for key in sorted(metrics):
        print(f"{key:70} {metrics[key]}")
    print(f"wrote {write_results('hosted', metrics, notes(plan), results_dir=args.results_dir, merge=True)}")


if __name__ == "__main__":
    asyncio.run(main())
