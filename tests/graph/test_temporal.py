"""graph.temporal: the pure bi-temporal rules, example-based and property-based."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from epigraph.graph.model import Fact, Invalidation
from epigraph.graph.temporal import (
    CURRENT,
    EVERYTHING,
    TimeFilter,
    apply_contradiction,
    believed_end,
    believed_interval,
    effective_valid_at,
    first_stated,
    interval,
    is_current,
    is_known_at,
    is_valid_at,
    latest_creation,
    latest_start,
    matches,
    overlaps,
    resolve_contradiction,
    revert_invalidation,
    start_key,
    start_of,
    start_unknown,
    valid_overlap,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)
US = timedelta(microseconds=1)
NOW = datetime(2025, 6, 1, 12, tzinfo=UTC)


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


def fact(
    valid_at: datetime | None = None,
    invalid_at: datetime | None = None,
    *,
    created_at: datetime = T0,
    expired_at: datetime | None = None,
    uuid: str | None = None,
) -> Fact:
    extra: dict[str, Any] = {"uuid": uuid} if uuid else {}
    return Fact(
        group_id="g",
        source_uuid="a",
        target_uuid="b",
        relation="WORKS_AT",
        text="a works at b",
        valid_at=valid_at,
        invalid_at=invalid_at,
        created_at=created_at,
        expired_at=expired_at,
        **extra,
    )


TEMPORAL_FIELDS = ("valid_at", "invalid_at", "created_at", "expired_at", "invalidated_by")


def temporal(f: Fact) -> tuple[object, ...]:
    return tuple(getattr(f, name) for name in TEMPORAL_FIELDS)


# --- overlap ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((day(0), day(10)), (day(5), day(15)), True),
        ((day(0), day(10)), (day(10), day(15)), False),  # touching: succession
        ((day(0), day(10)), (day(11), day(15)), False),
        ((None, None), (day(3), day(4)), True),
        ((None, day(3)), (day(3), None), False),
        ((None, day(3)), (day(2), None), True),
        ((day(5), None), (None, day(5)), False),
        ((day(5), None), (None, day(6)), True),
        ((day(5), day(5)), (None, None), False),  # empty interval overlaps nothing
        ((day(6), day(5)), (None, None), False),  # inverted interval is empty too
    ],
)
def test_overlaps_examples(
    a: tuple[datetime | None, datetime | None], b: tuple[datetime | None, datetime | None], expected: bool
) -> None:
    assert overlaps(*a, *b) is expected
    assert overlaps(*b, *a) is expected


def test_naive_datetimes_are_read_as_utc() -> None:
    naive = datetime(2024, 1, 5)
    assert overlaps(day(0), day(10), naive, None)
    assert is_valid_at(fact(day(0), day(10)), naive)
    assert effective_valid_at(None, naive) == datetime(2024, 1, 5, tzinfo=UTC)


# --- validity and knowledge -------------------------------------------------------------------------


def test_is_valid_at_is_half_open() -> None:
    f = fact(day(1), day(3))
    assert not is_valid_at(f, day(1) - US)
    assert is_valid_at(f, day(1))
    assert is_valid_at(f, day(3) - US)
    assert not is_valid_at(f, day(3))


def test_unbounded_validity() -> None:
    assert is_valid_at(fact(), datetime(1900, 1, 1, tzinfo=UTC))
    assert is_valid_at(fact(None, day(2)), datetime(1900, 1, 1, tzinfo=UTC))
    assert is_valid_at(fact(day(2), None), datetime(2999, 1, 1, tzinfo=UTC))


def test_is_known_at_follows_system_time() -> None:
    f = fact(created_at=day(1), expired_at=day(4))  # expired without an invalidation: withdrawn
    assert not is_known_at(f, day(1) - US)
    assert is_known_at(f, day(1))
    assert is_known_at(f, day(4) - US)
    assert not is_known_at(f, day(4))
    assert is_known_at(fact(created_at=day(1)), datetime(2999, 1, 1, tzinfo=UTC))


def test_a_contradicted_fact_stays_known_with_a_changed_interval() -> None:
    older = fact(day(0), day(30), created_at=day(1))
    retired = apply_contradiction(older, fact(day(10)), "ep", day(4))
    assert not is_known_at(retired, day(1) - US)
    assert is_known_at(retired, day(1)) and is_known_at(retired, day(4)) and is_known_at(retired, day(999))
    assert believed_end(retired, day(4) - US) == day(30)  # before the contradiction arrived
    assert believed_end(retired, day(4)) == day(10)
    assert believed_interval(retired, day(1) - US) is None
    assert believed_interval(retired, day(2)) == (day(0), day(30))
    assert believed_interval(retired, day(5)) == (day(0), day(10))
    withdrawn = fact(day(0), day(30), created_at=day(1), expired_at=day(4))
    assert believed_interval(withdrawn, day(2)) == (day(0), day(30))
    assert believed_interval(withdrawn, day(4)) is None


def test_matches_defaults_to_now_for_both_times() -> None:
    live = fact(day(1), created_at=day(1))
    ended = fact(day(1), day(2), created_at=day(1))
    expired = fact(day(1), created_at=day(1), expired_at=day(3))
    future = fact(day(900), created_at=day(1))
    assert matches(live, CURRENT, NOW)
    assert not matches(ended, CURRENT, NOW)
    assert not matches(expired, CURRENT, NOW)
    assert not matches(future, CURRENT, NOW)
    assert is_current(live, NOW) and not is_current(ended, NOW)


def test_matches_as_of_and_known_at() -> None:
    f = fact(day(10), day(20), created_at=day(5), expired_at=day(30))
    assert matches(f, TimeFilter(as_of=day(15), known_at=day(25)), NOW)
    assert not matches(f, TimeFilter(as_of=day(15), known_at=day(30)), NOW)  # withdrawn by then
    assert not matches(f, TimeFilter(as_of=day(15), known_at=day(4)), NOW)  # not yet learned
    assert not matches(f, TimeFilter(as_of=day(20), known_at=day(25)), NOW)  # no longer valid
    assert not matches(f, TimeFilter(as_of=day(15)), NOW)  # known_at None = NOW, after withdrawal
    # ``now`` is the argument, not the clock: at an earlier "now" the same filter accepts it.
    assert matches(f, TimeFilter(as_of=day(15)), day(25))


def test_as_of_the_past_finds_a_fact_contradicted_later() -> None:
    """Lived in Paris from day 0 (learned day 0); on day 20 the graph learned she moved on day 10."""
    paris = fact(day(0), created_at=day(0))
    retired = apply_contradiction(paris, fact(day(10), created_at=day(20)), "ep", day(20))
    # Known now: true from day 0 to day 10, as the graph now believes.
    assert matches(retired, TimeFilter(as_of=day(5)), NOW)
    assert matches(retired, TimeFilter(as_of=day(10) - US), NOW)
    assert not matches(retired, TimeFilter(as_of=day(10)), NOW)
    assert not matches(retired, TimeFilter(as_of=day(-1)), NOW)
    assert not matches(retired, CURRENT, NOW)
    # Known before the contradiction arrived: the old open-ended interval.
    assert matches(retired, TimeFilter(as_of=day(15), known_at=day(15)), NOW)
    assert matches(retired, TimeFilter(known_at=day(20) - US), NOW)
    assert not matches(retired, TimeFilter(as_of=day(15), known_at=day(20)), NOW)
    assert not matches(retired, TimeFilter(as_of=day(5), known_at=day(0) - US), NOW)  # not learned yet
    # The reverted fact is current again.
    assert matches(revert_invalidation(retired), CURRENT, NOW)


def test_known_at_before_the_contradiction_uses_the_previous_end() -> None:
    older = fact(day(0), day(30), created_at=day(0))
    retired = apply_contradiction(older, fact(day(10)), "ep", day(20))
    assert matches(retired, TimeFilter(as_of=day(25), known_at=day(19)), NOW)
    assert not matches(retired, TimeFilter(as_of=day(30), known_at=day(19)), NOW)
    assert not matches(retired, TimeFilter(as_of=day(25), known_at=day(20)), NOW)
    assert matches(retired, TimeFilter(as_of=day(9), known_at=day(20)), NOW)


def test_a_fact_retired_with_a_future_end_is_current_until_then() -> None:
    """A contradiction dated in the future (she will move on day 900) leaves the fact current today."""
    retired = apply_contradiction(fact(day(0)), fact(day(900)), "ep", day(20))
    assert is_current(retired, NOW) and retired.expired_at == day(20)
    assert not is_current(retired, day(900))


def test_a_late_arriving_fact_counts_only_from_when_it_was_learned() -> None:
    existing = fact(day(10), created_at=day(10))
    _, late = resolve_contradiction(existing, fact(day(2), created_at=day(40)), "ep", day(40))
    assert matches(late, TimeFilter(as_of=day(5)), NOW)
    assert not matches(late, TimeFilter(as_of=day(12)), NOW)
    assert not matches(late, TimeFilter(as_of=day(5), known_at=day(40) - US), NOW)


def test_an_invalidation_without_expiry_keeps_the_current_interval() -> None:
    f = fact(day(0), day(5)).model_copy(
        update={"invalidated_by": Invalidation(fact_uuid="x", episode_uuid="ep", previous_invalid_at=None)}
    )
    assert matches(f, TimeFilter(as_of=day(4), known_at=day(1)), NOW)
    assert not matches(f, TimeFilter(as_of=day(6), known_at=day(1)), NOW)


def test_include_retired_accepts_everything() -> None:
    for f in (fact(day(1), day(2), expired_at=day(3)), fact(day(900), created_at=day(800)), fact()):
        assert matches(f, EVERYTHING, NOW)
        assert matches(f, TimeFilter(as_of=day(-1000), known_at=day(-1000), include_retired=True), NOW)


def test_an_unknown_start_is_when_the_fact_was_first_stated() -> None:
    undated = fact(created_at=T0).model_copy(update={"stated_at": day(3)})
    assert start_unknown(undated) and not start_unknown(fact(day(1)))
    assert start_of(undated, None) == interval(undated)[0] == start_key(undated) == day(3)
    assert not matches(undated, TimeFilter(as_of=day(2)), NOW)
    assert matches(undated, TimeFilter(as_of=day(3)), NOW)
    # a stated date wins, earlier or later than the statement
    assert interval(undated.model_copy(update={"valid_at": day(1)}))[0] == day(1)
    assert interval(undated.model_copy(update={"valid_at": day(9)}))[0] == day(9)
    # stated nowhere: an open start, as before
    assert matches(fact(created_at=T0), TimeFilter(as_of=day(-100)), NOW)


def test_a_fact_that_ended_before_it_was_stated_keeps_an_open_start() -> None:
    """ "She worked there until day 1", said on day 3; or retired to an end before it was first stated."""
    ended = fact(None, day(1), created_at=T0).model_copy(update={"stated_at": day(3)})
    assert interval(ended) == (None, day(1))
    assert matches(ended, TimeFilter(as_of=day(-100)), NOW) and not matches(
        ended, TimeFilter(as_of=day(1)), NOW
    )
    retired = ended.model_copy(
        update={"invalid_at": day(1), "expired_at": day(5),
                "invalidated_by": Invalidation(fact_uuid="x", episode_uuid="e", previous_invalid_at=None)}
    )  # fmt: skip
    assert believed_interval(retired, day(4)) == (day(3), None)  # before the contradiction arrived
    assert believed_interval(retired, day(6)) == (None, day(1))
    assert start_key(retired) is None


def test_first_stated_is_the_earliest_known_statement() -> None:
    assert first_stated([day(3), None, day(1)]) == day(1)
    assert first_stated([None], day(5)) == day(5)
    assert first_stated([]) is None


def test_effective_valid_at() -> None:
    assert effective_valid_at(day(3), day(9)) == day(3)
    assert effective_valid_at(None, day(9)) == day(9)


# --- contradiction ----------------------------------------------------------------------------------


def test_apply_contradiction_retires_the_older_fact() -> None:
    older = fact(day(0), created_at=day(0))
    newer = fact(day(10), created_at=day(10))
    retired = apply_contradiction(older, newer, "ep-2", NOW)
    assert retired.invalid_at == day(10)
    assert retired.expired_at == NOW
    assert retired.invalidated_by == Invalidation(
        fact_uuid=newer.uuid, episode_uuid="ep-2", previous_invalid_at=None
    )
    assert (retired.uuid, retired.valid_at, retired.created_at, retired.text) == (
        older.uuid,
        older.valid_at,
        older.created_at,
        older.text,
    )
    assert older.invalid_at is None  # inputs are not mutated (frozen models)


def test_apply_contradiction_keeps_previous_end() -> None:
    older = fact(day(0), day(30))
    retired = apply_contradiction(older, fact(day(10)), "ep", NOW)
    assert retired.invalid_at == day(10)
    assert retired.invalidated_by is not None
    assert retired.invalidated_by.previous_invalid_at == day(30)


def test_succession_is_not_contradiction() -> None:
    older = fact(day(0), day(10))
    assert apply_contradiction(older, fact(day(10)), "ep", NOW) == older
    assert apply_contradiction(older, fact(day(12)), "ep", NOW) == older
    existing, new = fact(day(0), day(10)), fact(day(10), day(20))
    assert resolve_contradiction(existing, new, "ep", NOW) == (existing, new)


def test_new_fact_entirely_before_existing_is_succession_too() -> None:
    existing, new = fact(day(10)), fact(day(0), day(5))
    assert resolve_contradiction(existing, new, "ep", NOW) == (existing, new)


def test_resolve_newer_in_event_time_retires_existing() -> None:
    existing, new = fact(day(0)), fact(day(10))
    existing2, new2 = resolve_contradiction(existing, new, "ep", NOW)
    assert new2 == new
    assert existing2.invalid_at == day(10)
    assert existing2.invalidated_by == Invalidation(fact_uuid=new.uuid, episode_uuid="ep")


def test_resolve_tie_new_one_wins() -> None:
    existing, new = fact(day(5)), fact(day(5))
    existing2, new2 = resolve_contradiction(existing, new, "ep", NOW)
    assert new2 == new
    assert existing2.invalid_at == day(5) and existing2.expired_at == NOW
    assert not valid_overlap(existing2, new2)


def test_resolve_existing_unbounded_start_is_retired() -> None:
    existing, new = fact(None), fact(day(5))
    existing2, new2 = resolve_contradiction(existing, new, "ep", NOW)
    assert (existing2.valid_at, existing2.invalid_at) == (None, day(5))
    assert new2 == new


def test_resolve_late_arriving_fact_is_stored_retired() -> None:
    existing = fact(day(10), created_at=day(10))
    late = fact(day(2), created_at=NOW)
    existing2, late2 = resolve_contradiction(existing, late, "ep-late", NOW)
    assert existing2 == existing
    assert late2.invalid_at == day(10)
    assert late2.expired_at == NOW
    assert late2.invalidated_by == Invalidation(fact_uuid=existing.uuid, episode_uuid="ep-late")
    assert late2.valid_at == day(2)


def test_apply_refuses_late_arriving_and_undated() -> None:
    with pytest.raises(ValueError, match="resolve_contradiction"):
        apply_contradiction(fact(day(10)), fact(day(2)), "ep", NOW)
    with pytest.raises(ValueError, match="valid_at"):
        apply_contradiction(fact(day(10)), fact(None), "ep", NOW)
    with pytest.raises(ValueError, match="valid_at"):
        resolve_contradiction(fact(day(10)), fact(None), "ep", NOW)
    f = fact(day(1))
    with pytest.raises(ValueError, match="itself"):
        resolve_contradiction(f, f, "ep", NOW)


def test_revert_invalidation_restores_and_is_noop_when_not_retired() -> None:
    older = fact(day(0), day(30))
    retired = apply_contradiction(older, fact(day(10)), "ep", NOW)
    assert revert_invalidation(retired) == older
    assert revert_invalidation(older) == older


def test_contradiction_chain_a_fact_that_changed_twice() -> None:
    """Lives in Paris (day 0) -> Berlin (day 10) -> Rome (day 20), each learned the day it started."""
    paris, berlin, rome = (fact(day(n), created_at=day(n)) for n in (0, 10, 20))
    paris, berlin = resolve_contradiction(paris, berlin, "ep-berlin", day(10))
    berlin, rome = resolve_contradiction(berlin, rome, "ep-rome", day(20))
    paris, rome = resolve_contradiction(paris, rome, "ep-rome", day(20))  # succession: no change
    assert paris.invalidated_by is not None and paris.invalidated_by.episode_uuid == "ep-berlin"
    assert (paris.invalid_at, berlin.invalid_at, rome.invalid_at) == (day(10), day(20), None)
    for t, expected in ((day(5), paris), (day(15), berlin), (day(25), rome)):
        valid = [f for f in (paris, berlin, rome) if is_valid_at(f, t)]
        assert valid == [expected]
    assert [f for f in (paris, berlin, rome) if is_current(f, NOW)] == [rome]
    # What the graph believed on day 15 (system time): Berlin was current; Paris already retired.
    believed = [f for f in (paris, berlin, rome) if matches(f, TimeFilter(known_at=day(15)), day(15))]
    assert believed == [berlin]

    def found(flt: TimeFilter) -> list[Fact]:
        return [f for f in (paris, berlin, rome) if matches(f, flt, NOW)]

    # History as the graph believes it now.
    assert found(TimeFilter(as_of=day(5))) == [paris]
    assert found(TimeFilter(as_of=day(15))) == [berlin]
    assert found(CURRENT) == [rome]
    assert found(EVERYTHING) == [paris, berlin, rome]
    # What the graph believed on day 15 about day 25: Berlin, then open-ended.
    assert found(TimeFilter(as_of=day(25), known_at=day(15))) == [berlin]
    # ... and on day 5 about day 15: Paris, then open-ended.
    assert found(TimeFilter(as_of=day(15), known_at=day(5))) == [paris]


# --- properties -------------------------------------------------------------------------------------

instants = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC)
)
maybe_instants = st.none() | instants


@st.composite
def intervals(draw: st.DrawFn) -> tuple[datetime | None, datetime | None]:
    start, end = draw(maybe_instants), draw(maybe_instants)
    if start is not None and end is not None and end < start:
        start, end = end, start
    return start, end


@st.composite
def facts(draw: st.DrawFn, *, dated: bool = False, retired: bool = True) -> Fact:
    start, end = draw(intervals())
    if dated and start is None:
        start = draw(instants)
        if end is not None and end < start:
            start, end = end, start
    created = draw(instants)
    expired = draw(st.none() | instants) if retired else None
    if expired is not None and expired < created:
        created, expired = expired, created
    stated = draw(maybe_instants)
    return fact(start, end, created_at=created, expired_at=expired).model_copy(update={"stated_at": stated})


@st.composite
def invalidated_facts(draw: st.DrawFn) -> Fact:
    """A fact as a contradiction leaves it: ``invalidated_by`` set, ``expired_at`` usually set, and a
    ``previous_invalid_at`` that is unbounded or no earlier than ``invalid_at``."""
    f = draw(facts(retired=False))
    previous = draw(st.none() | instants)
    if previous is not None and f.invalid_at is not None and previous < f.invalid_at:
        previous = f.invalid_at
    expired = draw(st.none() | instants.filter(lambda t: t >= f.created_at) | st.just(f.created_at))
    inv = Invalidation(fact_uuid="other", episode_uuid="ep", previous_invalid_at=previous)
    return f.model_copy(update={"expired_at": expired, "invalidated_by": inv})


def any_facts() -> st.SearchStrategy[Fact]:
    return facts() | invalidated_facts()


def reference_matches(f: Fact, flt: TimeFilter, now: datetime) -> bool:
    """TimeFilter's docstring, transcribed step by step (independently of graph.temporal)."""
    if flt.include_retired:
        return True
    k = flt.known_at or now
    t = flt.as_of or now
    if f.created_at > k:
        return False
    if f.expired_at is not None and f.invalidated_by is None and f.expired_at <= k:
        return False
    if f.invalidated_by is not None and f.expired_at is not None and k < f.expired_at:
        end = f.invalidated_by.previous_invalid_at
    else:
        end = f.invalid_at
    if f.valid_at is not None:
        start: datetime | None = f.valid_at
    elif f.stated_at is not None and (end is None or end > f.stated_at):
        start = f.stated_at  # an unknown start: when first stated, unless it ended by then
    else:
        start = None
    return (start is None or start <= t) and (end is None or t < end)


