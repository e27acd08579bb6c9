"""Local server bench: the local model's server by slots, threads and a busy machine.

The local model's server under different settings: slots (calls side by side), threads, and a busy
machine. Written to ``bench/results/local_server.json``.

For each setting a server of its own is started (``python -m epigraph.local_model.serve``) and sent the
same work: the combined extraction of the quickstart conversation's turns (the prompts ingestion sends,
grammar included), ``--requests`` calls, ``slots`` at a time (what groups ingesting side by side send).
Measured per setting: generated tokens per second over all calls (throughput), the server's own
generation speed per call (llama.cpp's ``timings``), prompt tokens per second, seconds per call. With
``--load N`` the same runs again beside N busy processes (a CPU-bound job on the machine)::

    python -m bench local_server                   # slots 1,2,4 x threads 1,2, idle and loaded
    python -m bench local_server --slots 1,2 --threads 2 --load 1 --requests 8

Run it with nothing else on the CPU: the point is what the machine's own work does to the model.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.shared.results import write_results
from epigraph.config import Settings
from epigraph.local_model import MODEL_NAME, LocalModel
from epigraph.local_model.serve import POLL
from epigraph.local_model.server import SERVE_MODULE, free_port, healthy
from epigraph.pipeline.options import small_model_options
from epigraph.prompts import extract_combined as cp
from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.runtime import build_request
from examples.quickstart import conversation

BUSY = "while True: pass"


def requests(count: int) -> list[dict[str, Any]]:
    """``count`` chat bodies: the combined extraction of the quickstart turns, in turn."""
    turns = [i for i in conversation() if len(i.content.split()) > 3]
    bodies = []
    for n in range(count):
        item = turns[n % len(turns)]
        data = cp.ExtractCombinedInput(**ExtractionInput.of(f"{item.speaker}: {item.content}", item.speaker))
        request = build_request(cp.PROMPT, data)
        bodies.append(
            {
                "model": MODEL_NAME,
                "messages": request.messages,
                "max_tokens": request.max_tokens,
                "temperature": 0,
                "grammar": request.grammar,
                "cache_prompt": True,
            }
        )
    return bodies


@contextmanager
def server(model: Path, threads: int, slots: int, poll: int) -> Iterator[str]:
    port = free_port()
    command = [
        sys.executable, "-m", SERVE_MODULE, "--model", str(model), "--port", str(port), "--ctx", "8192",
        "--threads", str(threads), "--slots", str(slots), "--poll", str(poll), "--alias", MODEL_NAME,
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while not healthy(url):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server did not start ({command})")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        process.wait(30)


@contextmanager
def busy(processes: int) -> Iterator[None]:
    """``processes`` CPU-bound jobs beside the server while the block runs."""
    jobs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(processes)]
    try:
        yield
    finally:
        for job in jobs:
            job.kill()
            job.wait()


async def run(url: str, bodies: Sequence[dict[str, Any]], at_once: int, budget_s: float) -> dict[str, float]:
    """Send ``bodies``, ``at_once`` in flight, none started after ``budget_s`` seconds (a collapsed
    setting ends with the calls it finished); what the server did with them."""
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)
    done: list[tuple[float, dict[str, Any]]] = []

    async def worker(client: httpx.AsyncClient) -> None:
        while not queue.empty() and time.perf_counter() - began < budget_s:
            body = queue.get_nowait()
            sent = time.perf_counter()
            reply = (await client.post(f"{url}/v1/chat/completions", json=body)).json()
            done.append((time.perf_counter() - sent, reply))

    began = time.perf_counter()  # reset after the warm-up
    async with httpx.AsyncClient(timeout=900) as client:
        await client.post(f"{url}/v1/chat/completions", json={**bodies[0], "max_tokens": 1})  # warm up
        began = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(at_once)))
        wall = time.perf_counter() - began
    generated = sum(r["usage"]["completion_tokens"] for _, r in done)
    timings = [r.get("timings", {}) for _, r in done]
    return {
        "calls": len(done),
        "generated_tokens": generated,
        "tokens_per_s": round(generated / wall, 2),
        "generation_per_call_tokens_per_s": round(
            statistics.median(t.get("predicted_per_second", 0) for t in timings), 2
        ),
        "prompt_tokens_per_s": round(statistics.median(t.get("prompt_per_second", 0) for t in timings), 2),
        "seconds_per_call_p50": round(statistics.median(s for s, _ in done), 2),
        "wall_s": round(wall, 1),
    }


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", default="1,2,4")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--load", default="0,1", help="busy processes beside the server (0: idle)")
    parser.add_argument("--poll", default=str(POLL), help="llama.cpp thread polling, 0-100 (comma list)")
    parser.add_argument("--requests", type=int, default=8, help="calls per setting")
    parser.add_argument(
        "--budget", type=float, default=300, help="seconds per setting after which no call starts"
    )
    parser.add_argument("--results-dir", type=Path)
    args = parser.parse_args(argv)
    model = LocalModel(Settings.from_env()).ensure_weights()
    bodies = requests(args.requests)
    metrics: dict[str, float] = {}
    for threads in _ints(args.threads):
        for poll in _ints(args.poll):
            for slots in _ints(args.slots):
                with server(model, threads, slots, poll) as url:
                    for load in _ints(args.load):
                        with busy(load):
                            got = await run(url, bodies, slots, args.budget)
                        key = f"threads{threads}.slots{slots}.load{load}" + (
                            "" if poll == POLL else f".poll{poll}"
                        )
                        print(key, got, flush=True)
                        metrics.update({f"{key}.{k}": v for k, v in got.items()})
    notes = [
        f"model: local {MODEL_NAME} (Q4_K_M GGUF, llama.cpp via xllamacpp), a server started per setting",
        f"work: {args.requests} combined extractions of the quickstart turns (grammar on), slots at a time; "
        f"no call started after {args.budget:g} s (calls: how many ran)",
        "load<N>: N busy Python processes (while True: pass) beside the server during the run",
        "tokens_per_s: generated tokens of all calls / wall time; generation_per_call: llama.cpp's own "
        "per-call speed (median)",
        f"small model options: mode {small_model_options().mode}",
    ]
    print(f"wrote {write_results('local_server', metrics, notes, results_dir=args.results_dir)}")


if __name__ == "__main__":
    asyncio.run(main())
