"""What the fault bench (``fault.py``) and its test share: a scripted world whose replies take a
while (so a kill lands inside a model call), the ingesting child process (``fault_child.py``) and its
stage signals, snapshots of a group's graph (names and times, no generated ids) with the consistency
checks every kill is followed by, the reference run the snapshots are compared with, and the kill loop.

The world is the scale bench's ``CityWorld`` (people move between cities: a later move retires the
earlier fact) served by the local OpenAI-compatible test server. An episode's life, as the parent sees
it: **extraction** (an ``extract_*`` request arrives at the server), **invalidation** (the
``resolve_episode`` request that decides which facts the episode retires), **summary** (the
``summarize_entities`` request), **write** (the child prints that its one atomic ``EpisodeWrite`` began).
Each kill picks one stage, waits for the child to enter it and sends SIGKILL after a random delay inside
it: within the reply delay for a model call; within the write's own measured duration for the write.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import random
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.robustness.fault_graph import Snapshot, label_of, missing, reference, snapshot, with_store
from bench.shared.paths import ROOT, module_command
from bench.shared.scale_harness import EXTRACTIONS, CityWorld, episodes
from bench.shared.serve_harness import LLM_KEY, LLMThread
from epigraph import Settings
from epigraph.graph.model import EpisodeStatus
from epigraph.testing.reading import episode_in, prompt_of
from epigraph.testing.server import Reply

CHILD = "bench.robustness.fault_child"
"""The ingesting child, run as ``python -m`` from the repository's root."""
STAGES = ("extraction", "invalidation", "summary", "write")
SUMMARY_SYSTEM = "Write a summary"


@dataclass(frozen=True)
class Event:
    stage: str
    at: float
    """time.monotonic() when the child entered the stage."""


@dataclass
class FaultWorld(CityWorld):
    """``CityWorld`` that puts an :class:`Event` on ``events`` when a request of an episode's stage
    arrives, and remembers the episode whose extraction came last (the one in flight)."""

    events: queue.Queue[Event] = field(default_factory=queue.Queue)
    current: str | None = None

    def __call__(self, body: dict[str, Any]) -> Reply:
        prompt = prompt_of(body)
        stage = None
        if prompt in EXTRACTIONS:
            stage = "extraction"
            if prompt == "extract_entities":
                self.current = episode_in(body)
        elif prompt == "resolve_episode":
            stage = "invalidation"
        elif str(body["messages"][0]["content"]).startswith(SUMMARY_SYSTEM):
            stage = "summary"
        if stage is not None:
            self.events.put(Event(stage, time.monotonic()))
        return super().__call__(body)