@given(intervals(), intervals())
def test_overlap_is_symmetric(
    a: tuple[datetime | None, datetime | None], b: tuple[datetime | None, datetime | None]
) -> None:
    assert overlaps(*a, *b) == overlaps(*b, *a)


@given(facts(), instants)
def test_as_of_filtering_agrees_with_overlap(f: Fact, t: datetime) -> None:
    """Valid at t  <=>  the validity interval overlaps the instant [t, t + 1 µs)."""
    assert is_valid_at(f, t) == overlaps(*interval(f), t, t + US)
    assert matches(f, TimeFilter(as_of=t, known_at=f.created_at), NOW) == (
        is_valid_at(f, t) and (f.expired_at is None or f.expired_at > f.created_at)
    )


@given(facts(retired=False), instants, instants)
def test_known_at_is_monotonic_without_expiry(f: Fact, t1: datetime, t2: datetime) -> None:
    early, late = min(t1, t2), max(t1, t2)
    if is_known_at(f, early):
        assert is_known_at(f, late)


@given(facts(), instants, instants, instants)
def test_known_at_holds_on_one_interval(f: Fact, t1: datetime, t2: datetime, t3: datetime) -> None:
    a, b, c = sorted((t1, t2, t3))
    if is_known_at(f, a) and is_known_at(f, c):
        assert is_known_at(f, b)


