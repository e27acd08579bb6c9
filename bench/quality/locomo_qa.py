"""QA bench: KnowledgeGraph.ask on LoCoMo's questions against two baselines, F1 and a judge.

Question answering on LoCoMo: KnowledgeGraph.ask against two baselines, with LoCoMo's F1 and a voting
LLM judge, bootstrap intervals, and a graph built from the gold extraction.

Ingests LoCoMo conversations (each in its own group; ``--db PATH`` keeps the graph in a file: a later
run finds the episodes there and ingests only what is missing), asks every question of categories 1-4
whose evidence lies in the ingested sessions, and answers each one in several ways (rows):

- ``graph``: ``kg.ask`` on the path ``--ask-mode`` names (default: the library's ``DEFAULT_MODE``);
  ``--also-ask-mode agent`` adds a row ``graph_agent`` (and so on), so the paths can be compared;
- ``full_context``: the conversation as a user would paste it: the most recent turns that fit the model's
  ``--context-window`` less the prompt and answer budget (``full_context.turns_included`` of
  ``.turns_total``, ``.truncated`` 1 when cut; the notes say how many per conversation);
- ``episodes``: the top 10 episodes of a hybrid episode search, and nothing else;
- ``gold_graph``: ``kg.ask`` (same path as ``graph``) on a graph built from a gold extraction set
  (``bench/data/``) by scripted answers, for the questions whose evidence lies in the sessions the set
  covers: extraction and answering measured apart (``gold_graph`` against ``graph`` on those questions);
- ``mem0`` (``--mem0-dir DIR``): Mem0's open-source package (``pip install -e ".[bench]"``, mem0ai 2.2.1)
  on the same model and MiniLM embedder, its own ``add`` over the turns of the first ``--mem0-sessions``
  (3) sessions of each conversation and its ``search``'s top memories as the context, on the questions whose
  evidence lies in those sessions (``qa_mem0.py``: its store in DIR, resumable; every setting that
  differs from Mem0's defaults in the notes). Its prompt is about 8,000 tokens: start the local model
  with ``EPIGRAPH_LOCAL_MODEL_CTX=16384``.

All answer with the same ``ask_answer`` prompt. Each answer is scored two ways (``qa_metrics``):
LoCoMo's own token-level F1 against the gold answer, and the generous CORRECT/WRONG "J" judge of the
Mem0 and Zep papers (``qa_judge``), asked ``--votes`` times (at ``--judge-temperature``) once per
DISTINCT answer to a question (the same words after LoCoMo's normalization, citations left out), the
majority being the verdict (only the votes that could still change it are cast). Per row: J and F1
overall and per category with bootstrap intervals (``<row>.j_ci_low`` / ``<row>.j_ci_high``, ``.f1_...``),
answer, context and input tokens, model calls, latency p50/p95 per question; the paired difference of
``graph`` and each other row on the questions both answered (``graph_minus_<row>.j`` / ``.f1`` with
their intervals, overall and per category: ``graph_minus_<row>.j.category1_ci_low``); the votes' agreement
(``judge.*``). Prints a table and writes ``bench/results/qa.json`` with its notes::

    EPIGRAPH_LLM_BASE_URL=... EPIGRAPH_LLM_MODEL=... python -m bench locomo_qa \\
        --conversation ../shared/datasets/locomo/26.json --sessions 9 \\
        --conversation ../shared/datasets/locomo/30.json --sessions 6 --db qa.db
    python -m bench locomo_qa --conversation ... --sessions 2 --scripted   # offline, no model: plumbing
    python -m bench locomo_qa --conversation ... --votes 3 --rejudge answers.jsonl   # judge a run again

Whole conversations (LoCoMo 26 and 30, every session: no ``--sessions``): one store file for the run
(each conversation in its own group) and one Mem0 directory, both resumable (killed and started again,
a run skips the episodes done and the turns Mem0 added; a crashed run's claims lapse within a minute).
Three steps, the first two with ``--ingest-only`` (writes ``qa_ingest.json``)::

    # 1. the graph, at the local model's default context
    EPIGRAPH_LLM=local python -m bench locomo_qa --conversation ../shared/datasets/locomo/26.json \\
        --conversation ../shared/datasets/locomo/30.json --db qa-full.db --ingest-only
    # 2. Mem0's adds (sessions 1-3), its prompt needing a 16k context
    epigraph model stop; EPIGRAPH_LOCAL_MODEL_CTX=16384 epigraph model start
    EPIGRAPH_LLM=local python -m bench locomo_qa --conversation .../26.json --conversation .../30.json \\
        --db qa-full.db --mem0-dir qa-mem0 --ingest-only
    # 3. the questions, every row (the full_context row fits 8192 tokens); two slots, so that the
    #    judge runs two distinct answers side by side (the answers are asked one at a time: their
    #    latency is a figure), each slot with room for the whole conversation
    epigraph model stop; EPIGRAPH_LOCAL_MODEL_SLOTS=2 EPIGRAPH_LOCAL_MODEL_CTX=16384 epigraph model start
    EPIGRAPH_LLM=local python -m bench locomo_qa --conversation .../26.json --conversation .../30.json \\
        --db qa-full.db --mem0-dir qa-mem0 --context-window 8192 --details bench/recorded/qa.answers.jsonl \\
        --journal qa-full.journal.jsonl --judge-parallel 2

``--journal PATH`` (``qa_journal.py``) writes each answer and each verdict as it is made: the
questions' step takes hours on the local model, and a run killed part way and started again with the
same journal (same commit, same settings, or it is refused) asks and judges only what is missing.

``graph.ingest.*`` sums the graph's ingestion over every run that wrote the store, from each episode's
report; ``mem0.add.*`` sums Mem0's adds the same way, from its ``added.jsonl``.

``--rejudge`` takes the answers a run wrote with ``--details`` and only judges them again, with
``--votes`` votes each, into ``qa_votes.json`` (the judge's agreement with itself and with the run).

``--scripted`` answers every prompt with the deterministic script of ``qa_script.py`` and the hash
embedder: it tests the harness, and its J figures say nothing about a model.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.quality.qa_build import (
    GoldGraph,
    add_to_mem0,
    gold_graph,
    gold_sets,
    ingest,
    ingestion_record,
    mem0_of,
    mem0_turn_names,
)
from bench.quality.qa_journal import Journal
from bench.quality.qa_locomo import GROUP, Conversation, conversations_of, interleaved
from bench.quality.qa_mem0 import Mem0Memory, changed_settings
from bench.quality.qa_metrics import locomo_f1
from bench.quality.qa_model_speed import model_runtime, model_speed
from bench.quality.qa_rows import CATEGORIES, Judge, Question, Row, metrics_of, print_table
from bench.quality.qa_script import scripted_llm
from bench.shared.results import git_commit, write_results
from epigraph import KnowledgeGraph
from epigraph.ask import ASK_MODES, DEFAULT_MODE, AskMode, AskOptions, CitationFilter, answer_request
from epigraph.ask.observations import day
from epigraph.client import llm_from_settings
from epigraph.config import Settings
from epigraph.pipeline.options import IngestOptions
from epigraph.prompts import ask_answer
from epigraph.prompts.protocol import LLM
from epigraph.prompts.runtime import build_request
from epigraph.search import EPISODES_HYBRID, EpisodeHit
from epigraph.testing import HashEmbedder
from epigraph.tokens import count_text_tokens

BASELINES = ("full_context", "episodes")
TOP_EPISODES = 10
CONTEXT_RESERVE = 1000
"""Tokens of the model's context kept free beside the conversation: the prompt's own text, the
question, the answer, and the gap between our token count and the model's tokenizer."""


