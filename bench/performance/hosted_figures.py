"""The hosted bench's figures, from what a row recorded and what the simulated provider served.

- ``limit_share``: of everything the provider allowed between the row's first request and the moment
  90% of its messages were done (its first minute's allowance plus the refill since: the limit's
  buckets start full), the share the row was charged, for the binding limit (requests or tokens per
  minute, whichever share is larger). The last 10% are left out: a tail where few groups have work
  left says nothing about the client's pacing. ``limit_share_whole_row`` takes the whole row.
- ``messages_per_min``: done messages over the row's wall time (handed in to the last one done).
- accepted to done: from the moment the episode was handed to the library (all of a batch at once) or
  answered 202 by the server, to its ``EpisodeDone``; processing: the episode's own stages.
- dollars at the list price of ``hosted_provider.PRICE``, per 1,000 messages: input and output tokens as
  the provider reported them, embeddings as it charged them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from bench.performance.hosted_provider import PRICE, Tier

TAIL = 0.9
"""Share of a row's messages done at which its limit share stops being measured."""


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def until_share(done_at: Sequence[float], share: float = TAIL) -> float:
    """The time ``share`` of the done messages were done."""
    ordered = sorted(done_at)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)] if ordered else 0.0


def limit_share(chat: dict[str, Any], tier: Tier, end: float) -> dict[str, float]:
    """Shares of the requests and tokens limits used from the first admission to ``end`` (module
    docstring), and of the binding one."""
    admissions = chat["admissions"]
    if not admissions:
        return {"limit_share": 0.0, "requests_share": 0.0, "tokens_share": 0.0, "tokens_binding": 0.0}
    start = admissions[0][0]
    seconds = max(1e-9, end - start)
    within = [a for a in admissions if a[0] <= end]
    requests = len(within) / (tier.rpm + tier.rpm / 60 * seconds)
    tokens = sum(a[1] for a in within) / (tier.tpm + tier.tpm / 60 * seconds)
    return {
        "limit_share": round(max(requests, tokens), 4),
        "requests_share": round(requests, 4),
        "tokens_share": round(tokens, 4),
        "tokens_binding": float(tokens >= requests),
    }


def refused(stats: dict[str, Any]) -> int:
    return sum(int(stats[kind]["statuses"].get("429", 0)) for kind in ("chat", "embed"))


def server_errors(stats: dict[str, Any]) -> int:
    return sum(
        int(v) for kind in ("chat", "embed") for k, v in stats[kind]["statuses"].items() if k.startswith("5")
    )


def cost(messages: int, input_tokens: float, output_tokens: float, embed_tokens: float) -> dict[str, float]:
    per = 1000 / max(1, messages)
    return {
        "input_tokens_per_1k_messages": round(input_tokens * per),
        "output_tokens_per_1k_messages": round(output_tokens * per),
        "embedding_tokens_per_1k_messages": round(embed_tokens * per),
        "dollars_per_1k_messages": round(PRICE.dollars(input_tokens, output_tokens, embed_tokens) * per, 4),
    }


def latencies(prefix: str, values: Sequence[float]) -> dict[str, float]:
    return {
        f"{prefix}_p50_s": round(statistics.median(values), 3) if values else 0.0,
        f"{prefix}_p95_s": round(percentile(values, 0.95), 3),
    }