@given(facts(), instants, instants)
def test_matches_is_the_conjunction_for_a_fact_never_contradicted(
    f: Fact, as_of: datetime, known_at: datetime
) -> None:
    flt = TimeFilter(as_of=as_of, known_at=known_at)
    assert matches(f, flt, NOW) == (is_valid_at(f, as_of) and is_known_at(f, known_at))
    assert matches(f, CURRENT, as_of) == (is_valid_at(f, as_of) and is_known_at(f, as_of))
    assert matches(f, EVERYTHING, NOW)


@given(any_facts(), maybe_instants, maybe_instants, instants)
def test_matches_follows_the_time_filter_definition(
    f: Fact, as_of: datetime | None, known_at: datetime | None, now: datetime
) -> None:
    flt = TimeFilter(as_of=as_of, known_at=known_at)
    assert matches(f, flt, now) == reference_matches(f, flt, now)
    interval = believed_interval(f, known_at or now)
    t = as_of or now
    assert matches(f, flt, now) == (interval is not None and overlaps(*interval, t, t + US))
    assert matches(f, TimeFilter(as_of=as_of, known_at=known_at, include_retired=True), now)


@given(any_facts(), maybe_instants, maybe_instants, instants, st.booleans())
def test_no_fact_begun_or_recorded_after_the_latest_bounds_passes_the_filter(
    f: Fact, as_of: datetime | None, known_at: datetime | None, now: datetime, retired: bool
) -> None:
    """What both stores skip first (facts begun after ``latest_start``, or recorded after
    ``latest_creation``) is never a fact the filter keeps."""
    flt = TimeFilter(as_of=as_of, known_at=known_at, include_retired=retired)
    begun, recorded = latest_start(flt, now), latest_creation(flt, now)
    assert (begun is None) == (recorded is None) == retired
    if begun is not None and recorded is not None:
        assert (begun, recorded) == (as_of or now, known_at or now)
        key = start_key(f)
        if (key is not None and key > begun) or f.created_at > recorded:
            assert not matches(f, flt, now)