# -- answering ---------------------------------------------------------------------------------------


async def answer_with(llm: LLM, question: str, now: str, lines: list[str]) -> tuple[str, int, int]:
    """A baseline: the answering prompt with ``lines`` (``E1 [DATE]: ...``) as its only context, held
    to the same citing grammar as ``ask`` where the endpoint takes one; (answer, context tokens, input
    tokens)."""
    episodes = "\n".join(lines) or "(none)"
    spoken = day(datetime.fromisoformat(now))  # dates written as ask writes them
    data = ask_answer.AskAnswerInput(question=question, now=spoken, facts="(none)", episodes=episodes)
    labels = [f"E{i}" for i in range(1, len(lines) + 1)]
    request = answer_request(data, labels) if labels else build_request(ask_answer.PROMPT, data)
    completion = await llm.complete(request)
    cited = CitationFilter(lambda label: label in labels)
    text = (cited.feed(completion.text) + cited.finish()).strip()
    return text, count_text_tokens(episodes), completion.usage.input_tokens


async def ask_graph(
    kg: KnowledgeGraph, row: str, q: Question, group: str, now: str, mode: AskMode, options: AskOptions
) -> Row:
    started = time.perf_counter()
    answer = await kg.group(group).ask(q.text, as_of=now, streaming=False, mode=mode, options=options)
    latency = (time.perf_counter() - started) * 1000
    u = answer.usage
    return Row(
        row, q.key, q.category, answer.text, count_text_tokens(answer.text), u.context_tokens,
        u.input_tokens, u.calls, latency, answer.error,
    )  # fmt: skip