# --- the world's episodes ------------------------------------------------------------------------------
def write_episodes(path: Path, group: str, count: int) -> list[str]:
    """``count`` moves of one group as the child's JSONL file; returns their labels in order."""
    items = episodes([group], count)
    rows = [
        {"content": i.content, "reference_time": i.reference_time.isoformat(), "group": group,
         "id": i.episode_id}
        for i in items
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return [label_of(i.reference_time, i.content) for i in items]


# --- the child -----------------------------------------------------------------------------------------
def child_env(llm_url: str, store: dict[str, str], **extra: str) -> dict[str, str]:
    """The child's environment: the test LLM, the hash embedder, short claims (a killed process's claim
    lapses in a second), ``store`` (EPIGRAPH_DB or EPIGRAPH_NEO4J_*); this checkout's ``epigraph``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPIGRAPH_")}
    env.update(
        EPIGRAPH_LLM_BASE_URL=llm_url, EPIGRAPH_LLM_API_KEY=LLM_KEY, EPIGRAPH_LLM_MODEL="fake-model",
        EPIGRAPH_EMBEDDER="hash", EPIGRAPH_LLM_TIMEOUT="10", EPIGRAPH_LLM_MAX_ATTEMPTS="2",
        EPIGRAPH_LLM_MAX_RETRY_SECONDS="2", EPIGRAPH_CLAIM_SECONDS="1", HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1", PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
    )  # fmt: skip
    env.update(store)
    env.update(extra)
    return env


def settings_of(env: dict[str, str]) -> Settings:
    return Settings.from_env(env)


class Child:
    """``fault_child.py FILE`` as a subprocess; its JSON lines are kept in ``lines`` and a ``write``
    of a done episode is put on ``events`` as the write stage. ``kill()`` is kill -9."""

    def __init__(
        self, file: Path, env: dict[str, str], events: queue.Queue[Event], log: Path, args: Sequence[str] = ()
    ) -> None:
        self.events, self.lines = events, list[dict[str, Any]]()
        self.write_windows: list[float] = []
        """Seconds from a done episode's ``write`` line to its ``wrote`` line, as this process saw them."""
        self._write_at = 0.0
        with log.open("ab") as err:
            self.proc = subprocess.Popen(
                module_command(CHILD, str(file), *args), env=env, cwd=ROOT,
                stdout=subprocess.PIPE, stderr=err,
            )  # fmt: skip
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            now = time.monotonic()
            if line.get("event") == "write" and line.get("status") == EpisodeStatus.DONE.value:
                self._write_at = now
                self.events.put(Event("write", now))
            elif line.get("event") == "wrote" and self._write_at:
                self.write_windows.append(now - self._write_at)
                self._write_at = 0.0
            self.lines.append(line)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> bool:
        """SIGKILL; False when the process had already ended by itself."""
        if not self.alive():
            return False
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)
        self._reader.join(10)
        return True

    def wait(self, timeout_s: float) -> int:
        code = self.proc.wait(timeout_s)
        self._reader.join(10)
        return code

    def failures(self) -> list[str]:
        return [str(x.get("error")) for x in self.lines if x.get("event") == "result" and not x.get("ok")]


def drain(events: queue.Queue[Event]) -> None:
    while True:
        try:
            events.get_nowait()
        except queue.Empty:
            return


# --- the kill loop -------------------------------------------------------------------------------------
@dataclass
class Tally:
    kills: int = 0
    per_stage: Counter[str] = field(default_factory=Counter)
    write_kills_after_commit: int = 0
    lost: int = 0
    duplicated: int = 0
    half_written: int = 0
    integrity_failures: int = 0
    diverged: int = 0
    rounds: int = 0
    llm_calls: int = 0
    reference_llm_calls: int = 0
    write_window_ms: float = 0.0
    wall_s: float = 0.0
    problems: list[str] = field(default_factory=list)

    def note(self, what: str, found: Sequence[str]) -> None:
        self.problems += [f"{what}: {p}" for p in found[:5]]

    def metrics(self, prefix: str) -> dict[str, float]:
        out: dict[str, float] = {
            f"{prefix}.{k}": getattr(self, k)
            for k in ("kills", "lost", "duplicated", "half_written", "integrity_failures", "diverged",
                      "rounds", "write_kills_after_commit", "llm_calls", "reference_llm_calls",
                      "write_window_ms", "wall_s")
        }  # fmt: skip
        out.update({f"{prefix}.kills_{s}": self.per_stage[s] for s in STAGES})
        return out


@dataclass
class Target:
    """Where one round runs: ``store`` is the child's store environment, ``fresh(n)`` one for round n
    (a new file, or a new group on Neo4j), ``integrity`` the store's own check after a kill."""

    kind: str
    fresh: Callable[[int], tuple[dict[str, str], str]]
    """Round number -> (store environment, group)."""
    integrity: Callable[[Settings, str], Any]
    child: tuple[str, ...] = ()
    """The child's arguments after its file (``--batch``: one ``add_episodes`` of them all)."""
    env: dict[str, str] = field(default_factory=dict)
    """More of the child's environment (``EPIGRAPH_IN_FLIGHT``)."""