@given(any_facts(), instants, instants)
def test_the_start_key_is_no_later_than_the_start_of_any_belief(
    f: Fact, known_at: datetime, as_of: datetime
) -> None:
    """What the stores' as-of index seeks: a fact passing a filter at ``as_of`` has begun by then."""
    key = start_key(f)
    if matches(f, TimeFilter(as_of=as_of, known_at=known_at), NOW):
        assert key is None or key <= as_of
    held = believed_interval(f, known_at)
    if held is not None and held[0] is not None:
        assert key is None or key <= held[0]


@given(facts(), instants)
def test_an_undated_fact_never_holds_before_it_was_first_stated_unless_it_ended_by_then(
    f: Fact, t: datetime
) -> None:
    undated = f.model_copy(update={"valid_at": None})
    if undated.stated_at is not None and t < undated.stated_at and is_valid_at(undated, t):
        assert undated.invalid_at is not None and undated.invalid_at <= undated.stated_at


@given(invalidated_facts(), instants, instants)
def test_a_contradicted_fact_is_never_withdrawn(f: Fact, t1: datetime, t2: datetime) -> None:
    assert is_known_at(f, t1) == (f.created_at <= t1)
    early, late = min(t1, t2), max(t1, t2)
    if is_known_at(f, early):
        assert is_known_at(f, late)