def conversation_lines(conversation: Conversation, window: int) -> list[str]:
    """The conversation as numbered lines, the newest that fit ``window`` tokens (oldest first)."""
    lines = [f"[{day(t.reference_time)}]: {t.speaker}: {t.content}" for t in conversation.turns]
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        used += count_text_tokens(line) + 4  # the "E123 " label and the newline
        if used > window:
            break
        kept.append(line)
    return [f"E{i} {line}" for i, line in enumerate(reversed(kept), 1)]


async def top_episodes(kg: KnowledgeGraph, question: str, group: str) -> list[EpisodeHit]:
    """The ``episodes`` baseline's context: the top episodes of a hybrid episode search."""
    found = await kg.group(group).search(question, config=EPISODES_HYBRID, limit=TOP_EPISODES)
    return list(found.episodes)


async def ask_baseline(
    kg: KnowledgeGraph, llm: LLM, row: str, q: Question, conversation: Conversation, full: list[str]
) -> Row:
    started = time.perf_counter()
    if row == "full_context":
        lines = full
    else:
        found = await top_episodes(kg, q.text, conversation.group)
        lines = [f"E{i} [{day(r.episode.reference_time)}]: {r.content}" for i, r in enumerate(found, 1)]
    text, context, input_tokens = await answer_with(llm, q.text, conversation.now, lines)
    latency = (time.perf_counter() - started) * 1000
    return Row(row, q.key, q.category, text, count_text_tokens(text), context, input_tokens, 1, latency)


async def ask_mem0(mem0: Mem0Memory, llm: LLM, q: Question, conversation: Conversation) -> Row:
    """The mem0 row: Mem0's top memories for the question, answered by the same prompt."""
    started = time.perf_counter()
    found = await asyncio.to_thread(mem0.search, q.text, conversation.group)
    lines = [f"E{i} {line}" for i, line in enumerate(found, 1)]
    text, context, input_tokens = await answer_with(llm, q.text, conversation.now, lines)
    latency = (time.perf_counter() - started) * 1000
    return Row("mem0", q.key, q.category, text, count_text_tokens(text), context, input_tokens, 1, latency)


# -- resuming ----------------------------------------------------------------------------------------


def journal_of(
    args: argparse.Namespace,
    conversations: Sequence[Conversation],
    window: int,
    modes: list[tuple[str, AskMode]],
    runtime: str,
) -> Journal | None:
    """The run's journal (``--journal``), its settings everything that changes an answer or a verdict."""
    if not args.journal:
        return None
    settings = {
        "commit": git_commit(),
        "conversations": [[c.path.name, c.sessions] for c in conversations],
        "questions": args.questions,
        "rows": [list(m) for m in modes],
        "baselines": not args.no_baselines,
        "gold": None if args.no_gold else [str(p) for p in args.gold or ()],
        "mem0": [args.mem0_sessions, args.mem0_top_k] if args.mem0_dir else None,
        "embedder": "hash" if args.scripted else args.embedder,
        "one_call_tokens": args.one_call_tokens,
        "context_window": window,
        "votes": args.votes,
        "judge_temperature": args.judge_temperature,
        "scripted": args.scripted,
        "runtime": runtime,
    }
    return Journal(args.journal, settings)


