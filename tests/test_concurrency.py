"""``epigraph.concurrency.gather``, the one helper that runs steps concurrently: results in the given order,
the first failure raised as itself (not an ExceptionGroup) with the group as its cause, the other steps
cancelled."""

from __future__ import annotations

import asyncio

import pytest

from epigraph.concurrency import first_error, gather
from epigraph.errors import StoreUnavailable


async def test_results_come_in_the_given_order() -> None:
    async def after(seconds: float, value: str) -> str:
        await asyncio.sleep(seconds)
        return value

    assert await gather([after(0.02, "slow"), after(0.0, "fast")]) == ["slow", "fast"]
    assert await gather([]) == []


async def test_the_first_failure_is_raised_as_itself_and_the_others_are_cancelled() -> None:
    cancelled = asyncio.Event()

    async def waits() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def fails() -> None:
        await asyncio.sleep(0)
        raise StoreUnavailable("the store is starting")

    with pytest.raises(StoreUnavailable, match="starting") as caught:
        await gather([waits(), fails()])
    assert cancelled.is_set()
    assert isinstance(caught.value.__cause__, BaseExceptionGroup)


def test_first_error_descends_nested_groups() -> None:
    inner = ValueError("inner")
    group = BaseExceptionGroup("outer", [ExceptionGroup("middle", [inner, KeyError("k")])])
    assert first_error(group) is inner
