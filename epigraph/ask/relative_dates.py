"""The dates that a message's relative words meant, read against the message's own date: "yesterday" in
a message of 8 May 2023 is 7 May 2023, "last week" the week before 8 May 2023. The answering context
writes them beside the message (:mod:`.observations`), so a "when" question is answered with the date
the words meant, not the words ("yesterday") nor the message's date. Pure: no I/O.

Read: yesterday, today, tonight, tomorrow, last night; last / this past / next week, weekend, month,
year or <weekday>; N days / weeks / months / years ago (N in digits or words up to
twelve, "a" / "an" for one). Anything vaguer ("a few years ago", "recently") is left as said.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {
    w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
} | {"a": 1, "an": 1}
_UNITS = ("day", "week", "month", "year")
_RELATIVE = re.compile(
    r"\b(?:(yesterday|today|tonight|tomorrow|last night)"
    r"|(last|this past|next) (week|weekend|month|year|" + "|".join(_WEEKDAYS) + r")"
    r"|(\d{1,2}|" + "|".join(_NUMBERS) + r") (" + "|".join(_UNITS) + r")s? ago)\b",
    re.IGNORECASE,
)
SHOWN = 3
"""At most this many relative words are read in one message."""


def spoken_day(value: datetime) -> str:
    """``7 May 2023``, as the answering context writes a date (:func:`.observations.day`)."""
    return f"{value.day} {value:%B %Y}"


def meant_dates(text: str, when: datetime) -> list[str]:
    """``['yesterday: 7 May 2023', ...]``: the relative words of ``text`` (a message of ``when``) and
    the date each meant, each once, in the order said, at most :data:`SHOWN`."""
    out: list[str] = []
    for match in _RELATIVE.finditer(text):
        said = " ".join(match.group(0).lower().split())
        meant = _meaning(match, when)
        line = f"{said}: {meant}"
        if meant and line not in out:
            out.append(line)
        if len(out) == SHOWN:
            break
    return out


def _meaning(match: re.Match[str], when: datetime) -> str:
    single, which, unit, count, counted = (match.group(i) for i in range(1, 6))
    if single:
        word = single.lower()
        shift = {"yesterday": -1, "last night": -1, "tomorrow": 1}.get(word, 0)
        return spoken_day(when + timedelta(days=shift))
    if which:
        return _named(which.lower(), unit.lower(), when)
    n = int(count) if count.isdigit() else _NUMBERS[count.lower()]
    return _ago(n, counted.lower(), when)


def _named(which: str, unit: str, when: datetime) -> str:
    forward = which == "next"
    if unit == "week":
        return f"the week {'after' if forward else 'before'} {spoken_day(when)}"
    if unit == "weekend":
        return f"the weekend {'after' if forward else 'before'} {spoken_day(when)}"
    if unit == "month":
        month = when.month + (1 if forward else -1)
        year = when.year + (month > 12) - (month < 1)
        return f"{when.replace(day=1, year=year, month=(month - 1) % 12 + 1):%B %Y}"
    if unit == "year":
        return str(when.year + (1 if forward else -1))
    target = _WEEKDAYS.index(unit)
    if forward:
        ahead = (target - when.weekday()) % 7 or 7
        return f"{unit.capitalize()} {spoken_day(when + timedelta(days=ahead))}"
    back = (when.weekday() - target) % 7 or 7
    return f"{unit.capitalize()} {spoken_day(when - timedelta(days=back))}"


def _ago(n: int, unit: str, when: datetime) -> str:
    if unit == "day":
        return spoken_day(when - timedelta(days=n))
    if unit == "week":
        return f"the week of {spoken_day(when - timedelta(weeks=n))}"
    if unit == "month":
        months = when.year * 12 + when.month - 1 - n
        return f"{when.replace(day=1, year=months // 12, month=months % 12 + 1):%B %Y}"
    return str(when.year - n)
