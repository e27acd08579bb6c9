"""A batch run now (``Ingestor.ingest``, ``add_episodes``): each group's episodes in order, groups
concurrently, each one's next episodes run ahead while it is committed (``lookahead``), in bulk mode a
window of turns extracted in one call. The queue ends the batch (``batch_end``) with what they ran."""

from __future__ import annotations

from ..concurrency import gather
from ..episodes.events import EpisodeResult
from ..graph.model import Episode
from ..pipeline.bulk import extract_window
from ..pipeline.options import IngestOptions
from ..pipeline.state import Emit, Prefetched
from .runner import EpisodeRunner, Job


async def run_groups(
    runner: EpisodeRunner, episodes: list[Episode], options: IngestOptions, emit: Emit
) -> tuple[list[str], list[tuple[int, EpisodeResult]]]:
    """Each group's episodes in order, groups concurrently: the groups, and each result with its index
    in order. A group's failure that is not its episode's (the store unavailable) stops the batch with
    that error itself, not an ExceptionGroup: the other groups' runs are cancelled, their episodes left
    pending."""
    by_group: dict[str, list[tuple[int, Episode]]] = {}
    for index, episode in enumerate(episodes):
        by_group.setdefault(episode.group_id, []).append((index, episode))
    ran: list[tuple[int, EpisodeResult]] = []
    await gather([_run_group(runner, members, options, emit, ran) for members in by_group.values()])
    ran.sort(key=lambda pair: pair[0])
    return list(by_group), ran


async def _run_group(
    runner: EpisodeRunner,
    members: list[tuple[int, Episode]],
    options: IngestOptions,
    emit: Emit,
    ran: list[tuple[int, EpisodeResult]],
) -> None:
    """Run the group's episodes in order, appending each result, with its index, to ``ran``."""
    prefetched: dict[str, Prefetched] = {}
    windowed: set[str] = set()  # bulk: a turn of a window already asked for (no line: its own call)
    episodes = [e for _, e in members]
    try:
        for position, (index, episode) in enumerate(members):
            if options.mode == "bulk" and episode.uuid not in windowed:
                window = episodes[position : position + max(1, options.window)]
                windowed.update(e.uuid for e in window)
                prefetched.update(await extract_window(runner.store, runner.model(), options, window))
            after = episodes[position + 1 :]
            job = Job(options, emit, index, prefetched=prefetched.pop(episode.uuid, None), after=after)
            ran.append((index, await runner.accept_and_run(episode, job)))
    finally:
        await runner.lookahead.drop(episodes)
