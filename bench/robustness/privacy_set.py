"""The privacy bench's generated set: chat messages holding known personal data, from a fixed seed.

Each message is a chat turn (a speaker and a text) with 0 to 2 pieces of personal data put into
phrasings people use in chat: at the start, mid-sentence, in parentheses or quotes, before a comma, a
full stop, a question or exclamation mark, after a colon, on a line of its own. The values are written
the ways they are written in the wild: emails of several shapes; phones of a dozen countries in their
national and international conventions; card numbers of five issuers (their own test numbers' shapes,
Luhn-valid), grouped or not; IBANs of eight countries, grouped by four or not; IPv4 and IPv6 addresses
(with a port, in a URL); API keys of each vendor's shape and generic secrets after a key-ish word.
About a third of the messages also hold a near miss, which is NOT personal data: dates in five
formats, times, version strings (four-part ones too), a 16-digit number whose check digit is wrong,
order numbers, prices, years and ranges, percentages, postcodes. ``gold`` lists each piece of personal
data with its kind and exact position; anything else found is a false replacement.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field

SEED = 20261201
KINDS = ("email", "phone", "card", "iban", "ip", "key")

FIRST = [
    "anna",
    "ben",
    "chloe",
    "dev",
    "elif",
    "farid",
    "grace",
    "hugo",
    "ines",
    "jun",
    "kofi",
    "lena",
    "marco",
    "nadia",
    "oscar",
    "priya",
    "quinn",
    "rosa",
    "sven",
    "tariq",
    "uma",
    "viktor",
    "wen",
    "yara",
]
LAST = [
    "smith",
    "okafor",
    "garcia",
    "nguyen",
    "muller",
    "rossi",
    "kowalski",
    "tanaka",
    "silva",
    "haddad",
    "johansson",
    "dubois",
    "patel",
    "kim",
    "ivanova",
    "obrien",
]
DOMAINS = [
    "gmail.com",
    "outlook.com",
    "yahoo.co.uk",
    "proton.me",
    "acme-corp.com",
    "uni-heidelberg.de",
    "mail.example.org",
    "fastmail.fm",
    "company.io",
    "cs.stanford.edu",
    "web.de",
    "icloud.com",
]
SPEAKERS = ["Dana", "Lee", "Sam", "Ravi", "Mia", "Tom"]


@dataclass
class Message:
    speaker: str
    text: str
    gold: list[tuple[str, int, int]] = field(default_factory=list)
    """(kind, start, end) of each piece of personal data in ``text``."""


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def email(rng: random.Random) -> str:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    local = rng.choice(
        [
            f"{first}.{last}",
            f"{first}{last[0]}",
            f"{first}_{last}{rng.randint(1, 99)}",
            f"{first[0]}{last}",
            f"{first}+{rng.choice(['news', 'work', 'x'])}",
            f"{first}-{last}",
        ]
    )
    address = f"{local}@{rng.choice(DOMAINS)}"
    return address.upper() if rng.random() < 0.05 else address.capitalize() if rng.random() < 0.1 else address


def phone(rng: random.Random) -> str:
    d = lambda n: _digits(rng, n)  # noqa: E731
    a3 = str(rng.randint(201, 989))
    formats = [
        lambda: f"({a3}) {d(3)}-{d(4)}",
        lambda: f"{a3}-{d(3)}-{d(4)}",
        lambda: f"{a3}.{d(3)}.{d(4)}",
        lambda: f"+1 {a3} {d(3)} {d(4)}",
        lambda: f"+1-{a3}-{d(3)}-{d(4)}",
        lambda: f"1-{a3}-{d(3)}-{d(4)}",
        lambda: f"+1 ({a3}) {d(3)}-{d(4)}",
        lambda: f"{a3} {d(3)} {d(4)}",
        lambda: f"+44 20 {d(4)} {d(4)}",
        lambda: f"020 {d(4)} {d(4)}",
        lambda: f"07{d(3)} {d(6)}",
        lambda: f"+44 7{d(3)} {d(6)}",
        lambda: f"+44 (0)20 {d(4)} {d(4)}",
        lambda: f"0161 {d(3)} {d(4)}",
        lambda: f"+49 30 {d(8)}",
        lambda: f"030 {d(8)}",
        lambda: f"0151 {d(8)}",
        lambda: f"+49 151 {d(8)}",
        lambda: f"0049 89 {d(7)}",
        lambda: f"+33 6 {d(2)} {d(2)} {d(2)} {d(2)}",
        lambda: f"06 {d(2)} {d(2)} {d(2)} {d(2)}",
        lambda: f"01.{d(2)}.{d(2)}.{d(2)}.{d(2)}",
        lambda: f"+91 9{d(4)} {d(5)}",
        lambda: f"+61 4{d(2)} {d(3)} {d(3)}",
        lambda: f"04{d(2)} {d(3)} {d(3)}",
        lambda: f"(02) {d(4)} {d(4)}",
        lambda: f"+55 11 9{d(4)}-{d(4)}",
        lambda: f"(11) 9{d(4)}-{d(4)}",
        lambda: f"+81 3-{d(4)}-{d(4)}",
        lambda: f"090-{d(4)}-{d(4)}",
        lambda: f"+34 6{d(2)} {d(2)} {d(2)} {d(2)}",
        lambda: f"6{d(2)} {d(3)} {d(3)}",
        lambda: f"+31 6 {d(8)}",
        lambda: f"06-{d(8)}",
        lambda: f"+86 13{d(1)} {d(4)} {d(4)}",
        lambda: f"+7 9{d(2)} {d(3)}-{d(2)}-{d(2)}",
        lambda: f"8 (9{d(2)}) {d(3)}-{d(2)}-{d(2)}",
        lambda: f"+39 06 {d(4)} {d(4)}",
        lambda: f"+{1}{a3}{d(7)}",
        lambda: f"555-{d(4)}",
        lambda: f"+353 87 {d(3)} {d(4)}",
        lambda: f"+27 82 {d(3)} {d(4)}",
    ]
    return rng.choice(formats)()


def luhn_digit(body: str) -> str:
    total = 0
    for position, char in enumerate(reversed(body)):
        digit = int(char)
        if position % 2 == 0:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return str((10 - total % 10) % 10)


def card(rng: random.Random, *, valid: bool = True) -> str:
    prefix, length = rng.choice(
        [
            ("4", 16),
            ("51", 16),
            ("55", 16),
            ("2221", 16),
            ("34", 15),
            ("37", 15),
            ("6011", 16),
            ("65", 16),
            ("35", 16),
            ("4", 13),
            ("62", 19),
        ]
    )
    body = prefix + _digits(rng, length - len(prefix) - 1)
    check = luhn_digit(body)
    if not valid:
        check = str((int(check) + rng.randint(1, 9)) % 10)
    number = body + check
    if length == 15 and rng.random() < 0.7:
        return f"{number[:4]} {number[4:10]} {number[10:]}"
    style = rng.random()
    if style < 0.45:
        return " ".join(number[i : i + 4] for i in range(0, len(number), 4))
    if style < 0.7:
        return "-".join(number[i : i + 4] for i in range(0, len(number), 4))
    return number


IBAN_FORMATS = {
    "DE": "8n10n",
    "GB": "4a6n8n",
    "FR": "5n5n11c2n",
    "ES": "4n4n1n1n10n",
    "NL": "4a10n",
    "IT": "1a5n5n12c",
    "BE": "3n7n2n",
    "CH": "5n12c",
}


def iban(rng: random.Random) -> str:
    country = rng.choice(list(IBAN_FORMATS))
    number = ""
    for part in _parts(IBAN_FORMATS[country]):
        n, kind = int(part[:-1]), part[-1]
        pool = (
            string.digits
            if kind == "n"
            else string.ascii_uppercase
            if kind == "a"
            else string.digits + string.ascii_uppercase
        )
        number += "".join(rng.choice(pool) for _ in range(n))
    moved = number + country + "00"
    check = 98 - int("".join(str(int(c, 36)) for c in moved)) % 97
    full = f"{country}{check:02d}{number}"
    if rng.random() < 0.65:
        return " ".join(full[i : i + 4] for i in range(0, len(full), 4))
    return full


def _parts(spec: str) -> list[str]:
    parts, digits = [], ""
    for char in spec:
        digits += char
        if char.isalpha():
            parts.append(digits)
            digits = ""
    return parts


def ip(rng: random.Random) -> str:
    if rng.random() < 0.75:
        first = rng.choice([10, 172, 192, 8, 34, 52, 100, 203, 81])
        return ".".join(
            str(x) for x in (first, rng.randint(0, 255), rng.randint(0, 255), rng.randint(1, 254))
        )
    groups = [f"{rng.randint(0, 0xFFFF):x}" for _ in range(8)]
    if rng.random() < 0.6:
        return f"2001:db8::{groups[5]}:{groups[6]}:{groups[7]}"
    return ":".join(groups)


def _token(rng: random.Random, n: int, pool: str = string.ascii_letters + string.digits) -> str:
    while True:
        token = "".join(rng.choice(pool) for _ in range(n))
        if any(c.isdigit() for c in token) and any(c.isalpha() for c in token):
            return token


def key(rng: random.Random) -> tuple[str, str]:
    """(the key, how it is introduced: a template with ``{}``)."""
    vendors = [
        lambda: f"sk-{_token(rng, 48)}",
        lambda: f"sk-proj-{_token(rng, 64, string.ascii_letters + string.digits + '_-')}",
        lambda: f"sk-ant-api03-{_token(rng, 80, string.ascii_letters + string.digits + '_-')}",
        lambda: f"AKIA{_token(rng, 16, string.ascii_uppercase + string.digits)}",
        lambda: f"ghp_{_token(rng, 36)}",
        lambda: f"github_pat_{_token(rng, 22)}_{_token(rng, 59)}",
        lambda: f"xoxb-{_digits(rng, 12)}-{_digits(rng, 13)}-{_token(rng, 24)}",
        lambda: f"xoxp-{_digits(rng, 12)}-{_digits(rng, 12)}-{_token(rng, 32)}",
        lambda: f"sk_live_{_token(rng, 24)}",
        lambda: f"AIza{_token(rng, 35, string.ascii_letters + string.digits + '_-')}",
    ]
    generic = [
        ("api_key={}", 32, string.hexdigits.lower()[:16]),
        ("token: {}", 40, string.ascii_letters + string.digits),
        ("the password is {}", 20, string.ascii_letters + string.digits + "!#%"),
        ("SECRET_KEY='{}'", 50, string.ascii_letters + string.digits + "-_"),
        ("aws_secret_access_key = {}", 40, string.ascii_letters + string.digits + "/+"),
        ("Bearer {}", 36, string.ascii_letters + string.digits),
        ("client secret: {}", 32, string.ascii_letters + string.digits),
    ]
    if rng.random() < 0.7:
        intro = rng.choice(
            [
                "my key is {}",
                "here's the key {}",
                "{}",
                "export OPENAI_API_KEY={}",
                "use `{}`",
                "the token {} expires friday",
                'OPENAI_API_KEY="{}"',
            ]
        )
        return rng.choice(vendors)(), intro
    template, n, pool = rng.choice(generic)
    return _token(rng, n, pool).strip("!#%"), template


SENTENCES = {
    "email": [
        "you can reach me at {}",
        "my email is {}, ping me there",
        "send the slides to {}!",
        "did you get my mail? it came from {}.",
        "({}) is my work address",
        "cc {}; she handles billing",
        "new address: {}",
        'it\'s "{}" now',
        "write to {} or call",
        "{} — that's the one",
        "I changed it to {}?",
        "email:{}",
    ],
    "phone": [
        "call me at {}",
        "my number is {}.",
        "text {} when you land!",
        "new cell: {}",
        "reach me on {}, any time",
        "({}) is the office line",
        "WhatsApp {}?",
        "the clinic's number is {} btw",
        "ring {}",
        "{} is mine, the other was my old one",
        "phone: {}",
        'it\'s "{}"',
    ],
    "card": [
        "my card number is {}",
        "charge it to {}, thanks",
        "card: {}.",
        "use {} for the booking!",
        "I typed {} but it was declined?",
        "({}) exp 04/27",
        "the Visa is {}",
        "paid with {}; receipt attached",
    ],
    "iban": [
        "my IBAN is {}",
        "wire it to {}, please",
        "IBAN: {}.",
        "send the rent to {}!",
        "account ({}) under my name",
        "the bank details are {} — Sparkasse",
        "is {} right?",
        "pay into {} by Friday",
    ],
    "ip": [
        "the server is at {}",
        "ssh into {}, the usual user",
        "it resolves to {}.",
        "ping {}!",
        "my home IP is {}?",
        "open http://{}:8080/admin",
        "blocked {} on the firewall",
        "({}) keeps timing out",
        "connect to {}:5432",
    ],
}
OPENERS = ["", "", "", "Hey! ", "Ok so ", "Quick one: ", "Sure, ", "Sorry for the delay. ", "Btw ", "Lol "]
CLOSERS = ["", "", "", " Thanks!", " See you tomorrow.", " Let me know.", " :)", " Talk soon", " Cheers"]
PLAIN = [
    "I went hiking with the kids on Saturday.",
    "The new job starts next month and I'm nervous.",
    "We finally painted the living room blue.",
    "Did you see the game last night?",
    "My sister is visiting from Lisbon in June.",
    "I've been reading a lot about pottery lately.",
    "The dog chewed my favourite shoes again.",
    "We're thinking about moving closer to the coast.",
]


def near_miss(rng: random.Random) -> str:
    d = lambda n: _digits(rng, n)  # noqa: E731
    year, month, day = rng.randint(1990, 2026), rng.randint(1, 12), rng.randint(1, 28)
    misses = [
        lambda: f"on {year}-{month:02d}-{day:02d}",
        lambda: f"on {day:02d}.{month:02d}.{year}",
        lambda: f"by {month:02d}/{day:02d}/{year}",
        lambda: f"from {day:02d}-{month:02d}-{year}",
        lambda: f"at {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}",
        lambda: f"at {year}-{month:02d}-{day:02d} 10:30:00",
        lambda: f"after upgrading to version {rng.randint(1, 12)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
        lambda: f"running v{rng.randint(1, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 99)}",
        lambda: (
            f"with version {rng.randint(1, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 99)}"
        ),
        lambda: f"order {card(rng, valid=False)}",
        lambda: f"order #{d(8)}",
        lambda: f"for ${rng.randint(1, 9)},{d(3)}.{d(2)}",
        lambda: f"between {year} and {year + 2}",
        lambda: f"in {year}-{year + 3}",
        lambda: f"up {rng.randint(1, 99)}.{d(1)}%",
        lambda: f"in {rng.randint(10000, 99999)}",
        lambda: f"reference {d(6)}",
        lambda: f"{rng.randint(2, 9)} of {rng.randint(10, 99)}",
        lambda: f"tracking number 1Z{d(16)}",
        lambda: f"ISBN 978-{d(1)}-{d(3)}-{d(5)}-{d(1)}",
    ]
    return rng.choice(misses)()


def generate(count: int = 600, seed: int = SEED) -> list[Message]:
    """``count`` messages: each holds 1 or 2 pieces of personal data (about a tenth hold none), a
    third a near miss too."""
    rng = random.Random(seed)
    messages = []
    for i in range(count):
        speaker = SPEAKERS[i % len(SPEAKERS)]
        pieces = 0 if rng.random() < 0.1 else (1 if rng.random() < 0.75 else 2)
        text, gold = rng.choice(OPENERS), []
        for n in range(pieces):
            kind = KINDS[(i + n) % len(KINDS)] if rng.random() < 0.5 else rng.choice(KINDS)
            if kind == "key":
                value, template = key(rng)
            else:
                value = {"email": email, "phone": phone, "card": card, "iban": iban, "ip": ip}[kind](rng)
                template = rng.choice(SENTENCES[kind])
            if n:
                text += rng.choice([" Also ", " And ", "\n", " — also, "])
            before, _, after = template.partition("{}")
            start = len(text) + len(before)
            text += before + value + after
            gold.append((kind, start, start + len(value)))
        if not pieces or rng.random() < 0.35:
            filler = rng.choice(PLAIN)
            if rng.random() < 0.85:
                filler = filler.rstrip(".") + " " + near_miss(rng) + "."
            text = (text + " " + filler) if text.strip() else filler
        text += rng.choice(CLOSERS)
        messages.append(Message(speaker, text, gold))
    return messages
