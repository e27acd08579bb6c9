"""The QA bench's rows (``locomo_qa.py``): a question, one answer to it made one way, the judge that
votes on each distinct answer once, and the figures over a row and over two rows paired."""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bench.quality import qa_judge
from bench.quality.qa_journal import Journal
from bench.quality.qa_metrics import (
    bootstrap_ci,
    majority,
    normalize_answer,
    paired_bootstrap_ci,
    settled,
    strip_citations,
)
from epigraph.prompts.protocol import LLM
from epigraph.prompts.runtime import run

CATEGORIES = (1, 2, 3, 4)


@dataclass(frozen=True)
class Question:
    key: str
    text: str
    gold: str
    category: int
    evidence: tuple[str, ...]
    conversation: str


@dataclass
class Row:
    """One question answered one way."""

    row: str
    question: str
    category: int
    answer: str
    answer_tokens: int
    context_tokens: int
    input_tokens: int
    calls: int
    latency_ms: float
    error: str | None = None
    f1: float = 0.0
    correct: bool = False
    votes: tuple[bool, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


# -- judging -----------------------------------------------------------------------------------------


@dataclass
class Judge:
    """Judges each distinct answer to a question once, by the majority of ``votes`` votes, casting only the
    votes that could still change it (of 3: the third only when the first two differ); ``parallel``
    distinct answers at a time (a server with that many slots runs their calls side by side)."""

    llm: LLM
    votes: int
    temperature: float
    journal: Journal | None = None
    parallel: int = 1
    calls: int = 0
    _judging: dict[tuple[str, str], asyncio.Task[tuple[bool, ...]]] = field(
        default_factory=dict, init=False, repr=False
    )
    _gate: asyncio.Semaphore = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.votes < 1 or self.parallel < 1:
            raise ValueError(f"a judge needs at least one vote and one answer at a time: {self}")
        self._gate = asyncio.Semaphore(self.parallel)

    @property
    def verdicts(self) -> dict[tuple[str, str], tuple[bool, ...]]:
        """The verdicts reached so far, by question key and answer words."""
        return {
            key: task.result()
            for key, task in self._judging.items()
            if task.done() and not task.cancelled() and task.exception() is None
        }

    async def grade(self, q: Question, answer: str) -> tuple[bool, ...]:
        text = strip_citations(answer)
        key = (q.key, normalize_answer(text))  # the same words: the same answer
        if key not in self._judging:  # asked again while it is being judged: the same task
            self._judging[key] = asyncio.ensure_future(self._verdict(key, q, text))
        return await self._judging[key]

    async def grade_all(self, rows: Sequence[Row], asked: Mapping[str, Question]) -> None:
        """Every row's votes and verdict (its majority), the distinct answers judged ``parallel`` at once."""

        async def grade_row(r: Row) -> None:
            r.votes = await self.grade(asked[r.question], r.answer)
            r.correct = majority(r.votes)[0]

        await asyncio.gather(*(grade_row(r) for r in rows))

    async def _verdict(self, key: tuple[str, str], q: Question, text: str) -> tuple[bool, ...]:
        verdict = self.journal.verdict(*key) if self.journal else None
        if verdict is None:
            votes: list[bool] = []
            async with self._gate:
                while not settled(votes, self.votes):  # the votes that could still change the majority
                    votes.append(await self._vote(q, text))
            verdict = tuple(votes)
            if self.journal:
                self.journal.record_verdict(*key, verdict)
        return verdict

    async def _vote(self, q: Question, text: str) -> bool:
        data = qa_judge.QaJudgeInput(
            question=q.text, gold_answer=q.gold, generated_answer=text or "(no answer)"
        )
        temperature = self.temperature if self.votes > 1 else None
        llm = _AtTemperature(self.llm, temperature) if temperature is not None else self.llm
        result = await run(llm, qa_judge.PROMPT, data)
        self.calls += result.calls
        return bool(result.value.label == "CORRECT")


class _AtTemperature:
    """``llm`` with every request sampled at ``temperature`` (the judge's votes)."""

    def __init__(self, llm: LLM, temperature: float) -> None:
        self.llm, self.temperature = llm, temperature

    async def complete(self, request: Any) -> Any:
        return await self.llm.complete(replace(request, temperature=self.temperature))

    def stream(self, request: Any) -> Any:
        return self.llm.stream(replace(request, temperature=self.temperature))


# -- measures ----------------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def row_metrics(name: str, rows: list[Row], resamples: int) -> dict[str, float]:
    out: dict[str, float] = {}
    j = [float(r.correct) for r in rows]
    f1 = [r.f1 for r in rows]
    for measure, values in (("j", j), ("f1", f1)):
        out[f"{name}.{measure}"] = round(statistics.mean(values), 4)
        low, high = bootstrap_ci(values, resamples=resamples)
        out[f"{name}.{measure}_ci_low"], out[f"{name}.{measure}_ci_high"] = round(low, 4), round(high, 4)
        for c in CATEGORIES:
            of_c = [v for v, r in zip(values, rows, strict=True) if r.category == c]
            if of_c:
                out[f"{name}.{measure}.category{c}"] = round(statistics.mean(of_c), 4)
    out[f"{name}.questions"] = len(rows)
    out[f"{name}.answer_tokens_mean"] = round(statistics.mean(r.answer_tokens for r in rows), 1)
    out[f"{name}.context_tokens_mean"] = round(statistics.mean(r.context_tokens for r in rows), 1)
    out[f"{name}.input_tokens_mean"] = round(statistics.mean(r.input_tokens for r in rows), 1)
    out[f"{name}.calls_mean"] = round(statistics.mean(r.calls for r in rows), 2)
    out[f"{name}.latency_p50_ms"] = round(percentile([r.latency_ms for r in rows], 0.5), 1)
    out[f"{name}.latency_p95_ms"] = round(percentile([r.latency_ms for r in rows], 0.95), 1)
    out[f"{name}.errors"] = sum(1 for r in rows if r.error)
    out[f"{name}.judge_unanimous"] = round(statistics.mean(float(len(set(r.votes)) == 1) for r in rows), 4)
    return out


def paired_metrics(name: str, a: list[Row], b: list[Row], resamples: int) -> dict[str, float]:
    """``name.j`` / ``name.f1`` = mean(a) - mean(b) over the questions both answered, with intervals."""
    by_question = {r.question: r for r in b}
    pairs = [(r, by_question[r.question]) for r in a if r.question in by_question]
    out: dict[str, float] = {}
    for measure in ("j", "f1"):
        x = [float(getattr(p, "correct" if measure == "j" else "f1")) for p, _ in pairs]
        y = [float(getattr(p, "correct" if measure == "j" else "f1")) for _, p in pairs]
        out[f"{name}.{measure}"] = round(statistics.mean(x) - statistics.mean(y), 4)
        low, high = paired_bootstrap_ci(x, y, resamples=resamples)
        out[f"{name}.{measure}_ci_low"], out[f"{name}.{measure}_ci_high"] = round(low, 4), round(high, 4)
        for c in CATEGORIES:
            of_c = [(u, v) for u, v, (p, _) in zip(x, y, pairs, strict=True) if p.category == c]
            if of_c:
                key = f"{name}.{measure}.category{c}"
                out[key] = round(statistics.mean(u - v for u, v in of_c), 4)
                low, high = paired_bootstrap_ci(
                    [u for u, _ in of_c], [v for _, v in of_c], resamples=resamples
                )
                out[f"{key}_ci_low"], out[f"{key}_ci_high"] = round(low, 4), round(high, 4)
    out[f"{name}.questions"] = len(pairs)
    return out


def metrics_of(rows: list[Row], judge: Judge, resamples: int) -> dict[str, float]:
    names = list(dict.fromkeys(r.row for r in rows))
    by_row = {n: [r for r in rows if r.row == n] for n in names}
    out: dict[str, float] = {}
    for name in names:
        out.update(row_metrics(name, by_row[name], resamples))
    graph = by_row.get("graph", [])
    for other in [n for n in names if n != "graph"]:
        if graph and other != "gold_graph":
            out.update(paired_metrics(f"graph_minus_{other}", graph, by_row[other], resamples))
    if graph and "gold_graph" in by_row:
        out.update(paired_metrics("gold_graph_minus_graph", by_row["gold_graph"], graph, resamples))
    if graph:
        out["graph.fallbacks"] = sum(1 for r in graph if r.extra.get("mode") == "auto" and r.calls > 1)
    agreement = [majority(v)[1] for v in judge.verdicts.values()]
    out["judge.votes"] = judge.votes
    out["judge.distinct_answers"] = len(judge.verdicts)
    out["judge.calls"] = judge.calls
    out["judge.agreement_mean"] = round(statistics.mean(agreement), 4) if agreement else 1.0
    out["judge.unanimous"] = (
        round(statistics.mean(float(a == 1.0) for a in agreement), 4) if agreement else 1.0
    )
    return out


def print_table(metrics: dict[str, float], names: list[str]) -> None:
    keys = ["questions", "j", "j_ci_low", "j_ci_high", "f1", "f1_ci_low", "f1_ci_high",
            *(f"j.category{c}" for c in CATEGORIES), *(f"f1.category{c}" for c in CATEGORIES),
            "answer_tokens_mean", "context_tokens_mean", "input_tokens_mean", "calls_mean",
            "latency_p50_ms", "latency_p95_ms", "judge_unanimous"]  # fmt: skip
    print(f"{'':22}" + "".join(f"{n:>14}" for n in names))
    for key in keys:
        print(f"{key:22}" + "".join(f"{metrics.get(f'{n}.{key}', ''):>14}" for n in names))