class Answers:
    """The rows' answers: the journal's when an earlier run made them, else made now, each written to the
    journal first. Before a row's first answer made now, the model server's speed is probed
    (``speeds[row]``): the row's latencies are read against it."""

    def __init__(self, journal: Journal | None, llm: LLM) -> None:
        self.journal, self.llm = journal, llm
        self.speeds: dict[str, dict[str, float]] = {}

    async def of(self, row: str, q: Question, make: Callable[..., Awaitable[Row]], *args: Any) -> Row:
        """``row``'s answer to ``q``: the journal's (an earlier run made it, the run goes on past it), or
        ``await make(*args)`` written to the journal."""
        fields = self.journal.answer(row, q.key) if self.journal else None
        if fields is not None:
            return Row(**fields)
        if row not in self.speeds:
            self.speeds[row] = await model_speed(self.llm)
        made = await make(*args)
        if self.journal is not None:
            self.journal.record_answer(made.__dict__)
        return made


def full_context_fields(
    conversations: Sequence[Conversation], full: dict[str, list[str]], skipped: bool
) -> dict[str, float]:
    """How much of each conversation the ``full_context`` row pasted: ``turns_included`` of
    ``turns_total`` (summed over the conversations), ``truncated`` 1 when any was cut."""
    if skipped:
        return {}
    included = sum(len(full[c.name]) for c in conversations)
    total = sum(len(c.turns) for c in conversations)
    return {
        "full_context.turns_included": included,
        "full_context.turns_total": total,
        "full_context.truncated": int(included < total),
    }


def ingest_notes(args: argparse.Namespace, conversations: Sequence[Conversation], llm: LLM) -> list[str]:
    model = "scripted (offline plumbing run)" if args.scripted else getattr(llm, "model", "?")
    read = "; ".join(
        f"{c.path.name} sessions 1-{c.sessions or 'all'} ({len(c.turns)} turns)" for c in conversations
    )
    return [
        f"ingestion only (--ingest-only): {read} into {args.db or 'memory'} by {model}"
        + (f", {args.mode} mode" if args.mode else ""),
        INGEST_NOTE,
    ]


def mem0_notes(mem0: Mem0Memory, sessions: int) -> list[str]:
    return [
        changed_settings(mem0.settings),
        f"mem0 row: Mem0's add over the turns of sessions 1-{sessions} of each conversation, its search's "
        f"top {mem0.settings.top_k} memories as the context (E<i> [session date]: memory), answered by the "
        "same ask_answer prompt and judged the same way, on the questions whose evidence is in those "
        "sessions; graph_minus_mem0 pairs the graph's answers to the same questions",
        "mem0.add.*: every turn Mem0 has added in its store directory, summed over runs (added.jsonl): "
        "seconds per turn (wall, one add call), the model's calls and tokens per turn (its response "
        "callback), replies cut at max_tokens; compare graph.ingest.*",
    ]


INGEST_NOTE = (
    "graph.ingest.*: the whole graph's ingestion, summed over every run that wrote to the store (an "
    "interrupted run resumes: episode ids are deterministic and done episodes are skipped), from the "
    "report each episode keeps: seconds are the pipeline's stage times, calls and tokens the model's; "
    "ingest_s / ingested_episodes: this run's wall-clock time and the episodes it ingested"
)


# -- the run -----------------------------------------------------------------------------------------


