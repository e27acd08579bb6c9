"""``--to-kafka BOOTSTRAP [--topic T]`` of ``epigraph ingest`` and ``epigraph import``: publish the episodes
to Kafka, keyed by group, for ``epigraph worker`` processes to ingest, instead of ingesting them here (so
no LLM is needed here; with ``--redact`` they are redacted first, through the store, which must then be the
workers'). The input is checked whole first, as without the option: bad input
publishes nothing unless ``--skip-invalid`` says to skip it. ``epigraph serve --to-kafka`` publishes the
episodes its add routes accept (:func:`settings`; the service's ``publish``).
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ..client import KnowledgeGraph, publish_redaction
from ..config import Settings
from ..episodes.inputs import EpisodeInput
from ..publish.producer import EpisodeProducer
from .context import Cli
from .inputs import batched

BATCH = 500
"""Episodes validated and published at a time (a big file is streamed, never loaded whole)."""


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--to-kafka", metavar="BOOTSTRAP", help="publish the episodes to Kafka (host:port[,...]) "
                   "for `epigraph worker`s instead of ingesting them here")  # fmt: skip
    p.add_argument("--topic", metavar="T", help="with --to-kafka: the topic (default: EPIGRAPH_KAFKA_TOPIC, "
                   "else epigraph.episodes)")  # fmt: skip


def settings(given: Settings, args: argparse.Namespace) -> Settings:
    """``given`` with ``--to-kafka``/``--topic`` as its Kafka bootstrap and topic (unchanged without them)."""
    if not args.to_kafka:
        return given
    return given.model_copy(
        update={"kafka_bootstrap": args.to_kafka, "kafka_topic": args.topic or given.kafka_topic}
    )


async def publish(
    cli: Cli,
    kg: KnowledgeGraph,
    args: argparse.Namespace,
    items: Iterable[EpisodeInput],
    what: Mapping[str, Any],
) -> int:
    """Publish ``items`` batch by batch, each acknowledged before the next; print what went where. With
    ``--redact`` (or EPIGRAPH_REDACT) each is redacted first through ``kg``'s store, which must then be
    the workers' (``client.publish_redaction``)."""
    topic = args.topic or cli.settings.kafka_topic
    groups: Counter[str] = Counter()
    partitions: Counter[int] = Counter()
    redact = await publish_redaction(kg)
    async with EpisodeProducer(args.to_kafka, topic) as producer:
        for batch in batched(items, BATCH):
            for sent in await producer.publish(batch, redact=redact):
                groups[sent.group_id] += 1
                partitions[sent.partition or 0] += 1
    count = sum(groups.values())
    if cli.as_json:
        cli.print_json({**what, "published": count, "bootstrap": args.to_kafka, "topic": topic,
                        "groups": dict(sorted(groups.items())),
                        "partitions": {str(p): n for p, n in sorted(partitions.items())}})  # fmt: skip
    else:
        names = ", ".join(map(repr, sorted(groups)))
        episodes = f"{count} episode{'s' * (count != 1)}"
        cli.write(f"published {episodes} to Kafka at {args.to_kafka}, topic {topic!r} (group"
                  f"{'s' * (len(groups) != 1)} {names}; {len(partitions)} partition(s)); `epigraph worker` "
                  "ingests them")  # fmt: skip
    return 0
