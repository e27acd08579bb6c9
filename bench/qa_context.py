"""What the one-call context shows, without a model: how much of each question's evidence reaches it.

For every LoCoMo question the QA bench asks (``locomo_qa.py``'s set: categories 1-4, evidence in the
ingested sessions), assembles ``ask``'s one-call context (:func:`epigraph.ask.context.assemble`, the
same lookups, budget and shares the answering call gets) on a graph that bench saved with ``--db``,
and measures, against LoCoMo's evidence turns:

- ``<variant>.turns_shown``: the share of evidence turns whose own words are in the context (an
  episode line);
- ``<variant>.turns_reached``: the share shown as an episode or as the source of a fact shown;
- ``<variant>.all_shown`` / ``all_reached``: the share of questions with every evidence turn so;
- ``<variant>.context_tokens_mean``;

and the same for the ``episodes`` baseline (the QA bench's top 10 episodes). No model is called, so a
change to the context (its parts, shares, budget) is measured on the whole question set in a minute,
before the answering run on the real model that judges it (``locomo_qa.py``). Each ``--variant`` is
``BUDGET`` or ``BUDGET:part=share,...`` (the shares of the parts named replace the library's)::

    HF_HUB_OFFLINE=1 python bench/qa_context.py --db qa.db \\
        --conversation ../shared/datasets/locomo/26.json --sessions 9 \\
        --conversation ../shared/datasets/locomo/30.json --sessions 6 --variant 650 --variant 900

Prints a table per category and writes ``bench/results/qa_context.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import write_results
from locomo_qa import CATEGORIES, GROUP, Question, conversations_of, interleaved, top_episodes

from epigraph import KnowledgeGraph
from epigraph.ask.context import PARTS, Part, assemble
from epigraph.ask.lookups import Lookups
from epigraph.ask.observations import Observations
from epigraph.ask.options import AskOptions
from epigraph.config import Settings
from epigraph.graph.model import to_utc
from epigraph.tokens import aload_encoding, count_text_tokens


@dataclass(frozen=True)
class Variant:
    name: str
    budget: int
    parts: tuple[Part, ...]


def parse_variant(text: str) -> Variant:
    """``650`` or ``900:episodes=.3,facts=.3`` (shares renormalised to add up to 1)."""
    budget_text, _, shares_text = text.partition(":")
    try:
        budget = int(budget_text)
        shares = {
            k.strip(): float(v) for k, v in (item.split("=") for item in shares_text.split(",") if item)
        }
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--variant {text!r}: BUDGET or BUDGET:part=share,...") from exc
    unknown = set(shares) - {p.name for p in PARTS}
    if unknown or budget < 1:
        raise argparse.ArgumentTypeError(f"--variant {text!r}: unknown parts {sorted(unknown)} or budget")
    parts = [replace(p, share=shares.get(p.name, p.share)) for p in PARTS]
    total = sum(p.share for p in parts)
    return Variant(text, budget, tuple(replace(p, share=p.share / total) for p in parts))


@dataclass
class Shown:
    category: int
    evidence: int
    shown: int
    reached: int
    tokens: int


async def context_of(
    kg: KnowledgeGraph, q: Question, group: str, now: datetime, variant: Variant, names: dict[str, str]
) -> Shown:
    options = AskOptions()
    lookups = Lookups(
        kg.store, kg.embedder, group, as_of=now, known_at=None, now=now,
        facts_limit=options.facts_per_lookup, episodes_limit=options.episodes_per_lookup,
    )  # fmt: skip
    observed = Observations(now=now, known_at=None, budget_tokens=variant.budget, dated=True)
    steps = await assemble(lookups, q.text, observed, variant.parts)
    seen = [s for step in steps for s in step.seen]
    shown = {names.get(s.uuid) for s in seen if s.kind == "episode"}
    reached = shown | {names.get(u) for s in seen if s.kind == "fact" for u in s.citation.episode_uuids}
    evidence = set(q.evidence)
    return Shown(
        q.category, len(evidence), len(evidence & shown), len(evidence & reached), observed.used_tokens
    )


async def episodes_baseline(kg: KnowledgeGraph, q: Question, group: str) -> Shown:
    found = await top_episodes(kg, q.text, group)
    shown = {r.episode.name for r in found}
    tokens = sum(count_text_tokens(r.content) for r in found)
    evidence = set(q.evidence)
    n = len(evidence & shown)
    return Shown(q.category, len(evidence), n, n, tokens)


def summarize(name: str, rows: Sequence[Shown]) -> dict[str, float]:
    out: dict[str, float] = {}
    for label, subset in (
        ("", rows),
        *((f".category{k}", [r for r in rows if r.category == k]) for k in CATEGORIES),
    ):
        if not subset:
            continue
        evidence = sum(r.evidence for r in subset)
        out[f"{name}{label}.turns_shown"] = round(sum(r.shown for r in subset) / evidence, 3)
        out[f"{name}{label}.turns_reached"] = round(sum(r.reached for r in subset) / evidence, 3)
        out[f"{name}{label}.all_shown"] = round(sum(r.shown == r.evidence for r in subset) / len(subset), 3)
        out[f"{name}{label}.all_reached"] = round(
            sum(r.reached == r.evidence for r in subset) / len(subset), 3
        )
    out[f"{name}.context_tokens_mean"] = round(sum(r.tokens for r in rows) / len(rows), 1)
    return out


async def run(args: argparse.Namespace) -> tuple[dict[str, float], list[str], list[str]]:
    conversations = conversations_of(args)
    questions = interleaved(conversations, args.questions)
    by_name = {c.name: c for c in conversations}
    settings = Settings.from_env(db_path=str(args.db), group_id=GROUP).model_copy(update={"neo4j_uri": None})
    variants: list[Variant] = args.variant or [parse_variant(str(AskOptions().one_call_tokens))]
    metrics: dict[str, float] = {"questions": len(questions)}
    rows: dict[str, list[Shown]] = {}
    await aload_encoding()
    async with KnowledgeGraph(settings, group_id=GROUP) as kg:
        await kg.open()
        names: dict[str, str] = {}
        for c in conversations:
            episodes = await kg.store.episodes(c.group, limit=100_000)
            if len(episodes) < len(c.turns):
                raise SystemExit(
                    f"{args.db}: group {c.group} has {len(episodes)} episodes, not {len(c.turns)}"
                )
            names.update({e.uuid: e.name for e in episodes})
        for q in questions:
            c = by_name[q.conversation]
            now = to_utc(datetime.fromisoformat(c.now))
            rows.setdefault("episodes", []).append(await episodes_baseline(kg, q, c.group))
            for v in variants:
                rows.setdefault(v.name, []).append(await context_of(kg, q, c.group, now, v, names))
    labels = {"episodes": "episodes"} | {v.name: f"v{i}" for i, v in enumerate(variants, 1)}
    for name, shown in rows.items():
        metrics.update(summarize(labels[name], shown))
    notes = [
        f"graph: {args.db}; {len(questions)} questions of categories 1-4 (locomo_qa.py's set)",
        "episodes: the QA bench's top 10 episodes (EPISODES_HYBRID)",
        *(
            f"{labels[v.name]}: the one-call context at budget {v.budget}, shares "
            + ", ".join(f"{p.name} {p.share:.2f}" for p in v.parts)
            for v in variants
        ),
        "turns_shown: evidence turns whose words are in the context; turns_reached: shown, or the source "
        "of a fact shown; all_*: questions with every evidence turn so",
    ]
    return metrics, notes, list(labels.values())


def main(argv: Sequence[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversation", type=Path, action="append", required=True)
    parser.add_argument("--sessions", type=int, action="append")
    parser.add_argument("--questions", type=int)
    parser.add_argument("--db", type=Path, required=True, help="a graph locomo_qa.py saved with --db")
    parser.add_argument("--variant", type=parse_variant, action="append", help="BUDGET[:part=share,...]")
    parser.add_argument("--results-dir", type=Path)
    args = parser.parse_args(argv)
    if not args.db.exists():
        parser.error(f"--db {args.db}: no such file")
    metrics, notes, labels = asyncio.run(run(args))
    print(f"{'context':<10} {'tokens':>7} {'shown':>6} {'reached':>8} {'all_shown':>10} {'all_reached':>12}")
    for label in labels:
        print(
            f"{label:<10} {metrics[f'{label}.context_tokens_mean']:>7} {metrics[f'{label}.turns_shown']:>6} "
            f"{metrics[f'{label}.turns_reached']:>8} {metrics[f'{label}.all_shown']:>10} "
            f"{metrics[f'{label}.all_reached']:>12}"
        )
    for note in notes:
        print(" ", note)
    return write_results("qa_context", metrics, notes, results_dir=args.results_dir)


if __name__ == "__main__":
    print(main())
