"""What the one-call context shows, without a model: how much of each question's evidence reaches it.

For every LoCoMo question the QA bench asks (``locomo_qa.py``'s set: categories 1-4, evidence in the
ingested sessions), assembles ``ask``'s one-call context (:func:`epigraph.ask.context.assemble`, the
same lookups, budget and shares the answering call gets) on a graph that bench saved with ``--db``,
and measures, against LoCoMo's evidence turns:

- ``<variant>.turns_shown``: the share of evidence turns whose own words are in the context (an
  episode line);
- ``<variant>.turns_reached``: the share shown as an episode or as the source of a fact shown;
- ``<variant>.all_shown`` / ``all_reached``: the share of questions with every evidence turn so;
- ``<variant>.answer_recall``: the mean share of the gold answer's words (LoCoMo's normalization) that
  the context's text holds (a "when" answer's date written as the context writes dates, a list's
  items);
- ``shape.<shape>.category<k>``: how many questions of each category have each shape
  (:mod:`epigraph.ask.shapes`);
- ``<variant>.context_tokens_mean``;

the same for the ``episodes`` baseline (the QA bench's top 10 episodes), ``full.context_tokens_mean``
(the whole conversation read, as ``locomo_qa.py``'s ``full_context`` row pastes it, uncut), and the
paired difference of each later variant and the first on the same questions (``v2_minus_v1.all_reached``,
``.answer_recall``, overall and per category). No model is called, so a change to the context is
measured on the whole question set in a minute, before the answering run on the real model that judges
it (``locomo_qa.py``). Each ``--variant`` is ``BUDGET`` (the library's context: its parts chosen by the
question's shape, :func:`epigraph.ask.context.parts_for`), ``BUDGET:flat`` (the general parts,
:data:`~epigraph.ask.context.PARTS`, for every question: the context before shapes) or
``BUDGET:part=share,...`` (the general parts, the shares named replacing the library's) or
``BUDGET:SHAPE`` (the parts of one shape, ``gather``, ``when``, ``said`` or ``plain``, for every
question: what a shape's parts do on questions of every kind)::

    HF_HUB_OFFLINE=1 python -m bench qa_context --db qa.db \\
        --conversation ../shared/datasets/locomo/26.json --sessions 9 \\
        --conversation ../shared/datasets/locomo/30.json --sessions 6 --variant 650:flat --variant 650

``--gold-graph`` measures on the graphs built from the gold extraction sets of ``bench/data`` by
scripted answers (``locomo_qa.py``'s ``gold_graph`` row, built into ``--db`` if not there yet; no model),
on the questions whose evidence lies in the sessions a set covers::

    HF_HUB_OFFLINE=1 python -m bench qa_context --db gold.db --gold-graph \\
        --conversation ../shared/datasets/locomo/26.json --conversation ../shared/datasets/locomo/30.json \\
        --sessions 3 --variant 650:flat --variant 650

Prints a table per category and writes ``bench/results/qa_context.json``.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from bench.quality.locomo_qa import conversation_lines, top_episodes
from bench.quality.qa_build import gold_graph, gold_sets
from bench.quality.qa_locomo import GROUP, Conversation, conversations_of, interleaved
from bench.quality.qa_metrics import normalize_answer
from bench.quality.qa_rows import CATEGORIES, Question
from bench.shared.results import write_results
from epigraph import KnowledgeGraph
from epigraph.ask.context import PARTS, SHAPED, Part, assemble
from epigraph.ask.lookups import Lookups
from epigraph.ask.observations import Observations, day
from epigraph.ask.options import AskOptions
from epigraph.ask.shapes import shape_of
from epigraph.config import Settings
from epigraph.graph.model import to_utc
from epigraph.tokens import aload_encoding, count_text_tokens


@dataclass(frozen=True)
class Variant:
    name: str
    budget: int
    parts: tuple[Part, ...] | None
    """None: the library's, chosen by each question's shape."""

    def describe(self) -> str:
        if self.parts is None:
            return f"the one-call context at budget {self.budget}, its parts chosen by the question's shape"
        shares = ", ".join(f"{p.name} {p.share:.2f}" for p in self.parts)
        return f"the one-call context at budget {self.budget}, the same parts for every question: {shares}"


def parse_variant(text: str) -> Variant:
    """``650``, ``650:flat``, ``650:gather`` (a shape's parts) or ``900:episodes=.3,facts=.3`` (shares
    renormalised to add up to 1)."""
    budget_text, _, shares_text = text.partition(":")
    flat, shape = shares_text.strip() == "flat", shares_text.strip() in SHAPED
    listed = "" if flat or shape else shares_text
    try:
        budget = int(budget_text)
        shares = {k.strip(): float(v) for k, v in (item.split("=") for item in listed.split(",") if item)}
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"--variant {text!r}: BUDGET, BUDGET:flat, BUDGET:SHAPE or BUDGET:part=share,..."
        ) from exc
    unknown = set(shares) - {p.name for p in PARTS}
    if unknown or budget < 1:
        raise argparse.ArgumentTypeError(f"--variant {text!r}: unknown parts {sorted(unknown)} or budget")
    if shape:
        return Variant(text, budget, SHAPED[shares_text.strip()])  # type: ignore[index]
    if not shares and not flat:
        return Variant(text, budget, None)
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
    recall: float
    """The share of the gold answer's words the context's text holds."""


def answer_recall(gold: str, text: str) -> float:
    """The share of ``gold``'s words (LoCoMo's normalization) that ``text`` holds (1.0 for no words)."""
    wanted = normalize_answer(gold).split()
    have = set(normalize_answer(text).split())
    return sum(w in have for w in wanted) / len(wanted) if wanted else 1.0


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
    text = "\n".join(
        (
            observed.summaries_block(),
            observed.facts_block(),
            observed.episodes_block(),
            observed.conversations_block(),
        )
    )
    return Shown(
        q.category, len(evidence), len(evidence & shown), len(evidence & reached), observed.used_tokens,
        answer_recall(q.gold, text),
    )  # fmt: skip


async def episodes_baseline(kg: KnowledgeGraph, q: Question, group: str) -> Shown:
    found = await top_episodes(kg, q.text, group)
    shown = {r.episode.name for r in found}
    tokens = sum(count_text_tokens(r.content) for r in found)
    evidence = set(q.evidence)
    n = len(evidence & shown)
    text = "\n".join(f"[{day(r.episode.reference_time)}]: {r.content}" for r in found)
    return Shown(q.category, len(evidence), n, n, tokens, answer_recall(q.gold, text))


def by_category(rows: Sequence[Shown]) -> list[tuple[str, list[int]]]:
    """``("", every row)`` and ``(".categoryK", its rows)`` for each category present (row indices)."""
    out = [("", list(range(len(rows))))]
    for k in CATEGORIES:
        if picked := [i for i, r in enumerate(rows) if r.category == k]:
            out.append((f".category{k}", picked))
    return out


def summarize(name: str, rows: Sequence[Shown]) -> dict[str, float]:
    out: dict[str, float] = {}
    for label, picked in by_category(rows):
        subset = [rows[i] for i in picked]
        evidence = sum(r.evidence for r in subset)
        out[f"{name}{label}.turns_shown"] = round(sum(r.shown for r in subset) / evidence, 3)
        out[f"{name}{label}.turns_reached"] = round(sum(r.reached for r in subset) / evidence, 3)
        out[f"{name}{label}.all_shown"] = round(sum(r.shown == r.evidence for r in subset) / len(subset), 3)
        out[f"{name}{label}.all_reached"] = round(
            sum(r.reached == r.evidence for r in subset) / len(subset), 3
        )
        out[f"{name}{label}.answer_recall"] = round(sum(r.recall for r in subset) / len(subset), 3)
    out[f"{name}.context_tokens_mean"] = round(sum(r.tokens for r in rows) / len(rows), 1)
    return out


def paired(name: str, rows: Sequence[Shown], base: Sequence[Shown]) -> dict[str, float]:
    """``rows`` minus ``base`` on the same questions: all_reached and answer_recall, mean per question."""
    out: dict[str, float] = {}
    for label, picked in by_category(rows):
        n = len(picked)
        reached = sum(
            (rows[i].reached == rows[i].evidence) - (base[i].reached == base[i].evidence) for i in picked
        )
        out[f"{name}{label}.all_reached"] = round(reached / n, 3)
        out[f"{name}{label}.answer_recall"] = round(
            sum(rows[i].recall - base[i].recall for i in picked) / n, 3
        )
    out[f"{name}.context_tokens_mean"] = round(
        sum(r.tokens - b.tokens for r, b in zip(rows, base, strict=True)) / len(rows), 1
    )
    return out


@dataclass(frozen=True)
class Asked:
    """A question, the group (graph) it is asked in, and the dialog's now (its conversation's)."""

    question: Question
    group: str
    now: datetime


async def asked_questions(
    kg: KnowledgeGraph, args: argparse.Namespace, conversations: list[Conversation], questions: list[Question]
) -> tuple[list[Asked], dict[str, str], list[str]]:
    """The questions and their groups (the model's graph, or with ``--gold-graph`` the gold graphs,
    built if missing), the names of the groups' episodes by uuid, and a note on the graph."""
    by_name = {c.name: c for c in conversations}
    if args.gold_graph:
        args.gold, args.no_gold = None, False
        golds = [
            g
            for gs in gold_sets(args, conversations)
            for c in conversations
            if (g := await gold_graph(kg, gs, c, questions))
        ]
        if not golds:
            raise SystemExit("--gold-graph: no gold extraction set of bench/data covers the sessions read")
        groups = [(g.group, g.conversation) for g in golds]
        asked = [
            Asked(q, g.group, to_utc(datetime.fromisoformat(g.conversation.now)))
            for q in questions for g in golds if q in g.questions
        ]  # fmt: skip
        note = "gold graphs: " + "; ".join(
            f"{g.name} ({g.turns} turns, {len(g.questions)} questions)" for g in golds
        )
    else:
        groups = [(c.group, c) for c in conversations]
        asked = [
            Asked(
                q, by_name[q.conversation].group, to_utc(datetime.fromisoformat(by_name[q.conversation].now))
            )
            for q in questions
        ]
        note = f"graph: {args.db}"
    names: dict[str, str] = {}
    for group, c in groups:
        episodes = await kg.store.episodes(group, limit=100_000)
        expected = len(c.turns) if not args.gold_graph else 1
        if len(episodes) < expected:
            raise SystemExit(f"{args.db}: group {group} has {len(episodes)} episodes, fewer than {expected}")
        names.update({e.uuid: e.name for e in episodes})
    return asked, names, [note]