@dataclass
class KillLoop:
    world: FaultWorld
    llm_url: str
    work: Path
    episodes_per_round: int
    rng: random.Random
    log: Callable[[str], None] = print

    def run(
        self, target: Target, kills: int, max_kills_per_round: int, *, uninterrupted: bool = True
    ) -> Tally:
        """``kills`` kills, in rounds of at most ``max_kills_per_round`` on a fresh store each. With
        ``uninterrupted``, first one child run without a kill, whose graph must be the reference's (and
        which measures how long a write takes; else the window is ``WRITE_WINDOW_S``)."""
        tally, started = Tally(), time.monotonic()
        env0, group0 = target.fresh(0)
        file0 = self.work / f"{target.kind}-episodes-ref.jsonl"
        write_episodes(file0, group0, self.episodes_per_round)
        self.world.delay_s = 0.0
        before = self.world.calls
        ref = asyncio.run(reference(settings_of(child_env(self.llm_url, env0)), file0, group0))
        tally.reference_llm_calls = self.world.calls - before
        windows = self._uninterrupted(target, ref[-1]) if uninterrupted else [WRITE_WINDOW_S]
        self.world.delay_s = DELAY_S
        window_s = max(0.001, sorted(windows)[len(windows) // 2])
        tally.write_window_ms = round(window_s * 1000, 2)
        self.log(
            f"{target.kind}: reference built; a write is {window_s * 1000:.1f} ms from its signal to "
            "its return (median)"
        )
        n = 1
        while tally.kills < kills:
            budget = min(max_kills_per_round, kills - tally.kills)
            self._round(target, n, budget, ref, window_s, tally)
            n += 1
        tally.wall_s = round(time.monotonic() - started, 1)
        return tally

    def _uninterrupted(self, target: Target, expected: tuple[Any, ...]) -> list[float]:
        """One child run of all the episodes without a kill: its graph must be the reference's."""
        env, group = target.fresh(1000)
        file = self.work / f"{target.kind}-episodes-whole.jsonl"
        write_episodes(file, group, self.episodes_per_round)
        env = child_env(self.llm_url, env, **target.env)
        child = Child(file, env, self.world.events, self.work / "child.log", target.child)
        code = child.wait(300)
        got = asyncio.run(with_store(settings_of(env), lambda s: snapshot(s, group)))
        if code != 0 or got.graph() != expected:
            raise SystemExit(f"{target.kind}: the uninterrupted child run differs from the reference "
                             f"(exit {code}; see {self.work / 'child.log'})")  # fmt: skip
        drain(self.world.events)
        return child.write_windows

    def _round(self, target: Target, n: int, budget: int, ref: list[tuple[Any, ...]], window_s: float,
               tally: Tally) -> None:  # fmt: skip
        """Fresh store, then kill the child ``budget`` times at random stages (restarting it each time),
        then let it finish; every kill is followed by the checks, the end by the comparison."""
        store_env, group = target.fresh(n)
        env = child_env(self.llm_url, store_env, **target.env)
        settings = settings_of(env)
        file = self.work / f"{target.kind}-episodes-{n}.jsonl"
        labels = write_episodes(file, group, self.episodes_per_round)
        runs_before = Counter(self.world.runs)
        calls_before = self.world.calls
        interrupted: Counter[str] = Counter()
        killed = 0
        tally.rounds += 1
        while True:
            drain(self.world.events)
            child = Child(file, env, self.world.events, self.work / "child.log", target.child)
            started_runs = Counter(self.world.runs)
            if killed >= budget:
                code = child.wait(300)
                if code != 0:
                    raise SystemExit(f"{target.kind}: the resumed child failed (exit {code}): "
                                     f"{child.failures()[:3]}; see {self.work / 'child.log'}")  # fmt: skip
                break
            stage = self.rng.choice(STAGES)
            if not self._kill_in(child, stage, window_s):
                child.wait(300)
                break  # the child finished first: the round is over
            killed += 1
            tally.kills += 1
            tally.per_stage[stage] += 1
            current = self.world.current
            asked = Counter(self.world.runs)
            asked.subtract(started_runs)  # extracted by this child: the one in flight, and those run ahead
            snap = self._after_kill(target, settings, group, ref, tally)
            if current is not None and snap is not None:
                done = {label.split(" ", 1)[1] for label in snap.done}
                for content in (c for c, k in asked.items() if k > 0 and c not in done):
                    interrupted[content] += 1
                if current in done and stage == "write":
                    tally.write_kills_after_commit += 1
        final = asyncio.run(with_store(settings, lambda s: snapshot(s, group)))
        tally.lost += sum(1 for label in labels if label not in final.done)
        gone = missing(ref[-1], final.graph())
        if gone:
            tally.lost += len(gone)
            tally.note(f"{target.kind} round {n} lost", gone)
        dups = final.duplicates()
        runs = Counter(self.world.runs)
        runs.subtract(runs_before)
        extra = {c: runs[c] - 1 - interrupted[c] for c in runs if runs[c] - 1 - interrupted[c] > 0}
        tally.duplicated += len(dups) + sum(extra.values())
        tally.note(
            f"{target.kind} round {n} duplicated", dups + [f"{c!r} ran {k} extra" for c, k in extra.items()]
        )
        if final.graph() != ref[-1] and not gone and not dups:
            tally.diverged += 1
            tally.note(
                f"{target.kind} round {n} differs from the reference", [repr(missing(final.graph(), ref[-1]))]
            )
        tally.llm_calls += self.world.calls - calls_before
        self.log(f"{target.kind} round {n}: {killed} kills, {len(final.done)}/{len(labels)} done, "
                 f"lost {tally.lost}, duplicated {tally.duplicated}, half-written {tally.half_written}, "
                 f"integrity failures {tally.integrity_failures}")  # fmt: skip

    def _kill_in(self, child: Child, stage: str, window_s: float) -> bool:
        """Wait until the child enters ``stage``, then SIGKILL it at a random moment inside it. False
        when the child ended first."""
        while True:
            try:
                event = self.world.events.get(timeout=0.2)
            except queue.Empty:
                if not child.alive():
                    return False
                continue
            if event.stage != stage:
                continue
            length = DELAY_S * 0.9 if stage != "write" else window_s
            pause = event.at + self.rng.uniform(0, length) - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            return child.kill()

    def _after_kill(self, target: Target, settings: Settings, group: str, ref: list[tuple[Any, ...]],
                    tally: Tally) -> Snapshot | None:  # fmt: skip
        """The store's own check, then the graph: consistent, no duplicates, and exactly the reference
        after as many episodes as are done."""
        problems = asyncio.run(target.integrity(settings, group))
        if problems:
            tally.integrity_failures += 1
            tally.note(f"{target.kind} kill {tally.kills} integrity", problems)
        snap: Snapshot = asyncio.run(with_store(settings, lambda s: snapshot(s, group)))
        if snap.dangling:
            tally.integrity_failures += 1
            tally.note(f"{target.kind} kill {tally.kills} dangling", snap.dangling)
        if snap.half_written:
            tally.half_written += 1
            tally.note(f"{target.kind} kill {tally.kills} half-written", snap.half_written)
        done = len(snap.done)
        if snap.duplicates():
            tally.duplicated += 1
            tally.note(f"{target.kind} kill {tally.kills} duplicated", snap.duplicates())
        elif not snap.half_written and snap.graph() != ref[done]:
            tally.half_written += 1
            tally.note(
                f"{target.kind} kill {tally.kills} not the reference after {done} episodes",
                [repr(missing(ref[done], snap.graph())), repr(missing(snap.graph(), ref[done]))],
            )
        return snap


DELAY_S = 0.15
"""Every model reply takes this long during the kills (a kill lands inside the call)."""
WRITE_WINDOW_S = 0.01
"""How long after its start a write is killed at most, when no uninterrupted run measured it."""


def start_world() -> tuple[FaultWorld, LLMThread]:
    world = FaultWorld()
    return world, LLMThread(world)
