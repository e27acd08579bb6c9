"""Deterministic dating: ISO strings and common relative expressions, resolved against a reference time.

Rules (day precision, at 00:00 UTC): "today"/"now"/"currently" -> the reference day; "yesterday" /
"tomorrow" -> +-1 day; "N days|weeks|months|years ago" and "for N ..." -> that many earlier; "last week"
-> 7 days earlier, "next week" -> 7 days later; "last|next month" -> the 1st of that month; "last|next
year" -> 1 January of that year; "last|this|next <weekday>" -> that weekday ("next Fri" too); "in
2019" / "2019" -> 1 January 2019; "May 2021" -> 1 May 2021; ISO dates and datetimes as written.
Anything else states no time this module reads (the fact's start is then unknown: ``graph.temporal``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

from ..graph.model import to_utc

_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "few": 3,
}  # fmt: skip
_MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split()
)}  # fmt: skip
_WEEKDAYS = {d: i for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())}
_WEEKDAYS |= {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4, "sat": 5,
              "sun": 6}  # fmt: skip
"""Read only after last / this / next (``_REL``): "next Fri", "last Thurs"."""
_NUM = r"(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple of|few)"
_AGO = re.compile(rf"\b(?:{_NUM}\s+(day|week|month|year)s?\s+ago|for\s+(?:the\s+(?:past|last)\s+)?{_NUM}\s+"
                  r"(day|week|month|year)s?)\b")  # fmt: skip
_REL = re.compile(
    r"\b(last|past|previous|this|next|coming)\s+(week|month|year|" + "|".join(_WEEKDAYS) + r")\b"
)
_MONTH_YEAR = re.compile(r"\b(" + "|".join(_MONTHS) + r")\s+(?:of\s+)?(\d{4})\b")
_YEAR = re.compile(r"\b(?:in\s+|since\s+)?((?:19|20)\d{2})\b")
_ISO_IN_TEXT = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:t\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?\b"
)
_SIMPLE = {"today": 0, "tonight": 0, "now": 0, "currently": 0, "this morning": 0, "this evening": 0,
           "yesterday": -1, "tomorrow": 1}  # fmt: skip


def parse_iso(text: str | None) -> datetime | None:
    """An ISO 8601 date or datetime (naive read as UTC), or None when ``text`` is not one."""
    if not text or not isinstance(text, str):
        return None
    candidate = text.strip()
    try:
        if len(candidate) == 10:
            return datetime.combine(date.fromisoformat(candidate), datetime.min.time(), UTC)
        parsed: datetime = to_utc(candidate)
        return parsed
    except ValueError:
        return None


def _day(value: date) -> datetime:
    return datetime(value.year, value.month, value.day, tzinfo=UTC)


def _shift_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    for dom in (day.day, 30, 29, 28):
        try:
            return date(year, month + 1, dom)
        except ValueError:
            continue
    raise AssertionError("unreachable")  # pragma: no cover


def _ago(count: int, unit: str, ref: date) -> date:
    if unit == "day":
        return ref - timedelta(days=count)
    if unit == "week":
        return ref - timedelta(weeks=count)
    return _shift_months(ref, -count * (12 if unit == "year" else 1))


def _ago_match(m: re.Match[str], ref: date) -> date:
    """The day an ``_AGO`` match points to: "3 weeks ago" or "for five years"."""
    count, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return _ago(int(count) if count.isdigit() else _NUMBERS[count], unit, ref)


def _relative(which: str, unit: str, ref: date) -> date:
    step = {"last": -1, "past": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}[which]
    if unit == "week":
        return ref + timedelta(weeks=step)
    if unit == "month":
        return _shift_months(ref, step).replace(day=1)
    if unit == "year":
        return date(ref.year + step, 1, 1)
    target = _WEEKDAYS[unit]
    if step < 0:
        return ref - timedelta(days=(ref.weekday() - target - 1) % 7 + 1)
    if step > 0:
        return ref + timedelta(days=(target - ref.weekday() - 1) % 7 + 1)
    return ref + timedelta(days=target - ref.weekday())


def relative_date(text: str | None, reference: datetime) -> datetime | None:
    """The day a relative phrase in ``text`` points to ("yesterday", "3 weeks ago", "last year", "for
    5 years", "last Saturday"), or None when it has none. Years and month names are not read here: in a
    fact's sentence they can name anything ("born in 1990")."""
    if not text:
        return None
    return next(_relatives(" ".join(text.casefold().split()), to_utc(reference).date()), None)


def _relatives(flat: str, ref: date) -> Iterator[datetime]:
    """Every day the relative phrases of ``flat`` (case-folded, one-spaced) point to, the kinds in the
    order :func:`relative_date` prefers them: a day word, "N ago / for N", "last|this|next X"."""
    for phrase, offset in _SIMPLE.items():
        if offset and re.search(rf"\b{phrase}\b", flat):
            yield _day(ref + timedelta(days=offset))
    yield from (_day(_ago_match(m, ref)) for m in _AGO.finditer(flat))
    yield from (_day(_relative(m.group(1), m.group(2), ref)) for m in _REL.finditer(flat))


def _expressions(flat: str, ref: date) -> Iterator[datetime]:
    """Every date the time expressions of ``flat`` state, the kinds in the order
    :func:`resolve_expression` prefers them: ISO dates, the present ("today", "now"), relative
    phrases, a month and year, a year."""
    yield from (d for m in _ISO_IN_TEXT.finditer(flat) if (d := parse_iso(m.group(0).upper())) is not None)
    if any(re.search(rf"\b{phrase}\b", flat) for phrase, offset in _SIMPLE.items() if not offset):
        yield _day(ref)
    yield from _relatives(flat, ref)
    yield from (_day(date(int(m.group(2)), _MONTHS[m.group(1)], 1)) for m in _MONTH_YEAR.finditer(flat))
    yield from (_day(date(int(m.group(1)), 1, 1)) for m in _YEAR.finditer(flat))


def resolve_expression(expression: str | None, reference: datetime) -> datetime | None:
    """The start date an expression denotes, relative to ``reference``; None when not understood."""
    if not expression:
        return None
    iso = parse_iso(expression)
    if iso is not None:
        return iso
    return next(_expressions(" ".join(expression.casefold().split()), to_utc(reference).date()), None)


def stated_dates(text: str | None, reference: datetime) -> frozenset[datetime]:
    """The reference day (a message states its own present) and every date the time words of ``text``
    state (each expression the module reads, wherever it stands), relative to ``reference``: what a
    fact line's dates must be among to be the message's."""
    ref = to_utc(reference).date()
    return frozenset({_day(ref), *_expressions(" ".join((text or "").casefold().split()), ref)})


def among(day: datetime, stated: frozenset[datetime]) -> bool:
    """Whether ``day`` agrees with one of the ``stated`` dates at the coarser precision of the two: a
    1 January stands for its year ("in 2018" for "five years ago"), another 1st for its month
    ("2023-12-15" for "last month"), any other date for its day."""
    return any(_within(day, said) or _within(said, day) for said in stated)


def _within(fine: datetime, coarse: datetime) -> bool:
    if coarse.day != 1:
        return fine.date() == coarse.date()
    return fine.year == coarse.year and (coarse.month == 1 or fine.month == coarse.month)


_SPAN = re.compile(r"\bfrom\s+(.+?)\s+(?:to|until|till)\s+(.+)")
_UNTIL = re.compile(r"\b(?:until|till)\s+(.+)")


def sentence_dates(text: str | None, reference: datetime) -> tuple[datetime | None, datetime | None]:
    """(start, end) that the time words of a fact's own words state, relative to ``reference``: "from
    2018 to 2020", "until last year" (an end), "since 2019", "yesterday", "3 weeks ago", "in May 2021";
    (None, None) when they state no time. Read from the words around a fact line's names, never from
    the names themselves ("2020 Olympics")."""
    if not text:
        return None, None
    flat = " ".join(text.casefold().split())
    if m := _SPAN.search(flat):
        start, end = resolve_expression(m.group(1), reference), resolve_expression(m.group(2), reference)
        if start is not None and end is not None and end < start:
            end = None
        return start, end
    if m := _UNTIL.search(flat):
        return resolve_expression(flat[: m.start()], reference), resolve_expression(m.group(1), reference)
    return resolve_expression(flat, reference), None


_ISO_PHRASE = re.compile(
    r"\s*\b(?:on|since|from|until|till|to|at)?\s*\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?)?\b",
    re.IGNORECASE,
)


def without_iso_dates(sentence: str) -> str:
    """``sentence`` without ISO dates and the word that introduces each ("Alice lives in Paris on
    2020-03-01." -> "Alice lives in Paris."): the fact's dates hold them, and a timestamp reads as noise
    in a sentence that is searched and shown."""
    cleaned = " ".join(_ISO_PHRASE.sub("", sentence).split())
    return re.sub(r"\s+([.,!?;:])", r"\1", cleaned) or sentence


_TIME_WORDS = (
    _ISO_IN_TEXT,
    re.compile(r"\b(?:" + "|".join(re.escape(p) for p in _SIMPLE) + r")\b"),
    _AGO,
    _REL,
    _MONTH_YEAR,
    _YEAR,
)


def time_words(text: str | None) -> str:
    """The words of ``text`` a date was read from (``sentence_dates``' own text): each time expression
    it holds, in order ("since 2019", "last week ... yesterday"); "" when it has none. What a decision
    record shows as what dated a fact."""
    if not text:
        return ""
    flat = " ".join(text.casefold().split())
    found = sorted({(m.start(), m.group(0)) for pattern in _TIME_WORDS for m in pattern.finditer(flat)})
    kept: list[tuple[int, str]] = []
    for start, words in found:  # an expression inside an earlier one ("2019" in "may 2019") is that one
        if not kept or start >= kept[-1][0] + len(kept[-1][1]):
            kept.append((start, words))
    return " ... ".join(words for _, words in kept)
