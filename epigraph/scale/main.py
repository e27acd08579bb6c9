"""``epigraph worker``'s body: settings -> graph -> :class:`KafkaWorker` until SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import logging
import signal

from ..client import KnowledgeGraph
from ..config import Settings
from ..errors import ConfigError
from ..ingestion.runner import NO_LLM
from .logs import json_logging, note
from .worker import KafkaWorker
from .worker_config import WorkerConfig, share_llm_limits

log = logging.getLogger("epigraph.worker")


async def run_worker(settings: Settings, config: WorkerConfig, *, llm_share: int = 1) -> int:
    """Run one worker until SIGTERM or SIGINT (then: finish or abandon what runs, leave the group).
    ``llm_share``: how many workers share the configured LLM limits (each gets its part)."""
    json_logging()
    settings = share_llm_limits(settings, llm_share)
    if settings.store_kind == "embedded":
        note(log, "store.embedded", logging.WARNING, db=settings.db_path,
             hint="workers on other machines cannot share it: set --neo4j or EPIGRAPH_NEO4J_URI")  # fmt: skip
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with KnowledgeGraph(settings) as kg:
        if kg.llm is None:  # a ConfigError now, not at the first episode
            raise ConfigError(NO_LLM)
        note(log, "worker.limits", llm_max_in_flight=settings.llm_max_in_flight, llm_rpm=settings.llm_rpm,
             llm_tpm=settings.llm_tpm, llm_share=llm_share)  # fmt: skip
        await KafkaWorker(kg, config).run(stop)
    return 0
