"""Personal data found in a text by its shape and its check digits: rules, no model, no dependency.

Each kind has a candidate pattern and a check that a candidate must pass:

- ``email``: ``local@domain.tld``;
- ``card``: 13 to 19 digits (spaces or dashes between groups) whose first digit is an issuer's (2-6)
  and whose Luhn sum is right: a 16-digit number with a wrong check digit is not a card;
- ``iban``: two letters, two check digits and the account, as long as its country's IBANs are
  (:data:`IBAN_LENGTHS`) and with a mod-97 remainder of 1;
- ``ip``: IPv4 (each part 0-255; not after ``v`` or the word version: "version 1.2.3.4") and IPv6
  (read by :mod:`ipaddress`);
- ``key``: API keys by shape (OpenAI and Anthropic ``sk-``, AWS ``AKIA``, GitHub ``ghp_`` /
  ``github_pat_``, Slack ``xox?-``, Stripe, Google ``AIza``, JSON web tokens) and a generic one: a long
  token of mixed letters and digits with a high entropy right after a key-ish word (``api_key=``,
  ``token:``, ``password is``);
- ``phone``: international (``+`` or ``00``, 8 to 15 digits); national in three or more groups
  (``415-555-0132``, ``(11) 91234-5678``, ``612 345 678``: 9 to 12 digits, so no ``02.05.2024``) or with a
  trunk ``0`` (``07700 900123``); a 3-4 local number (``555-0132``); and after a phone word ("call me
  at", "my number is"), any number of 7 to 15 digits ("4155550132", "712 345").

:func:`find` returns the spans, earliest first, overlaps resolved by :data:`KINDS`' order (a card's
digits are not also a phone). Why rules, and how well they do against Presidio: the decision record
``docs/decisions/2026-12-01-personal-data.md`` (figures by ``python -m bench privacy``).
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

KINDS = ("key", "email", "iban", "card", "ip", "phone")
"""Every kind the rules find, in the order overlaps are resolved (an earlier kind wins)."""


@dataclass(frozen=True)
class Span:
    """Personal data of ``kind`` at ``text[start:end]``; ``value`` is its normal form (the same
    number written two ways has one), what a placeholder is kept for."""

    kind: str
    start: int
    end: int
    value: str


_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![\w-])"
)
_CARD = re.compile(r"(?<![\w.,-])[2-6]\d{3}(?:[ -]?\d){9,15}(?![\w-]|[.,]\d)")
_IBAN = re.compile(r"(?<![\w])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){10,32}(?![A-Za-z0-9])")
_IPV4 = re.compile(
    r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
    r"(?![\w]|\.\d)"
)
_IPV6 = re.compile(
    r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:])"
)
_VERSION_WORD = re.compile(r"(?:\bversion|\bver|\brelease|\bbuild|\bv)\.?\s*$", re.IGNORECASE)

_KEY_SHAPES = re.compile(
    "|".join(
        (
            r"(?<![\w-])sk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{20,}",  # OpenAI, Anthropic (sk-ant-...)
            r"(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}(?![A-Za-z0-9])",  # AWS
            r"(?<![\w])gh[pousr]_[A-Za-z0-9]{36,}",  # GitHub tokens
            r"(?<![\w])github_pat_[A-Za-z0-9_]{22,}",
            r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
            r"(?<![\w])(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
            r"(?<![\w-])AIza[0-9A-Za-z_-]{35}",  # Google
            r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # JWT
        )
    )
)
_KEY_WORD = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_-])*(?:api[_ -]?key|apikey|access[_ -]?key(?:[_ -]?id)?|"
    r"secret(?:[_ -]?(?:access[_ -]?)?key)?|client[_ -]?secret|auth[_ -]?token|access[_ -]?token|token|"
    r"bearer|password|passwd|pwd|private[_ -]?key)s?(?![A-Za-z0-9])"
    r"[\"'`]?\s*(?:[:=]|\bis\b|\bwas\b)?\s*[\"'`]?(?P<token>[^\s\"'`]{16,})"
)
_TRAILING = ".,;:?)]}>"
KEY_ENTROPY = 3.5
"""Bits per character a generic token needs (a random base64 key has about 5.5, English words 3-4 and
no digit): the false positives it lets through on LoCoMo are counted by ``python -m bench privacy``."""

_INTL_PHONE = re.compile(
    r"(?<![\w+])(?:\+|\b00)[1-9]\d{0,2}(?:[ .-]?\(0\))?(?:[ .-]?\(?\d{1,5}\)?){2,6}(?![\w]|[.,:/-]\d)"
)
_GROUPED_PHONE = re.compile(
    r"(?<![\w+.,:/-])(?P<first>\(?\d{1,4}\)?)(?:[ .-]\(?\d{2,5}\)?){2,5}(?![\w]|[.,:/-]\d)"
)
_TRUNK_PHONE = re.compile(r"(?<![\w+.,:/-])\(?0[1-9]\d{0,4}\)?(?:[ .-]?\d{2,8}){1,5}(?![\w]|[.,:/-]\d)")
_LOCAL_PHONE = re.compile(r"(?<![\w+.,:/-])\d{3}-\d{4}(?![\w]|[.,:/-]\d)")
_CUED_PHONE = re.compile(
    r"(?i)\b(?:call|called|phone|mobile|cell|tel|text|number|whatsapp|reach|ring|fax|landline|dial)\b"
    r"[^.!?\n\d]{0,25}(?<![\w+])(?P<number>\(?\d(?:[ ().-]{0,2}\d){6,14})(?![\w]|[.,:/-]\d)"
)

IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27,
    "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25,
    "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18,
    "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33,
    "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip
"""IBAN lengths by country, from the SWIFT IBAN registry."""


def find(text: str) -> list[Span]:
    """Every span of personal data in ``text`` the rules find, earliest first, none overlapping."""
    taken: list[Span] = []
    for kind in KINDS:
        for span in _FINDERS[kind](text):
            if not any(span.start < t.end and t.start < span.end for t in taken):
                taken.append(span)
    return sorted(taken, key=lambda s: s.start)


# --- checks -----------------------------------------------------------------------------------------


def luhn_ok(digits: str) -> bool:
    """The Luhn check of a card number: doubling every second digit from the right, the sum ends in 0."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        digit = int(char)
        if position % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def iban_ok(iban: str) -> bool:
    """ISO 13616: the country's length, and the number (first four characters moved to the end, letters
    as 10-35) leaves 1 when divided by 97."""
    if IBAN_LENGTHS.get(iban[:2]) != len(iban) or not iban[2:4].isdigit():
        return False
    moved = iban[4:] + iban[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def entropy(token: str) -> float:
    """Shannon entropy of ``token``'s characters, in bits per character."""
    counts = Counter(token)
    return -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


# --- finders, one per kind ------------------------------------------------------------------------------


def _emails(text: str) -> Iterator[Span]:
    for m in _EMAIL.finditer(text):
        yield Span("email", m.start(), m.end(), m.group().casefold())


def _cards(text: str) -> Iterator[Span]:
    for m in _CARD.finditer(text):
        digits = _digits(m.group())
        if 13 <= len(digits) <= 19 and luhn_ok(digits):
            yield Span("card", m.start(), m.end(), digits)


def _ibans(text: str) -> Iterator[Span]:
    for m in _IBAN.finditer(text):
        country = m.group()[:2].upper()
        length = IBAN_LENGTHS.get(country)
        if length is None:
            continue
        end, kept = m.start(), 0  # the candidate cut at its country's length (text after it is not its)
        for i, char in enumerate(m.group()):
            if char != " ":
                kept += 1
            if kept == length:
                end = m.start() + i + 1
                break
        iban = text[m.start() : end].replace(" ", "").upper()
        if kept == length and not text[end : end + 1].isalnum() and iban_ok(iban):
            yield Span("iban", m.start(), end, iban)


def _ips(text: str) -> Iterator[Span]:
    for m in _IPV4.finditer(text):
        if not _VERSION_WORD.search(text[max(0, m.start() - 12) : m.start()]):
            yield Span("ip", m.start(), m.end(), m.group())
    for m in _IPV6.finditer(text):
        candidate = m.group()
        if sum(c.isalnum() for c in candidate) < 4:
            continue
        try:
            address = ipaddress.IPv6Address(candidate)
        except ValueError:
            continue
        yield Span("ip", m.start(), m.end(), address.compressed)


def _keys(text: str) -> Iterator[Span]:
    for m in _KEY_SHAPES.finditer(text):
        yield Span("key", m.start(), m.end(), m.group())
    for m in _KEY_WORD.finditer(text):
        token = m.group("token").rstrip(_TRAILING)
        mixed = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
        if mixed and entropy(token) >= KEY_ENTROPY:
            yield Span("key", m.start("token"), m.start("token") + len(token), token)


def _phones(text: str) -> Iterator[Span]:
    for m in _INTL_PHONE.finditer(text):
        digits = _without_trunk(m.group())
        if 8 <= len(digits) <= 15:
            yield Span("phone", m.start(), m.end(), "+" + digits)
    for m in _GROUPED_PHONE.finditer(text):
        if _grouped_phone(m):
            yield Span("phone", m.start(), m.end(), _national(_digits(m.group())))
    for m in _TRUNK_PHONE.finditer(text):
        if 9 <= len(_digits(m.group())) <= 12:
            yield Span("phone", m.start(), m.end(), _digits(m.group()))
    for m in _LOCAL_PHONE.finditer(text):
        yield Span("phone", m.start(), m.end(), _digits(m.group()))
    for m in _CUED_PHONE.finditer(text):
        yield Span("phone", m.start("number"), m.end("number"), _national(_digits(m.group("number"))))


def _grouped_phone(m: re.Match[str]) -> bool:
    """A number written in groups is a phone when it has 9 to 12 digits, a first group of four
    begins with the trunk 0 (not a year, not a card's first four), and it does not end in thousands
    (120 000 000)."""
    digits = _digits(m.group())
    first = _digits(m.group("first"))
    return 9 <= len(digits) <= 12 and (len(first) < 4 or first[0] == "0") and not digits.endswith("000000")


def _national(digits: str) -> str:
    """A national number's normal form: North American ten digits (or 1 and ten) as +1..., others as
    written (their country is not known)."""
    if len(digits) == 10 and digits[0] in "23456789":
        return "+1" + digits
    if len(digits) == 11 and digits[0] == "1":
        return "+" + digits
    return digits


def _without_trunk(number: str) -> str:
    """An international number's digits without its ``(0)`` (+44 (0)20 ... is +44 20 ...)."""
    digits = _digits(number.replace("(0)", ""))
    return digits[2:] if number.startswith("00") else digits


_FINDERS: dict[str, Callable[[str], Iterator[Span]]] = {
    "key": _keys,
    "email": _emails,
    "iban": _ibans,
    "card": _cards,
    "ip": _ips,
    "phone": _phones,
}
