"""Structured concurrency that keeps the library's error contract: the one helper every layer runs
concurrent steps with (search's retrievers, the explorer's reads, an episode's extraction beside its entity
resolution, the groups of a batch).

``asyncio.TaskGroup`` wraps failures in ``ExceptionGroup``; callers expect the error itself (an
``EpigraphError`` such as ``StoreError``, or ``StoreUnavailable``, which the queue tells from an episode's
own failure), so :func:`gather` re-raises the first underlying error, with the group attached as
``__cause__`` for debugging. On the first failure the sibling steps are cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")


def first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first leaf exception of a (possibly nested) exception group."""
    inner = group.exceptions[0]
    return first_error(inner) if isinstance(inner, BaseExceptionGroup) else inner


async def gather(steps: Iterable[Awaitable[Any]]) -> list[Any]:
    """Run ``steps`` concurrently in a TaskGroup; their results in the given order. The first failure
    cancels the others and is raised as itself."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_as_coroutine(step)) for step in steps]
    except BaseExceptionGroup as failed:
        raise first_error(failed) from failed
    return [task.result() for task in tasks]


async def _as_coroutine(step: Awaitable[T]) -> T:
    return await step
