from datetime import UTC, datetime, timedelta

from epigraph.graph.model import IncreasingClock

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def test_readings_never_repeat_or_go_back() -> None:
    readings = iter([T0, T0, T0 - timedelta(seconds=5), T0 + timedelta(seconds=1)])
    clock = IncreasingClock(lambda: next(readings))
    got = [clock() for _ in range(4)]
    step = timedelta(microseconds=1)
    assert got == [T0, T0 + step, T0 + 2 * step, T0 + timedelta(seconds=1)]


def test_a_clock_that_moves_on_is_read_as_it_is() -> None:
    readings = iter([T0, T0 + timedelta(hours=1)])
    clock = IncreasingClock(lambda: next(readings))
    assert [clock(), clock()] == [T0, T0 + timedelta(hours=1)]