def settings_and_model(args: argparse.Namespace, db_path: str) -> tuple[Settings, LLM | None]:
    """The graph's settings and the model to give it (None: ``EPIGRAPH_LLM=local``, which the graph starts
    or reuses). The graph is always the embedded store (``db_path``), even where the environment names a
    Neo4j server: a reused graph must be the one this harness wrote."""
    settings = Settings.from_env(db_path=db_path, group_id=GROUP).model_copy(update={"neo4j_uri": None})
    local = settings.llm_local and not args.scripted
    llm = scripted_llm() if args.scripted else None if local else llm_from_settings(settings)
    if llm is None and not local:
        raise SystemExit(
            "set EPIGRAPH_LLM_MODEL and EPIGRAPH_LLM_BASE_URL, or EPIGRAPH_LLM=local "
            "(or --scripted for an offline run)"
        )
    return settings, llm


async def run_bench(args: argparse.Namespace) -> tuple[dict[str, float], list[str], list[Row]]:
    conversations = conversations_of(args)
    questions = interleaved(conversations, args.questions)
    by_name = {c.name: c for c in conversations}
    settings, llm = settings_and_model(args, str(args.db) if args.db else ":memory:")
    embedder = HashEmbedder() if args.scripted or args.embedder == "hash" else None
    options = AskOptions(one_call_tokens=args.one_call_tokens) if args.one_call_tokens else AskOptions()
    modes: list[tuple[str, AskMode]] = [
        ("graph", args.ask_mode),
        *((f"graph_{m}", m) for m in args.also_ask_mode or () if m != args.ask_mode),
    ]
    rows: list[Row] = []
    ingested: dict[str, float] = {}
    ingest_options = IngestOptions(mode=args.mode) if args.mode else None
    async with KnowledgeGraph(
        settings, llm=llm, embedder=embedder, options=ingest_options, group_id=GROUP
    ) as kg:
        await kg.open()
        llm = kg.llm
        assert llm is not None, "the graph has a model once entered"
        for c in conversations:
            for key, value in (await ingest(kg, c)).items():
                ingested[key] = round(ingested.get(key, 0) + value, 2)
        ingested.update(await ingestion_record(kg, conversations))
        mem0 = mem0_of(args, llm, settings)
        if mem0 is not None:
            await asyncio.to_thread(mem0.open)
            ingested.update(await add_to_mem0(mem0, conversations, args.mem0_sessions))
        if args.ingest_only:
            notes = ingest_notes(args, conversations, llm)
            return ingested, notes + (mem0_notes(mem0, args.mem0_sessions) if mem0 else []), []
        golds = [
            g
            for gold_set in gold_sets(args, conversations)
            for c in conversations
            if (g := await gold_graph(kg, gold_set, c, questions))
        ]
        window = args.context_window or getattr(getattr(llm, "profile", None), "context_tokens", None) or 8192
        full = {c.name: conversation_lines(c, window - CONTEXT_RESERVE) for c in conversations}
        gold_of = {q.key: g for g in golds for q in g.questions}
        runtime = model_runtime(settings, scripted=args.scripted)
        journal = journal_of(args, conversations, window, modes, runtime)
        judge = Judge(llm, args.votes, args.judge_temperature, journal, args.judge_parallel)
        # One row at a time, every question, one conversation after the other: a row's calls follow each
        # other, as in use (the whole conversation stays in the server's prompt cache from one question
        # to the next).
        ordered = sorted(questions, key=lambda q: [c.name for c in conversations].index(q.conversation))
        answers = Answers(journal, llm)
        for name, mode in modes:
            for q in ordered:
                c = by_name[q.conversation]
                row = await answers.of(name, q, ask_graph, kg, name, q, c.group, c.now, mode, options)
                row.extra["mode"] = mode
                rows.append(row)
        for baseline in () if args.no_baselines else BASELINES:
            for q in ordered:
                c = by_name[q.conversation]
                rows.append(
                    await answers.of(baseline, q, ask_baseline, kg, llm, baseline, q, c, full[c.name])
                )
        if mem0 is not None:
            for q in ordered:
                c = by_name[q.conversation]
                if set(q.evidence) <= mem0_turn_names(c, args.mem0_sessions):
                    rows.append(await answers.of("mem0", q, ask_mem0, mem0, llm, q, c))
            await asyncio.to_thread(mem0.close)
        for q in ordered:
            if (g := gold_of.get(q.key)) is not None:
                c = by_name[q.conversation]
                asking = (kg, "gold_graph", q, g.group, c.now, args.ask_mode, options)
                rows.append(await answers.of("gold_graph", q, ask_graph, *asking))
        asked = {q.key: q for q in questions}
        for r in rows:
            q = asked[r.question]
            r.f1 = locomo_f1(r.answer, q.gold, q.category)
        await judge.grade_all(rows, asked)  # judged once every answer is in: each distinct answer once
    metrics: dict[str, float] = {
        "questions": len(questions),
        **{f"questions.category{k}": sum(q.category == k for q in questions) for k in CATEGORIES},
        "episodes": sum(len(c.turns) for c in conversations),
        **ingested,
        **metrics_of(rows, judge, args.bootstrap),
        **full_context_fields(conversations, full, args.no_baselines),
        **{f"{name}.host_{k}": v for name, speed in answers.speeds.items() for k, v in speed.items()},
    }
    notes = notes_of(args, conversations, questions, golds, full, window, llm, modes)
    notes.append(
        f"llama.cpp runtime of the model server: {runtime} (epigraph model build; qa_model_speed.py)"
    )
    if journal is not None:
        notes.append(
            f"journal: {args.journal.name}; {journal.resumed_answers} answers and {journal.resumed_verdicts} "
            "verdicts were made by an earlier run of the same commit and settings, killed and resumed"
        )
    if mem0 is not None:
        notes += mem0_notes(mem0, args.mem0_sessions)
    return metrics, notes, rows