@given(facts(retired=False), facts(dated=True, retired=False), instants, maybe_instants, instants)
def test_before_the_contradiction_the_old_belief_holds(
    existing: Fact, new: Fact, now: datetime, as_of: datetime | None, known_at: datetime
) -> None:
    """Known before the retirement, either side of a resolved contradiction reads as it was; reverting
    restores it for every filter."""
    existing2, new2 = resolve_contradiction(existing, new, "ep", now)
    flt = TimeFilter(as_of=as_of, known_at=known_at)
    for before, after in ((existing, existing2), (new, new2)):
        if known_at < now:
            assert matches(after, flt, NOW) == matches(before, flt, NOW)
        assert matches(revert_invalidation(after), flt, NOW) == matches(before, flt, NOW)


@given(facts(retired=False), facts(dated=True, retired=False), instants, instants)
def test_after_the_contradiction_as_of_the_past_still_finds_the_old_fact(
    older: Fact, newer: Fact, now: datetime, t: datetime
) -> None:
    """Seen from the retirement on, the retired fact counts at every instant of its shortened interval,
    in particular before the new fact starts (an undated one retired to an end no later than when it was
    first stated keeps an open start: it is then known only to have ended by that end)."""
    assume(older.valid_at is None or newer.valid_at is None or newer.valid_at >= older.valid_at)
    assume(valid_overlap(older, newer))
    retired = apply_contradiction(older, newer, "ep", now)
    seen_from = max(now, older.created_at)
    assert newer.valid_at is not None
    start = start_of(older, newer.valid_at)
    expected = (start is None or start <= t) and t < newer.valid_at
    if start is not None or older.stated_at is None:
        assert expected == (is_valid_at(older, t) and t < newer.valid_at)
    assert matches(retired, TimeFilter(as_of=t, known_at=seen_from), NOW) == expected
    assert matches(retired, TimeFilter(as_of=t), seen_from) == expected


