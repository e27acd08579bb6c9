"""Live benchmark: the ingest bench's gold comparison with a REAL model instead of scripted answers.

LoCoMo turns (conversation 26 sessions 1-3, and every other ``--gold`` set) go through
``Ingestor.ingest`` in both extraction modes (separate prompts, one combined prompt), each mode into a
fresh in-memory embedded store, with the real embedder (all-MiniLM-L6-v2). The built graph is compared
with the hand-made gold graph, and every model call is recorded (prompt, tokens evaluated vs reused
from the server's prompt cache, seconds, re-asks). Written to ``bench/results/live.json``.

By default it runs a SLICE: session 1 of each gold set (18 turns of conversation 26), because the local
1.5B model on 2 cores takes tens of seconds per episode; ``--full`` runs every session of the gold set.
The model is the bundled local one (started, or reused, like ``epigraph model start``), or any
OpenAI-compatible endpoint::

    python -m bench live                          # local model, session 1 of LoCoMo 26
    python -m bench live --full --gold ../shared/datasets/locomo/annotations/locomo26_s1-3.json \\
        --gold bench/data/locomo30_s1-3.json
    python -m bench live --base-url https://api.openai.com/v1 --model gpt-4o-mini --api-key $KEY \\
        --structured json_schema
    python -m bench live --replay replies.jsonl   # a saved run's replies again, no model (live_replay)
    python -m bench live --profile full           # the local model with IngestOptions() (full.* keys)

How the graph is compared (pure functions in ``live_metrics``): a gold entity is found when a built
entity has its name or alias, or the same content words (``entity_recall``; ``entity_recall_exact``
needs the exact name); a built entity is correct when it matches a gold one the same way
(``entity_precision``); a gold fact is recalled when a built fact joins the same two entities
(``fact_recall_endpoints``) or says the same thing (MiniLM cosine of the sentences >= ``--threshold``,
``fact_recall_meaning``); ``fact_recall`` is either. A gold contradiction is applied when the fact
matched to the earlier statement was retired by the fact matched to the later one; a gold
restatement (``duplicate_of``) is merged when the built fact matched to the first statement also lists
the restating turn's episode (``restatements_merged`` of ``restatements_expected``); a built fact
matched to a gold fact that has a start starts right when its own date, else the time it was said,
agrees with it at the coarser precision of the two (``fact_dates_right`` of ``fact_dates_checked``).

What a reader of the built graph sees (``reading``, ``readable``): ``fact_precision`` (built facts
matching some statement of a gold fact by ends or meaning), ``facts_readable`` (built facts whose
sentence names both ends, repeats no word sequence, ends on a complete clause and takes most of its
content words from its message or the speakers' names; ``unreadable.<check>`` counts each failure, and
``--show-graph`` marks every unreadable fact with the checks it failed), ``owner_right`` (what is given
to a speaker given to the right one, of ``owners_checked``), and the summary check
(``summary_fact_recall`` over the gold entities with three gold facts or more, ``summaries_checked``;
``summary_sentences_unsupported``: the share of their summaries' sentences that state no built fact).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from bench.quality.live_calls import cut_by_cap, kept_output_tokens, recording, reply_rows, stopped_early
from bench.quality.live_metrics import built_graph, graph_quality
from bench.quality.live_replay import recorded_turns, replay_file, replayed
from bench.quality.reading import facts_readable
from bench.shared.gold import GoldSet, load_sets, merged_aliases
from bench.shared.paths import DATASETS
from bench.shared.results import write_results
from epigraph.config import Settings
from epigraph.embed import Embedder, SentenceTransformerEmbedder
from epigraph.episodes.events import EpisodeDone, EpisodeFailed, EpisodeResult, EpisodeUpdated
from epigraph.episodes.inputs import EpisodeInput
from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import to_utc
from epigraph.ingestion.ingestor import Ingestor
from epigraph.llm import EndpointProfile, OpenAIChat
from epigraph.llm.profiles import local_model_profile
from epigraph.pipeline.metering import CallRecord
from epigraph.pipeline.names.tagging import thing_check
from epigraph.pipeline.options import SMALL_MODEL_RETIRE_ALL_GUARD, IngestOptions, small_model_options
from epigraph.prompts.protocol import LLM
from epigraph.testing import HashEmbedder

DEFAULT_GOLD = DATASETS / "annotations" / "locomo26_s1-3.json"
MODES = ("separate", "combined", "bulk")
DEFAULT = "default"
"""The prefix of the copies of the keys of the mode the local model ingests with by default."""


@dataclass
class Endpoint:
    base_url: str
    model: str
    api_key: str
    profile: EndpointProfile
    described: str


@dataclass
class ModeRun:
    results: list[EpisodeResult]
    failed: int
    wall_s: float
    quality: dict[str, float]
    calls: list[CallRecord]
    ends: list[tuple[int, str]]
    """(calls recorded when each episode ended, its text)"""


def local_endpoint(context: int) -> Endpoint:
    """The bundled local model, started now unless one is running (``epigraph model start``)."""
    from epigraph.local_model import API_KEY, MODEL_NAME, LocalModel

    state, started = LocalModel(Settings.from_env()).ensure_running(detach=True)
    how = "started" if started else "reused"
    return Endpoint(
        state.base_url,
        MODEL_NAME,
        API_KEY,
        replace(local_model_profile(context), grammar=True),
        f"local {MODEL_NAME} (Q4_K_M GGUF, llama.cpp via xllamacpp, {how}) at {state.base_url}",
    )


Snapshot = Callable[[ModeRun], None]


async def run_mode(
    gold_set: GoldSet,
    turns: int | None,
    mode: str,
    endpoint: Endpoint,
    embedder: Embedder,
    args: Any,
    snapshot: Snapshot,
) -> ModeRun:
    """Ingest the turns in one mode; ``snapshot`` gets the run so far after every episode (a slow model
    may not finish in the time there is: what it did is written as it goes)."""
    chat: LLM
    if args.replay:
        chat = replayed(replay_file(args.replay, f"{profile_tag(args)}{gold_set.name}", mode))
    else:
        chat = OpenAIChat(
            model=endpoint.model,
            base_url=endpoint.base_url,
            api_key=endpoint.api_key,
            max_tokens=args.max_tokens,
            timeout=args.timeout,
            profile=endpoint.profile,
        )
    llm = recording(chat)
    chosen = gold_set.turns if turns is None else gold_set.turns[:turns]
    items = [
        EpisodeInput(
            content=t.text, speaker=t.speaker, reference_time=to_utc(t.reference_time), group_id=gold_set.name
        )
        for t in chosen
    ]
    results: dict[str, EpisodeResult] = {}
    failed, ends = 0, []
    run: ModeRun | None = None
    async with AsyncExitStack() as stack:
        if isinstance(chat, OpenAIChat):
            await stack.enter_async_context(chat)
        store = await stack.enter_async_context(EmbeddedStore(":memory:"))
        await store.setup(embedder.dim)
        base = IngestOptions() if args.profile == "full" else small_model_options()
        guarded = replace(base.facts, retire_all_guard=args.retire_all_guard)
        options = with_options(replace(base, mode=mode, facts=guarded), args.option)  # type: ignore[arg-type]
        ingestor = Ingestor(store, llm, embedder, options)
        started = time.perf_counter()

        async def so_far() -> ModeRun:
            done = list(results.values())
            ran = chosen[: len(ends)]
            quality = await graph_quality(store, gold_set, ran, done, embedder, args.threshold)
            quality["aliases_merged"] = len(await merged_aliases(store, gold_set.name, gold_set.gold))
            wall = time.perf_counter() - started
            return ModeRun(done, failed, wall, quality, list(llm.records), list(ends))

        async for event in ingestor.ingest(items):
            if isinstance(event, EpisodeDone | EpisodeUpdated | EpisodeFailed) and event.result is not None:
                results[event.result.episode.uuid] = event.result
            if isinstance(event, EpisodeFailed):
                failed += 1
                print(f"  {mode} episode {event.index + 1} FAILED: {event.error}", flush=True)
            elif isinstance(event, EpisodeDone) and event.result is not None:
                _progress(mode, event.index, len(items), event.result, time.perf_counter() - started)
            if isinstance(event, EpisodeDone | EpisodeFailed):
                ends.append((len(llm.records), chosen[event.index].text))
                if len(ends) < len(items):
                    snapshot(await so_far())
        run = await so_far()
        if args.show_graph:
            await _show_graph(store, gold_set, chosen, run)
    return run


async def _show_graph(store: EmbeddedStore, gold_set: GoldSet, turns: Sequence[Any], run: ModeRun) -> None:
    """The built graph beside the gold entities of the turns that ran (for looking, not for figures)."""
    built = await built_graph(store, gold_set.name, run.results)
    gold = sorted(
        {e["name"] for t in turns for e in gold_set.gold["turns"].get(t.dia_id, {}).get("entities", [])}
    )
    print("  gold entities:", "; ".join(gold))
    print("  built entities:", "; ".join(sorted(e.name for e in built.entities.values())))
    texts = {f.uuid: f.text for f in built.facts}
    message_of = {r.episode.uuid: r.episode.content for r in run.results}
    _, unreadable = facts_readable(built.facts, built.names, message_of, gold_set.gold.get("speakers", []))
    failed = {fact.uuid: checks for fact, checks in unreadable}
    for fact in built.facts:
        by = fact.invalidated_by
        retired = f" (retired by: {texts.get(by.fact_uuid, by.fact_uuid)})" if by is not None else ""
        reads = f" UNREADABLE: {', '.join(failed[fact.uuid])}" if fact.uuid in failed else ""
        ends = f"{built.names(fact.source_uuid)[0]} -> {built.names(fact.target_uuid)[0]}"
        when = fact.valid_at and fact.valid_at.date()
        print(f"  fact: {fact.text} [{fact.relation}: {ends}] {when}{retired}{reads}")
    for entity in built.entities.values():
        if entity.summary:
            print(f"  summary of {entity.name}: {entity.summary}")


def _progress(mode: str, index: int, total: int, result: EpisodeResult, elapsed: float) -> None:
    report = result.report
    print(
        f"  {mode} {index + 1}/{total}: {report.llm_calls} calls, {report.input_tokens} in / "
        f"{report.output_tokens} out tokens, {len(result.entities)} entities, {len(result.facts)} facts, "
        f"{report.dropped_lines} dropped{' CUT SHORT' if report.truncated else ''} ({elapsed:.0f} s so far)",
        flush=True,
    )


def mode_metrics(run: ModeRun) -> dict[str, float]:
    reports = [r.report for r in run.results]
    episodes = max(1, len(run.results))
    calls = run.calls
    evaluated = sum(c.input_tokens - c.cached_input_tokens for c in calls)
    return {
        **run.quality,
        "dropped_lines": sum(r.dropped_lines for r in reports),
        "truncated_replies": sum(cut_by_cap(c) for c in calls),
        "stopped_replies": sum(stopped_early(c) for c in calls),
        "hallucinations_dropped": sum(w.count("hallucinated") for r in reports for w in r.warnings),
        "reasks": sum(c.followup for c in calls),
        "failed_episodes": run.failed,
        "episodes": len(run.ends),
        "calls_mean": round(sum(r.llm_calls for r in reports) / episodes, 3),
        "input_tokens_mean": round(sum(r.input_tokens for r in reports) / episodes, 1),
        "output_tokens_mean": round(sum(r.output_tokens for r in reports) / episodes, 1),
        "cached_input_tokens_mean": round(sum(c.cached_input_tokens for c in calls) / episodes, 1),
        "evaluated_input_tokens_mean": round(evaluated / episodes, 1),
        "seconds_per_episode": round(run.wall_s / episodes, 2),
        "seconds_per_episode_max": round(
            max((sum(r.stage_ms.values()) for r in reports), default=0) / 1000, 2
        ),
        "warnings": sum(len(r.warnings) for r in reports),
    }


def prompt_metrics(run: ModeRun) -> dict[str, float]:
    """Where the time goes, per prompt: calls, prompt tokens evaluated vs reused from the server's cache,
    tokens generated vs tokens of the lines the graph kept, replies cut short, seconds."""
    out: dict[str, float] = {}
    kept = kept_output_tokens(run.calls, run.results)
    for name in sorted({c.prompt for c in run.calls}):
        calls = [(i, c) for i, c in enumerate(run.calls) if c.prompt == name]
        seconds = [c.finished - c.started for _, c in calls]
        out.update(
            {
                f"prompts.{name}.calls": len(calls),
                f"prompts.{name}.input_tokens": sum(c.input_tokens for _, c in calls),
                f"prompts.{name}.cached_tokens": sum(c.cached_input_tokens for _, c in calls),
                f"prompts.{name}.evaluated_tokens": sum(
                    c.input_tokens - c.cached_input_tokens for _, c in calls
                ),
                f"prompts.{name}.output_tokens": sum(c.output_tokens for _, c in calls),
                f"prompts.{name}.kept_output_tokens": round(sum(kept[i] for i, _ in calls)),
                f"prompts.{name}.cut_replies": sum(cut_by_cap(c) for _, c in calls),
                f"prompts.{name}.stopped_replies": sum(stopped_early(c) for _, c in calls),
                f"prompts.{name}.seconds": round(sum(seconds), 1),
                f"prompts.{name}.seconds_per_call": round(sum(seconds) / len(calls), 2),
                f"prompts.{name}.seconds_max": round(max(seconds), 1),
            }
        )
    return out


PROMPT_COLUMNS = (
    ("calls", "calls"),
    ("input_tokens", "in"),
    ("cached_tokens", "cached"),
    ("evaluated_tokens", "evaluated"),
    ("output_tokens", "out"),
    ("kept_output_tokens", "kept out"),
    ("cut_replies", "cut"),
    ("stopped_replies", "stopped"),
    ("seconds", "s"),
    ("seconds_per_call", "s/call"),
)


def print_prompt_table(metrics: dict[str, float], prefix: str, episodes: int) -> None:
    """The per-prompt table of one mode: where its time went."""
    names = sorted({k[len(prefix) :].split(".")[1] for k in metrics if k.startswith(prefix + "prompts.")})
    print(f"\n{prefix.rstrip('.')} ({episodes} episodes)")
    print(f"{'prompt':20}" + "".join(f"{label:>10}" for _, label in PROMPT_COLUMNS))
    for name in names:
        cells = [metrics.get(f"{prefix}prompts.{name}.{key}", "") for key, _ in PROMPT_COLUMNS]
        print(f"{name:20}" + "".join(f"{cell!s:>10}" for cell in cells))


def print_table(metrics: dict[str, float], prefix: str) -> None:
    rows = sorted({k.split(".", 2)[2] for k in metrics if k.startswith(prefix) and k.count(".") >= 2})
    rows = [r for r in rows if not r.startswith("prompts.")]
    print(f"\n{prefix.rstrip('.'):32}" + "".join(f"{mode:>10}" for mode in MODES))
    for key in rows:
        values = [metrics.get(f"{prefix}{mode}.{key}", "") for mode in MODES]
        print(f"{key:32}" + "".join(f"{v!s:>10}" for v in values))


def default_copies(metrics: dict[str, float], mode: str, prefix: str = "") -> dict[str, float]:
    """``<prefix>default.<key>`` for each ``<prefix><mode>.<key>`` of the default mode (the first set's
    keys are unprefixed, a later set's carry its name: ``locomo30.default.fact_recall``)."""
    lead = f"{prefix}{mode}."
    return {f"{prefix}{DEFAULT}.{k[len(lead) :]}": v for k, v in metrics.items() if k.startswith(lead)}


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, action="append", help="a gold set (more than once: several)")
    parser.add_argument("--conversation", type=Path, action="append", help="its conversation, or a folder")
    parser.add_argument("--full", action="store_true", help="every session of each gold set (slow)")
    parser.add_argument("--turns", type=int, help="only the first N turns of each set (a smoke run)")
    parser.add_argument("--modes", default=",".join(MODES), help="separate,combined,bulk")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: the local model)")
    parser.add_argument("--model", default="local", help="model name at --base-url")
    parser.add_argument("--api-key", default="not-needed")
    parser.add_argument("--structured", default="json_schema", choices=("json_schema", "json_object", "none"))
    parser.add_argument("--grammar", action="store_true", help="the endpoint accepts a GBNF grammar field")
    parser.add_argument("--context", type=int, default=8192, help="the local model's context size")
    parser.add_argument("--max-tokens", type=int, default=4096, help="the client's output ceiling")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--threshold", type=float, default=0.7, help="MiniLM cosine for a fact match")
    parser.add_argument(
        "--retire-all-guard",
        type=int,
        help=f"FactOptions.retire_all_guard ({SMALL_MODEL_RETIRE_ALL_GUARD} on the local model, else 0)",
    )
    parser.add_argument("--results-dir", type=Path)
    parser.add_argument("--save-replies", type=Path, help="write every model reply here (JSON Lines)")
    parser.add_argument("--replay", type=Path, help="answer with the replies --save-replies wrote (no model)")
    parser.add_argument("--note", action="append", default=[], help="a note for the results (repeatable)")
    parser.add_argument("--embedder", default="minilm", choices=("minilm", "hash"), help="hash: tests only")
    parser.add_argument("--show-graph", action="store_true", help="print the built graph after each mode")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        help="an IngestOptions field, GROUP.NAME=VALUE (facts.resolve=true; repeatable)",
    )
    parser.add_argument(
        "--profile",
        choices=("small", "full"),
        help="the options: small (small_model_options, the local model's default) or full (IngestOptions(): "
        "resolve and retire on, as a larger model runs it; an --base-url's default). Given as full, the "
        "keys are written as full.* beside the others and the replies as <save>.full.<set>.<mode>.jsonl",
    )
    args = parser.parse_args(argv)
    args.explicit_profile = args.profile
    if args.profile is None:
        args.profile = "full" if args.base_url else "small"
    if args.retire_all_guard is None:  # the small profile refuses blanket retirements (for_small_model)
        args.retire_all_guard = 0 if args.profile == "full" else SMALL_MODEL_RETIRE_ALL_GUARD
    golds = args.gold or [DEFAULT_GOLD]
    sets = load_sets(golds, args.conversation or [DATASETS])
    bench = "live_replay" if args.replay else "live"  # a replay never writes over the live figures
    if args.replay:
        endpoint = Endpoint("", "replay", "", EndpointProfile(), f"the replies recorded in {args.replay}")
    elif args.base_url:
        profile = EndpointProfile(structured=args.structured, grammar=args.grammar)
        endpoint = Endpoint(
            args.base_url, args.model, args.api_key, profile, f"{args.model} at {args.base_url}"
        )
    else:
        endpoint = local_endpoint(args.context)
    embedder: Embedder = SentenceTransformerEmbedder() if args.embedder == "minilm" else HashEmbedder()
    metrics: dict[str, float] = {}
    merge = bool(profile_tag(args))  # the full.* keys are written beside the small profile's
    default_mode = small_model_options().mode
    notes = [
        f"model: {endpoint.described}; profile {endpoint.profile}",
        *args.note,
        f"embedder: {args.embedder}",
        f"default: the keys of {default_mode} mode, the mode EPIGRAPH_LLM=local ingests with "
        "(pipeline.options.small_model_options)",
        f"options: the {args.profile} profile ("
        + ("IngestOptions(): resolve and retire on" if args.profile == "full" else "small_model_options()")
        + (", keys full.*" if profile_tag(args) else "")
        + "".join(f", --option {pair}" for pair in args.option)
        + ")",
        f"retire_all_guard: {args.retire_all_guard} (a decision retiring every candidate shown, when at "
        "least that many were, retires none; 0: off)",
        f"fact match: same endpoint pair, or MiniLM cosine of the sentences >= {args.threshold}",
        "entity match: same normalized name or alias, or the same content words",
        "cached input tokens: prompt tokens the server reused from its prompt cache (usage."
        "prompt_tokens_details.cached_tokens); evaluated = input - cached",
    ]
    for number, gold_set in enumerate(sets):
        turns = _slice(gold_set, args)
        prefix = profile_tag(args) + ("" if number == 0 else f"{gold_set.name}.")
        shown = len(gold_set.turns) if turns is None else turns
        notes.append(f"{gold_set.name}: {_describe(gold_set, turns, args.full)}")
        for mode in args.modes.split(","):
            if args.replay:  # the turns the recorded run ingested
                turns = shown = recorded_turns(
                    replay_file(args.replay, f"{profile_tag(args)}{gold_set.name}", mode)
                )
            print(f"{gold_set.name} {mode}: {shown} turns on {endpoint.described}", flush=True)

            def record(run: ModeRun, name: str = gold_set.name, mode: str = mode, pre: str = prefix) -> None:
                metrics.update({f"{pre}{mode}.{k}": v for k, v in mode_metrics(run).items()})
                metrics.update({f"{pre}{mode}.{k}": v for k, v in prompt_metrics(run).items()})
                if mode == default_mode:
                    metrics.update(default_copies(metrics, mode, pre))
                if args.save_replies:
                    path = replay_file(args.save_replies, f"{profile_tag(args)}{name}", mode)
                    rows = [json.dumps(r) for r in reply_rows(run.calls, run.ends)]
                    path.write_text("".join(f"{r}\n" for r in rows), encoding="utf-8")
                write_results(bench, metrics, notes, results_dir=args.results_dir, merge=merge)

            run = await run_mode(gold_set, turns, mode, endpoint, embedder, args, record)
            record(run)
            print_prompt_table(metrics, f"{prefix}{mode}.", len(run.ends))
            print(f"  wrote {mode}", flush=True)
        print_table({f"x.{k}" if not prefix else k: v for k, v in metrics.items()}, prefix or "x.")
    print(f"\nwrote {write_results(bench, metrics, notes, results_dir=args.results_dir, merge=merge)}")