async def rejudge(args: argparse.Namespace) -> tuple[dict[str, float], list[str]]:
    """``--rejudge``: the answers a run wrote with ``--details``, judged again with ``--votes`` votes each
    (nothing is answered and no graph is built): the judge's agreement with itself, apart from a run."""
    asked = {q.key: q for c in conversations_of(args) for q in c.questions}
    try:
        lines = args.rejudge.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SystemExit(f"--rejudge: cannot read {args.rejudge}: {exc}") from None
    rows = [Row(**json.loads(line)) for line in lines if line.strip()]
    unknown = sorted({r.question for r in rows} - set(asked))
    if not rows or unknown:
        raise SystemExit(
            f"{args.rejudge}: no answers, or questions not in the conversations and sessions given: "
            f"{unknown[:5]}"
        )
    settings, llm = settings_and_model(args, ":memory:")
    recorded = [r.correct for r in rows]
    async with KnowledgeGraph(settings, llm=llm, embedder=HashEmbedder(), group_id=GROUP) as kg:
        await kg.open()
        assert kg.llm is not None, "the graph has a model once entered"
        judge = Judge(kg.llm, args.votes, args.judge_temperature, parallel=args.judge_parallel)
        model = "scripted (offline plumbing run)" if args.scripted else getattr(kg.llm, "model", "?")
        await judge.grade_all(rows, asked)
    judged = metrics_of(rows, judge, args.bootstrap)
    metrics: dict[str, float] = {
        "questions": len({r.question for r in rows}),
        **{k: v for k, v in judged.items() if ".j" in k or "judge" in k},
        "judge.same_as_recorded": round(
            statistics.mean(float(a == r.correct) for a, r in zip(recorded, rows, strict=True)), 4
        ),
    }
    notes = [
        f"rejudged: the {len(rows)} answers of {args.rejudge.name} (a locomo_qa.py run's --details), "
        f"{judge.votes} vote(s) per distinct answer to a question at temperature {args.judge_temperature} "
        f"by {model} with the qa_judge prompt; the majority is the verdict (only the votes that could "
        "still change it are cast)",
        "judge.same_as_recorded: the share of answers whose verdict here is the verdict the run recorded; "
        "<row>.judge_unanimous: the share of a row's answers all of whose cast votes agree",
    ]
    return metrics, notes


