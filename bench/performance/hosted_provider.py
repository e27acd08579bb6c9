"""The simulated hosted provider of the hosted bench: a gpt-4o-mini-class chat model and an embedding
model behind OpenAI's rate limits at a usage tier, served by ``epigraph.testing``'s fake server
(``FakeOpenAIServer`` with ``Terms``: limits, latency, 5xx) in a process of its own, so the bench's own
CPU never delays its clock. Run by the bench (``SimProvider``); by hand::

    python -m bench.performance.hosted_provider --tier tier1 --gold bench/data/locomo26_s1-3.json \\
        --conversation ../shared/datasets/locomo      # prints {"url": ...}; stops when stdin closes

What it assumes, and where each figure comes from (read 2026-12; no hosted model is reachable here):

- **Limits** (``TIERS``): OpenAI's published gpt-4o-mini limits, tier 1 500 RPM / 200,000 TPM, tier 2
  5,000 RPM / 2,000,000 TPM; text-embedding-3-small 3,000 RPM / 1,000,000 TPM (tier 1) and 5,000 RPM /
  1,000,000 TPM (tier 2). Enforced per minute as OpenAI's headers show (``epigraph.testing.terms``:
  buckets refilled continuously, a request charged its characters / 4 plus its ``max_tokens``, never
  refunded). Tier 1's 10,000 requests a day are not simulated (a day is longer than the bench).
- **Latency** (``CHAT_LATENCY``): time to first token 0.40 s plus the prompt at 17,000 tokens/s
  (Artificial Analysis: GPT-4o 0.39 s at 1k input tokens, GPT-4.1 mini 0.93 s at 10k, OpenAI; the
  difference read as prefill speed), output at 60 tokens/s (gpt-4o-mini: 59 t/s average, 46-70, in a
  community run of ``tacho``, community.openai.com "Inference speed of different models"), a
  log-normal jitter of sigma 0.35 on each request (never below half its nominal time), and 1% of
  replies 4 times slower (the heavy tail live telemetry shows: p50 0.7 s, p95 4.1 s for gpt-4o-mini at
  OpenAI, newmen.ai). Embeddings: 0.15 s plus 100,000 tokens/s, the same jitter.
- **Failures**: 0.2% of requests answered 500 after being charged (``ERROR_RATE``).
- **Usage** reported as the provider would: prompt and completion tokens counted with the cl100k BPE
  (gpt-4o-mini uses o200k; the counts differ by a few percent). Prompt caching is not simulated, so the
  cost figures are an upper bound for prompts whose fixed part OpenAI would cache.
- **Embeddings**: all-MiniLM-L6-v2 computed here (384 dimensions), the model the ingest bench uses, so
  the graph built from the gold turns can equal ``ingest.json``'s; ``--embeddings hash`` for unit
  vectors without a model.
- **Answers**: ``hosted_answers`` (our prompts: gold answers on gold turns, the ``hosted_world`` reading
  elsewhere) and ``hosted_graphiti_answers`` (Graphiti's response models, from the same reading).

``GET /sim/stats`` answers what it served: each model's admissions (time, tokens charged), refusals,
statuses, answers by prompt; ``GET /sim/gold`` what the gold scripts were shown (candidate recall).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bench.performance.hosted_answers import EpigraphAnswers
from bench.performance.hosted_graphiti_answers import GraphitiAnswers
from bench.shared.gold import GoldSet, load_sets
from bench.shared.paths import child_env, module_command
from epigraph.embed import SentenceTransformerEmbedder
from epigraph.testing.server import FakeOpenAIServer, Latency, RateLimits, Reply, Terms
from epigraph.tokens import count_message_tokens, count_text_tokens

CHAT_MODEL = "gpt-4o-mini"
EMBED_MODEL = "text-embedding-3-small"
EMBED_DIM = 384
API_KEY = "sk-sim-not-a-secret"


@dataclass(frozen=True)
class Tier:
    name: str
    rpm: int
    tpm: int
    embed_rpm: int
    embed_tpm: int


TIERS = {
    "tier1": Tier("tier1", 500, 200_000, 3_000, 1_000_000),
    "tier2": Tier("tier2", 5_000, 2_000_000, 5_000, 1_000_000),
}
CHAT_LATENCY = Latency(
    first_token_s=0.40,
    input_tokens_per_s=17_000.0,
    output_tokens_per_s=60.0,
    jitter=0.35,
    floor=0.5,
    slow_rate=0.01,
    slow_factor=4.0,
)
EMBED_LATENCY = Latency(first_token_s=0.15, input_tokens_per_s=100_000.0, jitter=0.35, floor=0.5)
ERROR_RATE = 0.002


@dataclass(frozen=True)
class Price:
    """USD per million tokens: gpt-4o-mini's list price (input 0.15, output 0.60; unchanged since its
    July 2024 launch, read 2026-12 on openai.com/api/pricing), text-embedding-3-small 0.02."""

    input: float = 0.15
    output: float = 0.60
    embedding: float = 0.02
    read_on: str = "2026-12-01"

    def dollars(self, input_tokens: float, output_tokens: float, embedding_tokens: float = 0.0) -> float:
        cost = input_tokens * self.input + output_tokens * self.output + embedding_tokens * self.embedding
        return cost / 1_000_000


PRICE = Price()


def minilm_vectors() -> Any:
    """all-MiniLM-L6-v2 (``SentenceTransformerEmbedder``, the ingest bench's embedder) as the server's
    ``embed_vectors``: encoded off the event loop."""
    embedder = SentenceTransformerEmbedder()

    async def vectors(texts: list[str], dim: int) -> list[list[float]]:
        return [[float(x) for x in row] for row in await embedder.embed(texts)]

    return vectors


class Provider:
    """The answers, the terms and the counters of one simulated provider."""

    def __init__(
        self, tier: Tier, gold: Sequence[GoldSet], *, seed: int = 0, error_rate: float = ERROR_RATE
    ) -> None:
        self.tier = tier
        self.epigraph = EpigraphAnswers(gold)
        self.graphiti = GraphitiAnswers()
        chat = RateLimits(tier.rpm, tier.tpm, model=CHAT_MODEL)
        embed = RateLimits(tier.embed_rpm, tier.embed_tpm, model=EMBED_MODEL)
        self.terms = {
            CHAT_MODEL: Terms(limits=chat, latency=CHAT_LATENCY, error_rate=error_rate, seed=seed),
            EMBED_MODEL: Terms(limits=embed, latency=EMBED_LATENCY, error_rate=error_rate, seed=seed + 1),
        }
        self.server: FakeOpenAIServer | None = None
        self.started = time.monotonic()
        self.usage: dict[str, Counter[str]] = {"epigraph": Counter(), "graphiti": Counter()}
        """Per client family: answered calls and the tokens reported for them."""

    def answer(self, body: dict[str, Any]) -> Reply:
        family = "epigraph" if self.epigraph.handles(body) else "graphiti"
        text = self.epigraph(body) if family == "epigraph" else self.graphiti(body)
        prompt = count_message_tokens(body.get("messages") or [])
        completion = count_text_tokens(text)
        self.usage[family].update(calls=1, input_tokens=prompt, output_tokens=completion)
        return Reply(text=text, prompt_tokens=prompt, completion_tokens=completion)

    def stats(self) -> dict[str, Any]:
        assert self.server is not None
        statuses: dict[str, Counter[int]] = {"chat": Counter(), "embed": Counter()}
        for request in self.server.requests:
            kind = "chat" if request.path.endswith("/chat/completions") else "embed"
            statuses[kind][request.status] += 1
        models = {"chat": self.terms[CHAT_MODEL], "embed": self.terms[EMBED_MODEL]}
        out: dict[str, Any] = {"now": time.monotonic(), "started": self.started, "tier": self.tier.__dict__}
        for kind, terms in models.items():
            assert terms.limits is not None
            out[kind] = {
                "admissions": [[a.at, a.tokens, a.tokens_left] for a in terms.limits.admissions],
                "refused": terms.limits.refused,
                "statuses": {str(k): v for k, v in statuses[kind].items()},
            }
        out["answered"] = {
            **self.epigraph.answered,
            **{f"graphiti.{k}": v for k, v in self.graphiti.answered.items()},
        }
        out["gold_calls"] = self.epigraph.gold_calls
        out["usage"] = {family: dict(counts) for family, counts in self.usage.items()}
        return out

    def gold_shown(self) -> dict[str, Any]:
        return {
            name: {
                "entities": {k: sorted(v) for k, v in script.shown.entities.items()},
                "facts": {k: sorted(v) for k, v in script.shown.facts.items()},
            }
            for name, script in self.epigraph.gold.scripts.items()
        }


async def serve(provider: Provider, embeddings: str, port: int) -> None:
    vectors = minilm_vectors() if embeddings == "minilm" else None
    server = FakeOpenAIServer(
        provider.answer,
        api_key=API_KEY,
        models=(CHAT_MODEL, EMBED_MODEL),
        embed_dim=EMBED_DIM,
        port=port,
        terms=provider.terms,
        embed_vectors=vectors,
        routes={"/sim/stats": provider.stats, "/sim/gold": provider.gold_shown},
    )
    provider.server = server
    async with server:
        print(json.dumps({"url": server.base_url}), flush=True)
        await asyncio.to_thread(sys.stdin.read)  # until the bench closes our stdin


class SimProvider:
    """The provider in a child process: ``with SimProvider(tier, golds, conversations) as sim: sim.url``."""

    def __init__(
        self,
        tier: str,
        golds: Sequence[Path] = (),
        conversations: Sequence[Path] = (),
        *,
        embeddings: str = "minilm",
        log: Path | None = None,
        seed: int = 0,
    ) -> None:
        self.args = module_command(
            "bench.performance.hosted_provider",
            "--tier",
            tier,
            "--embeddings",
            embeddings,
            "--seed",
            str(seed),
        )
        for path in golds:
            self.args += ["--gold", str(path)]
        for path in conversations:
            self.args += ["--conversation", str(path)]
        self.log = log
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> SimProvider:
        err = self.log.open("a") if self.log else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            self.args, env=child_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(
                f"the simulated provider did not start (exit {self.proc.wait()}); see {self.log}"
            )
        self.url = json.loads(line)["url"]
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    @property
    def root(self) -> str:
        return self.url.removesuffix("/v1")

    def stats(self) -> dict[str, Any]:
        return self._get("/sim/stats")

    def gold_shown(self) -> dict[str, Any]:
        return self._get("/sim/gold")

    def _get(self, path: str) -> dict[str, Any]:
        answer = httpx.get(f"{self.root}{path}", headers={"Authorization": f"Bearer {API_KEY}"}, timeout=60)
        answer.raise_for_status()
        return dict(answer.json())


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", choices=sorted(TIERS), default="tier1")
    parser.add_argument("--gold", type=Path, action="append", default=[])
    parser.add_argument("--conversation", type=Path, action="append", default=[])
    parser.add_argument("--embeddings", choices=("minilm", "hash"), default="minilm")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    gold = load_sets(args.gold, args.conversation) if args.gold else []
    asyncio.run(serve(Provider(TIERS[args.tier], gold, seed=args.seed), args.embeddings, args.port))


if __name__ == "__main__":
    main()