async def run(args: argparse.Namespace) -> tuple[dict[str, float], list[str], list[str]]:
    conversations = conversations_of(args)
    questions = interleaved(conversations, args.questions)
    settings = Settings.from_env(db_path=str(args.db), group_id=GROUP).model_copy(update={"neo4j_uri": None})
    variants: list[Variant] = args.variant or [parse_variant(str(AskOptions().one_call_tokens))]
    rows: dict[str, list[Shown]] = {}
    full_tokens: list[int] = []
    await aload_encoding()
    whole = {
        c.name: sum(count_text_tokens(line) + 1 for line in conversation_lines(c, 10**9))
        for c in conversations
    }
    async with KnowledgeGraph(settings, group_id=GROUP) as kg:
        await kg.open()
        asked, names, graph_notes = await asked_questions(kg, args, conversations, questions)
        for a in asked:
            rows.setdefault("episodes", []).append(await episodes_baseline(kg, a.question, a.group))
            full_tokens.append(whole[a.question.conversation])
            for v in variants:
                rows.setdefault(v.name, []).append(await context_of(kg, a.question, a.group, a.now, v, names))
    metrics: dict[str, float] = {"questions": len(asked)}
    for a in asked:  # how many questions each shape's parts answer (the library's variant)
        key = f"shape.{shape_of(a.question.text)}.category{a.question.category}"
        metrics[key] = metrics.get(key, 0) + 1
    labels = {"episodes": "episodes"} | {v.name: f"v{i}" for i, v in enumerate(variants, 1)}
    for name, shown in rows.items():
        metrics.update(summarize(labels[name], shown))
    metrics["full.context_tokens_mean"] = round(sum(full_tokens) / len(full_tokens), 1)
    for v in variants[1:]:
        metrics.update(paired(f"{labels[v.name]}_minus_v1", rows[v.name], rows[variants[0].name]))
    notes = [
        f"{graph_notes[0]}; {len(asked)} questions of categories 1-4 (locomo_qa.py's set)",
        "episodes: the QA bench's top 10 episodes (EPISODES_HYBRID)",
        "full: the whole conversation read (every session the bench read), uncut, as locomo_qa.py pastes it",
        *(f"{labels[v.name]}: {v.describe()}" for v in variants),
        "turns_shown: evidence turns whose words are in the context; turns_reached: shown, or the source "
        "of a fact shown; all_*: questions with every evidence turn so; answer_recall: the mean share of "
        "the gold answer's words in the context's text; vK_minus_v1: paired differences per question",
    ]
    return metrics, notes, list(labels.values())