def notes_of(
    args: argparse.Namespace, conversations: list[Conversation], questions: list[Question],
    golds: list[GoldGraph], full: dict[str, list[str]], window: int, llm: LLM,
    modes: list[tuple[str, AskMode]],
) -> list[str]:  # fmt: skip
    model = "scripted (offline plumbing run, qa_script.py)" if args.scripted else getattr(llm, "model", "?")
    budget = args.one_call_tokens or AskOptions().one_call_tokens
    read = "; ".join(
        f"{c.path.name} sessions 1-{c.sessions or 'all'} ({len(c.turns)} turns, "
        f"{sum(q.conversation == c.name for q in questions)} questions)"
        for c in conversations
    )
    cut = "; ".join(
        f"{c.path.name}: the last {len(full[c.name])} of {len(c.turns)} turns"
        f" ({sum(count_text_tokens(line) for line in full[c.name])} tokens)"
        for c in conversations
    )
    gold = "; ".join(f"{g.name} ({g.turns} turns, {len(g.questions)} questions)" for g in golds) or "none"
    return [
        *(
            ["scripted run: no model was asked; J comes from a word-overlap judge and measures the harness"]
            if args.scripted
            else []
        ),
        f"run: {read}; {len(questions)} questions of categories 1-4 whose evidence is in the sessions read"
        + (f", ingested in {args.mode} mode" if args.mode else "")
        + ("; no baseline rows (--no-baselines)" if args.no_baselines else ""),
        f"model: {model}; judge: the same model with the qa_judge prompt (generous CORRECT/WRONG, as in the "
        f"Mem0 and Zep papers), {args.votes} vote(s) per distinct answer to a question"
        + (f" at temperature {args.judge_temperature}" if args.votes > 1 else "")
        + ", the majority is the verdict, and only the votes that could still change it are cast (of 3, the "
        "third when the first two differ: judge_unanimous is then the share whose first two votes agree, "
        "agreement_mean over the votes cast); answers judged and scored without their citation brackets"
        + (f"; {args.judge_parallel} distinct answers judged at once" if args.judge_parallel > 1 else ""),
        "f1: LoCoMo's token-level F1 (lower case, punctuation and articles dropped, Porter stems; category 1 "
        "split at commas, category 3 against the first ';' alternative)",
        f"intervals: 95% percentile bootstrap over questions, {args.bootstrap} resamples, seed 0; "
        "graph_minus_<row>: paired (the same questions resampled for both rows)",
        "rows: "
        + ", ".join(f"{name} = KnowledgeGraph.ask mode {mode}" for name, mode in modes)
        + f" (as_of the day after the last session; one_call_tokens {budget});"
        f" full_context = the conversation as a user would paste it: the most recent turns that fit the "
        f"model's context of {window} tokens less {CONTEXT_RESERVE} for the prompt and the answer ({cut}; "
        "full_context.turns_included, .truncated); "
        f"episodes = top {TOP_EPISODES} episodes of EPISODES_HYBRID; "
        "all answer with the ask_answer prompt",
        f"gold_graph: the graph built from the gold extraction by scripted answers ({gold}), answered like "
        "graph, on the questions whose evidence is in the sessions the set covers",
        INGEST_NOTE,
        "latency: per question, the answering only (judging not counted), each row over every question "
        "before the next row, one conversation after the other (a row's prompts follow each other, so the "
        "server's prompt cache serves it as in use); input tokens: the model's count where the server gives "
        "one; <row>.host_prompt_tokens_per_s and .host_generated_tokens_per_s: the model server's speed "
        "probed just before the row's first answer made by this run (a new prompt of about 600 tokens read, "
        "then a reply of 64 tokens written; qa_model_speed.py): a shared host's speed moves 2-3x from hour "
        "to hour, and the row's latencies with it",
    ]


