"""The rules that find personal data (``privacy.detectors``): each kind found in chat phrasing (mid-sentence,
next to punctuation), with its normal form, and the near misses that are not personal data left alone:
a 16-digit number whose check digit is wrong, dates, times, version strings, prices, order numbers."""

from __future__ import annotations

import pytest

from epigraph.privacy.detectors import entropy, find, iban_ok, luhn_ok


def found(text: str) -> list[tuple[str, str]]:
    return [(s.kind, text[s.start : s.end]) for s in find(text)]


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("mail me at jane.doe+news@mail.example.org, thanks", "email", "jane.doe+news@mail.example.org"),
        ("(Ravi_K12@uni-heidelberg.de) is my work address", "email", "Ravi_K12@uni-heidelberg.de"),
        ("call me at +1 (415) 555-0132!", "phone", "+1 (415) 555-0132"),
        ("my number is 415.555.0132.", "phone", "415.555.0132"),
        ("office: 020 7946 0958; mobile later", "phone", "020 7946 0958"),
        ("text 07700 900123 when you land", "phone", "07700 900123"),
        ("+44 (0)20 7946 0958 is the desk", "phone", "+44 (0)20 7946 0958"),
        ("ring 06 12 34 56 78?", "phone", "06 12 34 56 78"),
        ("WhatsApp +55 11 91234-5678", "phone", "+55 11 91234-5678"),
        ("reach me on 0049 30 1234567", "phone", "0049 30 1234567"),
        ("call me at 4155550132", "phone", "4155550132"),
        ("charge 4111 1111 1111 1111, thanks", "card", "4111 1111 1111 1111"),
        ("the Amex is 3782 822463 10005.", "card", "3782 822463 10005"),
        ("card:5555555555554444", "card", "5555555555554444"),
        ("wire it to DE89 3704 0044 0532 0130 00!", "iban", "DE89 3704 0044 0532 0130 00"),
        ("IBAN GB82WEST12345698765432.", "iban", "GB82WEST12345698765432"),
        ("ssh into 192.168.1.10, the usual user", "ip", "192.168.1.10"),
        ("open http://10.0.0.7:8080/admin", "ip", "10.0.0.7"),
        ("blocked 2001:db8::8a2e:370:7334 today", "ip", "2001:db8::8a2e:370:7334"),
        ("export OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "key",
         "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"),
        ("the AWS one: AKIAIOSFODNN7EXAMPLE.", "key", "AKIAIOSFODNN7EXAMPLE"),
        ("`ghp_0123456789abcdefghijABCDEFGHIJ012345`", "key", "ghp_0123456789abcdefghijABCDEFGHIJ012345"),
        ("slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx ok", "key",
         "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
        ("api_key=9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c", "key", "9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c"),
        ("the password is Tr0ub4dor&3xyzQw9!", "key", "Tr0ub4dor&3xyzQw9!"),
    ],
)  # fmt: skip
def test_each_kind_is_found_where_chat_puts_it(text: str, kind: str, value: str) -> None:
    assert found(text) == [(kind, value)]


@pytest.mark.parametrize(
    "text",
    [
        "order 4111 1111 1111 1112 arrived",  # 16 digits, Luhn check digit wrong
        "order 4111111111111112 arrived",
        "see you on 2024-05-02 at 10:30:00",
        "born 02.05.1988, moved 05/02/2024, left 12-03-2020",
        "upgrade to version 1.2.3.4 or v2.0.1.3 tonight",
        "python 3.11.7 and node 20.10.0",
        "it cost $1,234.56 in 2019-2021, up 12.5%",
        "order #62382466 and reference 838425 for 3 of 61",
        "the token of appreciation was lovely",
        "my password is correcthorsebatterystaple",  # no digit: a passphrase of words, not a key
        "I ran 5 km in 25:30 on Saturday",
    ],
)
def test_near_misses_are_left_alone(text: str) -> None:
    assert found(text) == []


def test_an_iban_with_a_wrong_check_is_no_iban() -> None:
    assert "iban" not in {kind for kind, _ in found("DE89 3704 0044 0532 0130 01 is a typo")}


def test_a_value_is_kept_in_its_normal_form() -> None:
    a, b = find("call +1 (415) 555-0132"), find("or 415-555-0132")
    assert a[0].value == b[0].value == "+14155550132"
    assert find("JANE@EXAMPLE.COM")[0].value == "jane@example.com"
    assert find("DE89 3704 0044 0532 0130 00")[0].value == "DE89370400440532013000"


def test_the_checks() -> None:
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert iban_ok("DE89370400440532013000") and not iban_ok("DE89370400440532013001")
    assert not iban_ok("DE8937040044053201300")  # a German IBAN is 22 characters
    assert entropy("aaaa") == 0 and entropy("abcd") == 2


def test_overlaps_go_to_the_earlier_kind() -> None:
    """An email's digits are not a phone, nor a URL's address a version."""
    assert found("ping 4155550132@sms.example.com") == [("email", "4155550132@sms.example.com")]
