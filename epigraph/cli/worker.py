"""``epigraph worker``: a Kafka consumer-group member that ingests its partitions' episodes
(``epigraph[kafka]``, imported only when it runs; see :mod:`epigraph.scale.worker`)."""

from __future__ import annotations

import argparse

from ..errors import UsageError
from .context import AddCommand, Cli
from .inputs import positive_arg


def register(command: AddCommand) -> None:
    p = command(
        "worker", cmd_worker, "ingest episodes from Kafka as a consumer-group member (epigraph[kafka])"
    )
    p.add_argument("--kafka", metavar="BOOTSTRAP", help="Kafka bootstrap servers, host:port[,...] "
                   "(default: EPIGRAPH_KAFKA_BOOTSTRAP)")  # fmt: skip
    p.add_argument("--topic", help="episode topic (default: EPIGRAPH_KAFKA_TOPIC, else epigraph.episodes; "
                   "dead letters go to <topic>.dead)")  # fmt: skip
    p.add_argument("--neo4j", metavar="URI", help="the shared Neo4j (default: EPIGRAPH_NEO4J_URI)")
    p.add_argument(
        "--group-id", default="epigraph-workers", help="Kafka consumer group (default epigraph-workers)"
    )
    p.add_argument("--llm-share", type=positive_arg, default=1, metavar="N", help="N workers share "
                   "the EPIGRAPH_LLM_MAX_IN_FLIGHT/_RPM/_TPM limits: this one takes 1/N of each "
                   "(default 1)")  # fmt: skip
    p.add_argument("--session-timeout", type=float, default=30.0, metavar="S", help="seconds before a silent "
                   "(crashed) worker's partitions move (default 30; the broker allows 6-1800)")  # fmt: skip
    p.add_argument("--revoke-grace", type=float, default=5.0, metavar="S", help="on a rebalance or stop, "
                   "seconds an episode in flight may finish before it is abandoned (default 5)")  # fmt: skip


async def cmd_worker(cli: Cli, args: argparse.Namespace) -> int:
    from ..scale.main import run_worker
    from ..scale.worker_config import WorkerConfig

    settings = cli.settings
    bootstrap = args.kafka or settings.kafka_bootstrap
    if not bootstrap:
        raise UsageError("epigraph worker needs Kafka: --kafka HOST:PORT or EPIGRAPH_KAFKA_BOOTSTRAP")
    if args.neo4j:
        settings = settings.model_copy(update={"neo4j_uri": args.neo4j})
    config = WorkerConfig(
        bootstrap=bootstrap, topic=args.topic or settings.kafka_topic, group_id=args.group_id,
        session_timeout_ms=int(args.session_timeout * 1000),
        heartbeat_interval_ms=max(500, int(args.session_timeout * 1000) // 5),
        revoke_grace_s=args.revoke_grace,
    )  # fmt: skip
    return await run_worker(settings, config, llm_share=args.llm_share)
