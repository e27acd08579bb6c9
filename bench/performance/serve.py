"""Serve bench: ``epigraph serve`` under load and under faults (loopback only, bounded, stops by itself).

Load: ``--clients`` concurrent clients add ``--episodes`` episodes (batches of 4) to 8 groups while 4
clients search; the LLM is the local test server answering every call after ``--delay`` seconds.
Reports accepted episodes/s (202s), search p50/p95 under that load (embedded SQLite store) and how
fast the workers drained the queue.

Mixed: ``--mixed-clients`` (50) concurrent clients for ``--seconds`` (120) read and write at once on a
fresh server (search, an entity's view, the episodes listing, ask, POST an episode: ``serve_load``) while
it ingests what they post; then the queue drains and every accepted episode is audited. Reports errors
(any answer not 2xx), lost and duplicated episodes, and p50 / p95 per route (``mixed.<route>.*``).

Faults, one fresh server and graph per row, 24 episodes over 8 groups each: ``kill_restart`` (kill -9
once a few are done, restart), ``llm_429`` (a storm of 429s), ``llm_5xx`` (500s), ``llm_hang`` (replies
that never come; the server's LLM timeout is 2 s). After a fault window the failed episodes are retried
once (``POST .../episodes/retry``). Per row: accepted, done, failed (after the retry), lost (accepted
but not stored, or still pending at the end) and duplicated (an episode or a fact stored twice).

    python -m bench serve                                         # ~6-8 minutes on 2 cores
    python -m bench serve --episodes 80 --rows kill_restart
    python -m bench serve --seconds 20 --mixed-clients 10 --rows  # a short mixed run
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from bench.performance.serve_load import WEIGHTS, MixedLoad, mixed_load
from bench.shared.paths import child_env, module_command
from bench.shared.results import write_results
from bench.shared.serve_harness import LLMThread, ServerProcess, World, server_env

GROUPS = [f"g{i}" for i in range(8)]
SEEDED = 8
"""Mixed load: episodes per group ingested before the clients start (the entities they read)."""
ROWS = ("kill_restart", "llm_429", "llm_5xx", "llm_hang")
T = "2024-05-02T10:00:00Z"


def name(group: int, i: int) -> str:
    """A capitalized word of letters only, unique per (group, i): the world's entities."""
    letters = ""
    n = group * 100_000 + i
    while True:
        n, d = divmod(n, 26)
        letters += chr(97 + d)
        if n == 0:
            return "Nam" + letters


def episode(group: int, i: int) -> dict[str, str]:
    return {"content": f"{name(group, 2 * i)} met {name(group, 2 * i + 1)}.", "reference_time": T}


async def add_all(client: httpx.AsyncClient, per_group: int, clients: int) -> dict[str, list[str]]:
    """``clients`` workers post every group's episodes in batches of 4 (a group's batches in order)."""
    batches = [(g, list(range(i, min(i + 4, per_group)))) for g in range(8) for i in range(0, per_group, 4)]
    queue: asyncio.Queue[tuple[int, list[int]]] = asyncio.Queue()
    for batch in batches:
        queue.put_nowait(batch)
    accepted: dict[str, list[str]] = {g: [] for g in GROUPS}
    locks = {g: asyncio.Lock() for g in range(8)}

    async def worker() -> None:
        while not queue.empty():
            g, idx = queue.get_nowait()
            async with locks[g]:  # one group's batches in order, like one client per conversation
                body = {"episodes": [episode(g, i) for i in idx]}
                r = await client.post(f"/v1/groups/g{g}/episodes/batch", json=body)
                r.raise_for_status()
                accepted[f"g{g}"] += [e["uuid"] for e in r.json()["episodes"]]

    await asyncio.gather(*(worker() for _ in range(clients)))
    return accepted


async def searcher(client: httpx.AsyncClient, stop: asyncio.Event, per_group: int, out: list[float]) -> None:
    rng = random.Random(len(out))
    while not stop.is_set():
        g = rng.randrange(8)
        params = {"q": f"{name(g, rng.randrange(2 * per_group))} knows", "scope": "facts", "limit": 10}
        started = time.perf_counter()
        r = await client.get(f"/v1/groups/g{g}/search", params=params)
        out.append((time.perf_counter() - started) * 1000)
        r.raise_for_status()
        await asyncio.sleep(0.05)  # a client thinking between searches, not a closed loop