def main(argv: Sequence[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversation", type=Path, action="append", required=True,
                        help="a LoCoMo conversation (26.json); repeat for several")  # fmt: skip
    parser.add_argument(
        "--sessions", type=int, action="append",
        help="the first N sessions only: once for all, or once per --conversation",
    )  # fmt: skip
    parser.add_argument(
        "--questions", type=int, help="at most N questions (taken from the conversations in turn)"
    )
    parser.add_argument("--db", type=Path, help="ingest into / reuse this embedded store file")
    parser.add_argument(
        "--ingest-only", action="store_true",
        help="ingest into --db and stop (writes qa_ingest.json); a later run resumes or asks",
    )  # fmt: skip
    parser.add_argument(
        "--mem0-dir", type=Path,
        help="add a mem0 row (pip install -e '.[bench]'): Mem0's store directory, made or reused",
    )  # fmt: skip
    parser.add_argument("--mem0-sessions", type=int, default=3, help="the sessions Mem0 adds (first N)")
    parser.add_argument("--mem0-max-tokens", type=int, default=512, help="Mem0's LLM reply cap")
    parser.add_argument("--mem0-top-k", type=int, default=10, help="Mem0's search: memories in the context")
    parser.add_argument("--mem0-base-url", help="Mem0's model server (default: the graph's)")
    parser.add_argument("--mem0-model", help="Mem0's model name (default: the graph's)")
    parser.add_argument("--embedder", choices=("minilm", "hash"), default="minilm")
    parser.add_argument("--mode", choices=("separate", "combined"), help="extraction mode of the ingestion")
    parser.add_argument("--ask-mode", choices=ASK_MODES, default=DEFAULT_MODE, help="the graph row's path")
    parser.add_argument(
        "--also-ask-mode", choices=ASK_MODES, action="append", help="another row, graph_<mode>"
    )
    parser.add_argument("--one-call-tokens", type=int, help="the one-call context's budget (AskOptions)")
    parser.add_argument(
        "--context-window", type=int, help="the model's context (default: its profile's, else 8192)"
    )
    parser.add_argument("--votes", type=int, default=3, help="judge votes per distinct answer")
    parser.add_argument(
        "--judge-temperature", type=float, default=0.7, help="the votes' temperature (votes > 1)"
    )
    parser.add_argument(
        "--judge-parallel", type=int, default=1,
        help="distinct answers judged at once (start the local model with as many slots)",
    )  # fmt: skip
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument(
        "--gold", type=Path, action="append", help="a gold extraction set (default: bench/data's)"
    )
    parser.add_argument("--no-gold", action="store_true", help="no gold_graph row")
    parser.add_argument(
        "--no-baselines", action="store_true", help="no full_context and episodes rows (a trial of the graph)"
    )
    parser.add_argument("--scripted", action="store_true", help="offline: scripted model, hash embedder")
    parser.add_argument("--results-dir", type=Path, help="where qa.json goes (default bench/results)")
    parser.add_argument("--details", type=Path, help="also write every answer as JSON lines here")
    parser.add_argument(
        "--journal", type=Path,
        help="write each answer and verdict here as it is made; a killed run given the same path resumes",
    )  # fmt: skip
    parser.add_argument(
        "--rejudge", type=Path, help="judge a run's --details again (--votes each); writes qa_votes.json"
    )
    args = parser.parse_args(argv)
    if args.ingest_only and not args.db:
        parser.error("--ingest-only needs --db (the graph it keeps)")
    if min(args.votes, args.bootstrap, args.judge_parallel) < 1:
        parser.error("--votes, --bootstrap and --judge-parallel must be at least 1")
    if args.rejudge:
        votes, notes = asyncio.run(rejudge(args))
        return write_results("qa_votes", votes, notes, results_dir=args.results_dir)
    metrics, notes, rows = asyncio.run(run_bench(args))
    if args.ingest_only:
        return write_results("qa_ingest", metrics, notes, results_dir=args.results_dir)
    print_table(metrics, list(dict.fromkeys(r.row for r in rows)))
    if args.details:
        args.details.parent.mkdir(parents=True, exist_ok=True)
        with args.details.open("w", encoding="utf-8") as out:
            for r in rows:
                out.write(json.dumps(r.__dict__, default=str) + "\n")
    return write_results("qa", metrics, notes, results_dir=args.results_dir)


if __name__ == "__main__":
    print(main())
