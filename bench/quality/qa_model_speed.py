"""How fast the model server reads and writes right now, so a bench's latencies can be read against the
host's speed: on a shared host llama.cpp's speed moves from one hour to the next, and a latency p50
moves with it (docs/decisions/2026-11-25-ask.md). And which llama.cpp the local server runs
(:func:`model_runtime`: the wheel, or a build for this CPU from ``epigraph model build``, which reads
prompts much faster on AVX-512)."""

from __future__ import annotations

import time
from pathlib import Path

from epigraph.config import Settings
from epigraph.local_model import LocalModel
from epigraph.prompts.protocol import LLM, ChatRequest, Completion

PROBE = "model_speed"
"""The probe's prompt name (a scripted model answers it like any prompt)."""
READ_WORDS = 300
"""The reading probe's prompt: this many short words (some 600 tokens, about an answer's context)."""
WRITE_TOKENS = 64
"""The writing probe's reply: at most this many tokens (it is asked for more)."""


async def model_speed(llm: LLM) -> dict[str, float]:
    """Two calls: a long prompt with a one-token reply (prompt tokens read per second), then a short
    prompt with a long reply (tokens generated per second, the prompt's reading taken out). Each prompt
    starts with a fresh number, so the server's prompt cache cannot serve it."""
    nonce = time.time_ns()
    words = " ".join(f"w{i}" for i in range(READ_WORDS))
    read, read_s = await _timed(llm, f"{nonce}. Reply with the word ok.\n{words}", 1)
    write, write_s = await _timed(llm, f"{nonce + 1}. Count from 1 to 500, one number a line.", WRITE_TOKENS)
    prompt_tps = read.usage.input_tokens / max(read_s, 1e-6)
    writing_s = max(write_s - write.usage.input_tokens / max(prompt_tps, 1e-6), 1e-6)
    return {
        "prompt_tokens_per_s": round(prompt_tps, 1),
        "generated_tokens_per_s": round(write.usage.output_tokens / writing_s, 1),
    }


async def _timed(llm: LLM, text: str, max_tokens: int) -> tuple[Completion, float]:
    messages = [{"role": "user", "content": text}]
    request = ChatRequest(messages, prompt_name=PROBE, max_tokens=max_tokens, temperature=0.0)
    started = time.perf_counter()
    completion = await llm.complete(request)
    return completion, time.perf_counter() - started


def model_runtime(settings: Settings, *, scripted: bool) -> str:
    """What answers the run: ``scripted``, ``endpoint`` (a server of the user's), or the local server's
    llama.cpp (``wheel``, or the name of its build for this CPU; ``not running`` when none answers)."""
    if scripted:
        return "scripted"
    if not settings.llm_local:
        return "endpoint"
    state = LocalModel(settings).status()
    if state is None:
        return "not running"
    return state.runtime if state.runtime == "wheel" else f"build {Path(state.runtime).name}"
