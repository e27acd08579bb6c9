"""Structured concurrency that keeps the library's error contract.

``asyncio.TaskGroup`` wraps failures in ``ExceptionGroup``; callers of ``search()`` expect the
``EpigraphError`` (e.g. ``StoreError``) itself, so :func:`gather` re-raises the first underlying error
(the group stays attached as ``__cause__`` for debugging). Sibling tasks are cancelled as usual.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first leaf exception of a (possibly nested) exception group."""
    inner = group.exceptions[0]
    return first_error(inner) if isinstance(inner, BaseExceptionGroup) else inner


async def gather(awaitables: Sequence[Awaitable[Any]]) -> list[Any]:
    """Run concurrently in a TaskGroup; results in input order; the first failure is re-raised as is."""
    try:
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(_wrap(a)) for a in awaitables]
    except BaseExceptionGroup as group:
        raise first_error(group) from group
    return [task.result() for task in tasks]


async def _wrap(awaitable: Awaitable[T]) -> T:
    return await awaitable