@given(facts(retired=False), facts(dated=True, retired=False), instants)
def test_revert_undoes_apply(older: Fact, newer: Fact, now: datetime) -> None:
    assume(older.valid_at is None or newer.valid_at is None or newer.valid_at >= older.valid_at)
    assert revert_invalidation(apply_contradiction(older, newer, "ep", now)) == older


@given(facts(retired=False), facts(dated=True, retired=False), instants)
def test_revert_undoes_resolve(existing: Fact, new: Fact, now: datetime) -> None:
    existing2, new2 = resolve_contradiction(existing, new, "ep", now)
    assert temporal(revert_invalidation(existing2)) == temporal(existing)
    assert temporal(revert_invalidation(new2)) == temporal(new)


@given(facts(retired=False), facts(dated=True, retired=False), instants)
def test_after_resolve_the_two_intervals_do_not_overlap(existing: Fact, new: Fact, now: datetime) -> None:
    existing2, new2 = resolve_contradiction(existing, new, "ep", now)
    assert not valid_overlap(existing2, new2)
    # Exactly one side changes when they overlapped, none when they did not.
    changed = (existing2 != existing) + (new2 != new)
    assert changed == (1 if valid_overlap(existing, new) else 0)


@given(facts(retired=False), facts(dated=True, retired=False), instants)
def test_resolve_only_shrinks_and_records_why(existing: Fact, new: Fact, now: datetime) -> None:
    existing2, new2 = resolve_contradiction(existing, new, "ep", now)
    for before, after, other in ((existing, existing2, new), (new, new2, existing)):
        assert after.model_dump(exclude=set(TEMPORAL_FIELDS)) == before.model_dump(
            exclude=set(TEMPORAL_FIELDS)
        )
        assert (after.valid_at, after.created_at) == (before.valid_at, before.created_at)
        if after != before:
            assert after.expired_at == now
            assert after.invalidated_by == Invalidation(
                fact_uuid=other.uuid, episode_uuid="ep", previous_invalid_at=before.invalid_at
            )
            assert after.invalid_at is not None
            assert before.invalid_at is None or after.invalid_at < before.invalid_at
            # Retired now: from now on believed to end at the new invalid_at.
            assert is_current(after, now) == (after.created_at <= now and is_valid_at(after, now))
            assert not matches(after, TimeFilter(as_of=after.invalid_at), now)


@given(facts(retired=False), facts(dated=True, retired=False), instants)
def test_the_later_start_survives(existing: Fact, new: Fact, now: datetime) -> None:
    assume(valid_overlap(existing, new))
    existing2, new2 = resolve_contradiction(existing, new, "ep", now)
    assert new.valid_at is not None
    new_is_later = existing.valid_at is None or new.valid_at >= existing.valid_at
    assert (new2 == new) is new_is_later
    assert (existing2 == existing) is (not new_is_later)