def main(argv: Sequence[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversation", type=Path, action="append", required=True)
    parser.add_argument("--sessions", type=int, action="append")
    parser.add_argument("--questions", type=int)
    parser.add_argument("--db", type=Path, required=True, help="a graph locomo_qa.py saved with --db")
    parser.add_argument(
        "--variant", type=parse_variant, action="append", help="BUDGET[:flat|:SHAPE|:part=share,...]"
    )
    parser.add_argument(
        "--gold-graph", action="store_true", help="measure on the gold graphs (built into --db if missing)"
    )
    parser.add_argument("--results-dir", type=Path)
    args = parser.parse_args(argv)
    if not args.db.exists() and not args.gold_graph:
        parser.error(f"--db {args.db}: no such file")
    metrics, notes, labels = asyncio.run(run(args))
    print(f"full conversation: {metrics['full.context_tokens_mean']} tokens a question (mean)")
    columns = ("turns_shown", "turns_reached", "all_shown", "all_reached", "answer_recall")
    for category in ("", *(f".category{k}" for k in CATEGORIES)):
        if f"episodes{category}.turns_shown" not in metrics:
            continue
        print(f"{category.lstrip('.') or 'all'}:  context tokens " + " ".join(columns))
        for label in labels:
            figures = " ".join(f"{metrics[f'{label}{category}.{c}']:>{len(c)}}" for c in columns)
            print(f"  {label:<10} {metrics[f'{label}.context_tokens_mean']:>7} {figures}")
    for note in notes:
        print(" ", note)
    return write_results("qa_context", metrics, notes, results_dir=args.results_dir)


if __name__ == "__main__":
    print(main())