async def counts(client: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    return {g: (await client.get(f"/v1/groups/{g}/stats")).json() for g in GROUPS}


async def wait_drained(client: httpx.AsyncClient, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if all(c["pending_episodes"] == 0 for c in (await counts(client)).values()):
            return True
        await asyncio.sleep(1.0)
    return False


async def search_process(url: str, per_group: int) -> list[float]:
    """The searching clients, in a process of their own (``--search-only``): searches until a line
    arrives on stdin, then prints the latencies (ms) as one JSON line. Apart from the adding clients and
    the test LLM, their timings do not include this bench's own scheduling."""
    latencies: list[float] = []
    stop = asyncio.Event()
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        tasks = [asyncio.create_task(searcher(client, stop, per_group, latencies)) for _ in range(4)]
        await asyncio.to_thread(sys.stdin.readline)
        stop.set()
        await asyncio.gather(*tasks)
    return latencies


async def _searching(url: str, per_group: int) -> asyncio.subprocess.Process:
    cmd = module_command("bench.performance.serve", "--search-only", url, "--episodes", str(per_group * 8))
    return await asyncio.create_subprocess_exec(
        *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=child_env()
    )


async def _stop_searching(proc: asyncio.subprocess.Process) -> list[float]:
    out, _ = await proc.communicate(b"stop\n")
    latencies: list[float] = json.loads(out.decode().strip().splitlines()[-1])
    return latencies


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def load(url: str, pid: int, per_group: int, clients: int, time_limit: float) -> dict[str, float]:
    searching = await _searching(url, per_group)
    load_before = os.getloadavg()[0]
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        started, cpu_started = time.perf_counter(), cpu_s(pid)
        accepted = await add_all(client, per_group, clients)
        accept_s = time.perf_counter() - started
        drained = await wait_drained(client, time_limit)
        drain_s, load_cpu = time.perf_counter() - started, cpu_s(pid) - cpu_started
    latencies = await _stop_searching(searching)
    quiet, cpu_quiet = await _searching(url, per_group), cpu_s(pid)
    await asyncio.sleep(5.0)  # the same searches with ingestion finished: this machine's baseline
    idle = await _stop_searching(quiet)
    idle_cpu = cpu_s(pid) - cpu_quiet
    total = sum(len(v) for v in accepted.values())
    return {
        "server_cpu_share_under_load": load_cpu / drain_s, "server_cpu_ms_per_idle_search": 1000 * idle_cpu
        / max(1, len(idle)), "load_average_before": load_before, "load_average_after": os.getloadavg()[0],
        "accepted": total, "accepted_per_s": total / accept_s, "search_p50_ms": statistics.median(latencies),
        "search_p95_ms": statistics.quantiles(latencies, n=100)[94], "searches": len(latencies),
        "episodes_done_per_s": total / drain_s, "drained": float(drained),
        "search_idle_p50_ms": statistics.median(idle),
        "search_idle_p95_ms": statistics.quantiles(idle, n=100)[94],
    }  # fmt: skip


async def audit(url: str, accepted: dict[str, list[str]]) -> dict[str, int]:
    """accepted / done / failed / lost / duplicated, from the server's own answers."""
    out = Counter[str]()
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        for g, ids in accepted.items():
            listed = (await client.get(f"/v1/groups/{g}/episodes", params={"limit": 1000})).json()["episodes"]
            status = {e["uuid"]: e["status"] for e in listed}
            out["accepted"] += len(ids)
            out["done"] += sum(status.get(u) == "done" for u in ids)
            out["failed"] += sum(status.get(u) == "failed" for u in ids)
            out["lost"] += sum(status.get(u) in (None, "pending") for u in ids)
            out["duplicated"] += len(listed) - len(set(status)) + len(set(status) - set(ids))
            params = {"q": "knows", "scope": "facts", "limit": 100}
            facts = (await client.get(f"/v1/groups/{g}/search", params=params)).json()["facts"]
            texts = Counter(f["fact"]["text"] for f in facts)
            out["duplicated"] += sum(n - 1 for n in texts.values())
            out["duplicated"] += sum(len(f["fact"]["episodes"]) - 1 for f in facts)
    return {k: out[k] for k in ("accepted", "done", "failed", "lost", "duplicated")}


def mixed_row(env: dict[str, str], log: Path, clients: int, seconds: float) -> dict[str, float]:
    """The mixed load on a fresh server: ``SEEDED`` episodes a group first, then the clients (a process
    of their own: ``--mixed-only``), then the drain and the audit of every accepted episode."""
    server = ServerProcess(env, log).start()
    try:
        seeded = asyncio.run(_add(server.url, SEEDED))
        asyncio.run(_drain(server.url))
        cmd = module_command("bench.performance.serve", "--mixed-only", server.url,
                             "--mixed-clients", str(clients), "--seconds", str(seconds))  # fmt: skip
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=child_env()).stdout
        load = MixedLoad.from_json(json.loads(out.strip().splitlines()[-1]))
        started = time.perf_counter()
        drained = asyncio.run(_drain(server.url))
        drain_s = time.perf_counter() - started
        accepted = {g: [*seeded[g], *load.accepted.get(g, [])] for g in GROUPS}
        audited = asyncio.run(audit(server.url, accepted))
    finally:
        server.stop()
    figures = {f"{k}": float(v) for k, v in audited.items()}
    figures.update(load.figures())
    figures.update(clients=float(clients), seconds=seconds, drain_after_s=drain_s, drained=float(drained),
                   posted_per_s=len(load.latencies_ms["post"]) / seconds)  # fmt: skip
    for sample in load.samples:
        print(f"  error: {sample}")
    return figures


def _mixed_only(url: str, clients: int, seconds: float) -> MixedLoad:
    def entity(g: int, i: int) -> str:
        return name(g, 2 * i)

    return asyncio.run(mixed_load(url, GROUPS, SEEDED, clients, seconds, episode, entity))


async def retry_all(url: str) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        for g in GROUPS:
            (await client.post(f"/v1/groups/{g}/episodes/retry")).raise_for_status()
        await wait_drained(client, 90)


def fault_row(row: str, world: World, env: dict[str, str], log: Path) -> dict[str, int]:
    """One fault scenario on a fresh server (3 episodes per group), then its audit."""
    server = ServerProcess(env, log).start()
    sent = world.faults_sent
    try:
        if row != "kill_restart":
            world.fault = {"llm_429": "429", "llm_5xx": "500", "llm_hang": "hang"}[row]
        accepted = asyncio.run(_add(server.url))
        if row == "kill_restart":
            asyncio.run(_until_done(server.url, 4, 60))
            server.kill()
            server = ServerProcess(env, log).start()
        else:
            time.sleep(6.0 if row == "llm_hang" else 3.0)  # the fault window
            world.fault = None
        asyncio.run(_drain(server.url))
        before = asyncio.run(audit(server.url, accepted))
        asyncio.run(retry_all(server.url))
        after = asyncio.run(audit(server.url, accepted))
        return {**after, "failed_before_retry": before["failed"], "llm_faults": world.faults_sent - sent}
    finally:
        world.fault = None
        server.stop()


async def _add(url: str, per_group: int = 3) -> dict[str, list[str]]:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        return await add_all(client, per_group, 8)


async def _drain(url: str) -> bool:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        return await wait_drained(client, 120)


async def _until_done(url: str, done: int, timeout_s: float) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            stats = await counts(client)
            if (
                sum(s["episodes"] - s["pending_episodes"] - s["failed_episodes"] for s in stats.values())
                >= done
            ):
                return
            await asyncio.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--episodes", type=int, default=160, help="load phase: episodes in all (8 groups)")
    parser.add_argument("--clients", type=int, default=16, help="load phase: concurrent adding clients")
    parser.add_argument("--delay", type=float, default=0.05, help="the LLM's delay per reply (s)")
    parser.add_argument("--rows", nargs="*", choices=ROWS, default=list(ROWS), help="fault rows to run")
    parser.add_argument("--time-limit", type=float, default=240.0, help="load phase: drain at most this long")
    parser.add_argument("--results-dir", type=Path, help="where serve.json goes (default bench/results)")
    parser.add_argument("--seconds", type=float, default=120.0, help="mixed phase: how long the clients run")
    parser.add_argument("--mixed-clients", type=int, default=50, help="mixed phase: clients (0: skip it)")
    parser.add_argument("--search-only", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--mixed-only", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.search_only:
        print(json.dumps(asyncio.run(search_process(args.search_only, max(1, args.episodes // 8)))))
        return 0
    if args.mixed_only:
        print(json.dumps(_mixed_only(args.mixed_only, args.mixed_clients, args.seconds).to_json()))
        return 0
    metrics: dict[str, float] = {"llm_delay_s": args.delay}
    with (
        tempfile.TemporaryDirectory(prefix="serve-bench-") as tmp,
        LLMThread(World(delay_s=args.delay)) as llm,
    ):
        log = Path(tmp) / "serve.log"
        server = ServerProcess(server_env(Path(tmp) / "load.db", llm.url), log).start()
        try:
            assert server.proc is not None
            per_group = max(1, args.episodes // 8)
            figures = asyncio.run(load(server.url, server.proc.pid, per_group, args.clients, args.time_limit))
        finally:
            server.stop()
        metrics.update({k: round(v, 3) for k, v in figures.items()})
        f = figures
        print(f"load: {f['accepted']:.0f} episodes accepted at {f['accepted_per_s']:.1f}/s, done at "
              f"{f['episodes_done_per_s']:.1f}/s; search p50 {f['search_p50_ms']:.1f} ms, p95 "
              f"{f['search_p95_ms']:.1f} ms over {f['searches']:.0f} searches (idle: "
              f"{f['search_idle_p50_ms']:.1f} / {f['search_idle_p95_ms']:.1f} ms, server CPU "
              f"{f['server_cpu_ms_per_idle_search']:.1f} ms a search); server CPU "
              f"{f['server_cpu_share_under_load']:.2f} of a core under load; load average "
              f"{f['load_average_before']:.1f} -> {f['load_average_after']:.1f}")  # fmt: skip
        if args.mixed_clients > 0:
            env = server_env(Path(tmp) / "mixed.db", llm.url)
            mixed = mixed_row(env, log, args.mixed_clients, args.seconds)
            metrics.update({f"mixed.{k}": round(v, 3) for k, v in mixed.items()})
            print(f"mixed: {args.mixed_clients} clients for {args.seconds:.0f} s: {mixed['requests']:.0f} "
                  f"requests, {mixed['errors']:.0f} errors; {mixed['accepted']:.0f} episodes accepted, "
                  f"{mixed['done']:.0f} done, {mixed['lost']:.0f} lost, {mixed['duplicated']:.0f} duplicated "
                  f"(drained {mixed['drain_after_s']:.1f} s after the clients stopped)")  # fmt: skip
            for route in (r for r in WEIGHTS if f"{r}.p50_ms" in mixed):
                n, p50, p95 = (mixed[f"{route}.{k}"] for k in ("requests", "p50_ms", "p95_ms"))
                print(f"  {route:<9} {n:>6.0f} requests  p50 {p50:>7.1f} ms  p95 {p95:>7.1f} ms")
        print(f"{'fault':<14}{'accepted':>9}{'done':>6}{'failed':>7}{'lost':>6}{'duplicated':>11}")
        for row in args.rows:
            result = fault_row(row, llm.world, server_env(Path(tmp) / f"{row}.db", llm.url), log)
            columns = zip(("accepted", "done", "failed", "lost", "duplicated"), (9, 6, 7, 6, 11), strict=True)
            print(f"{row:<14}" + "".join(f"{result[k]:>{w}}" for k, w in columns)
                  + f"   ({result['llm_faults']} LLM faults; {result['failed_before_retry']} failed "
                  "before the retry)")  # fmt: skip
            metrics.update({f"faults.{row}.{k}": float(v) for k, v in result.items()})
    notes = [
        f"setup: embedded SQLite store, hash embedder, the local test LLM answering after {args.delay} s; "
        f"{args.clients} adding clients (batches of 4) and 4 searching clients (a process of their own, "
        "50 ms between searches) over 8 groups, loopback",
        f"mixed: {args.mixed_clients} clients for {args.seconds:.0f} s on a fresh server ({SEEDED} done "
        f"episodes a group first), each choosing a route by weight ({WEIGHTS}) and pausing 0.3-1.2 s "
        "between requests, in a process of their own; errors = answers not 2xx; lost = accepted but not "
        "done once drained; latencies per route as the clients measured them",
        "faults: each row a fresh server, 24 episodes over 8 groups, one retry of failed episodes after "
        "the fault window; lost = accepted but missing or still pending; duplicated = an episode or fact "
        "stored twice",
        f"machine load: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the end (other "
        "programs share it); search_idle_*: the same searches once ingestion had finished",
    ]
    print(write_results("serve", metrics, notes, results_dir=args.results_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
