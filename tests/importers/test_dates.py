"""Timestamps found in datasets -> aware UTC datetimes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from epigraph.importers.dates import DateParser, parse_timestamp

T = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1:56 pm on 8 May, 2023", T),
        ("1:56 PM on 8 May, 2023", T),
        ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9, tzinfo=UTC)),
        ("2023-05-08T13:56:00Z", T),
        ("2023-05-08 13:56", T),
        ("2023-05-08T15:56:00+02:00", T),
        ("2023-05-08", datetime(2023, 5, 8, tzinfo=UTC)),
        ("2023/05/08 13:56:00", T),
        ("8 May 2023", datetime(2023, 5, 8, tzinfo=UTC)),
        ("May 8, 2023", datetime(2023, 5, 8, tzinfo=UTC)),
        ("Mon, 08 May 2023 13:56:00 +0000", T),
        (1683554160, T),
        (1683554160.0, T),
        ("1683554160", T),
        (1683554160000, T),
        (1683554160000000, T),
        (T, T),
        (datetime(2023, 5, 8, 13, 56), T),
        (datetime(2023, 5, 8, 15, 56, tzinfo=timezone(timedelta(hours=2))), T),
    ],
)
def test_parses(raw: Any, expected: datetime) -> None:
    got = parse_timestamp(raw)
    assert got == expected
    assert got is not None and got.tzinfo == UTC


@pytest.mark.parametrize(
    "raw", ["yesterday", "", "  ", None, True, {"t": 1}, [2023], "2023-13-45", "99999999999999999999999"]
)
def test_unparseable_is_none(raw: Any) -> None:
    assert parse_timestamp(raw) is None


def test_explicit_format_wins_and_is_strict() -> None:
    assert parse_timestamp("08|05|2023", "%d|%m|%Y") == datetime(2023, 5, 8, tzinfo=UTC)
    assert parse_timestamp("2023-05-08", "%d|%m|%Y") is None


def test_parser_remembers_the_last_format() -> None:
    parser = DateParser()
    assert parser.parse("1:56 pm on 8 May, 2023") == T
    assert parser.parse("10:37 am on 27 June, 2023") == datetime(2023, 6, 27, 10, 37, tzinfo=UTC)
    assert parser.parse("2023-05-08T13:56:00Z") == T