def profile_tag(args: Any) -> str:
    """``full.`` when ``--profile full`` was asked for (its keys and replies beside the others), else ""."""
    return "full." if args.explicit_profile == "full" else ""


GROUPS = ("context", "names", "facts", "summaries")
"""The groups of IngestOptions an ``--option`` may set a field of (``--option facts.resolve=true``)."""


def with_options(options: IngestOptions, pairs: Sequence[str]) -> IngestOptions:
    """``options`` with the fields ``--option GROUP.NAME=VALUE`` gives (``context.tokens=0``,
    ``facts.retire=true``, or ``window=3``; ints, floats, true/false, or text; ``names.things`` by the
    name of a check: tagger, words, off). ``facts.retire_all_guard`` has its own flag."""
    for pair in pairs:
        path, _, raw = pair.partition("=")
        group, _, name = path.rpartition(".")
        part = getattr(options, group) if group in GROUPS else options if path == "window" else None
        if part is None or name not in {f.name for f in fields(part)} or path == "facts.retire_all_guard":
            raise SystemExit(f"--option {pair!r}: not an IngestOptions field this bench lets you set")
        value: Any = raw
        for cast in (int, float):
            try:
                value = cast(raw)
                break
            except ValueError:
                continue
        if raw in ("true", "false"):
            value = raw == "true"
        if path == "names.things":
            value = thing_check(raw)
        try:
            options = replace(
                options, **({group: replace(part, **{name: value})} if group else {name: value})
            )
        except ValueError as exc:  # a value the options refuse (FactOptions.line_format=numbers)
            raise SystemExit(f"--option {pair!r}: {exc}") from None
    return options


def _slice(gold_set: GoldSet, args: Any) -> int | None:
    """How many of the set's turns run: all with --full, else session 1 (or --turns)."""
    if args.turns is not None:
        return min(args.turns, len(gold_set.turns))
    if args.full:
        return None
    first = gold_set.gold["sessions"][0]
    return sum(1 for t in gold_set.turns if t.dia_id.startswith(f"D{first}:"))


def _describe(gold_set: GoldSet, turns: int | None, full: bool) -> str:
    sessions = gold_set.gold["sessions"]
    every = f"sessions {sessions[0]}-{sessions[-1]} ({len(gold_set.turns)} turns)"
    if turns is None:
        return f"{every} in full"
    if full:
        return f"a slice: the first {turns} turns"
    return f"a SLICE: the first {turns} turns (session {sessions[0]}); --full runs {every}"


if __name__ == "__main__":
    asyncio.run(main())
