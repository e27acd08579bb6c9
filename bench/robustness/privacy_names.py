"""The privacy bench's person names: a generated set of chat turns seeded with known names, from a fixed
seed, and the judged tagger spans of LoCoMo.

Each message is ``"Speaker: text"``, as the ingestion queue's door sees a chat turn, with 0 to 2 people
named in its text (a first name, a full name, a possessive, now and then written in lower case as chat
does) in phrasings people use; about half also hold a near miss: a capitalised word that is NOT a
person (a place, a company, a brand, a weekday or month, a holiday, a sentence's first word). The first
names and surnames are common ones of many countries, not famous people's. ``gold`` holds every name
with its place, the speaker's too (``speaker``: True), so recall is counted apart for the two.

LoCoMo names its people freely (its conversations ARE about people), so every span a tagger replaces
there is judged by hand once, by reading its turns: ``LOCOMO_JUDGED`` puts each span text the bench's
tagger found in LoCoMo 26 and 30 into people (the speakers, their nicknames, artists), animals (pets)
or not a name at all (a capitalised word: "Glad", "Guitar's", "Marley flooring"); a span not judged
there is counted apart (``unjudged``), so a different tagger's output is never silently scored.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

SEED = 20261202

FIRST = [
    "Anna", "Ben", "Chloe", "Devika", "Elif", "Farid", "Grace", "Hugo", "Ines", "Jun", "Kofi", "Lena",
    "Marco", "Nadia", "Olu", "Priya", "Quentin", "Rosa", "Sven", "Tariq", "Uma", "Viktor", "Wen", "Yara",
    "Zoe", "Amara", "Bogdan", "Carmen", "Dmitri", "Emeka", "Fatima", "Giulia", "Hiroshi", "Ivana", "Jamal",
    "Keiko", "Liam", "Mateo", "Nia", "Omar", "Paulo", "Ren", "Sofia", "Thandi", "Usman", "Valentina",
    "Wanjiru", "Xavier", "Yusuf", "Zainab", "Aisha", "Bruno", "Chen", "Diego", "Eva", "Freya", "Gabriel",
    "Hana", "Isaac", "Jasmine",
]  # fmt: skip
LAST = [
    "Smith", "Okafor", "Garcia", "Nguyen", "Muller", "Rossi", "Kowalski", "Tanaka", "Silva", "Haddad",
    "Johansson", "Dubois", "Patel", "Kim", "Ivanova", "O'Brien", "Mensah", "Fernandez", "Novak", "Larsen",
    "Yilmaz", "Chowdhury", "Moreau", "Schmidt", "Costa", "Abubakar", "Lindqvist", "Hoang", "Petrov", "Walsh",
]  # fmt: skip
SPEAKERS = ["Dana", "Lee", "Sam", "Ravi", "Mia", "Tom", "Aiko", "Kwame", "Lucia", "Nils"]

NAMED = [
    "I had lunch with {} today.",
    "{} said the train was late again.",
    "Have you heard from {} lately?",
    "my cousin {} is visiting next week",
    "Can you call {} tomorrow?",
    "{} and I went hiking on the weekend.",
    "Tell {} I said hi!",
    "I think {} would love this place.",
    "We're meeting {} at the station at noon.",
    "It was {}'s idea, honestly.",
    "Did {} ever finish that painting?",
    "Just got a message from {}: she got the job!",
    "{} is the one who fixed my bike.",
    "I can't believe {} moved to another city.",
    "Going to {}'s birthday party on Friday.",
    "My neighbour {} lent us a ladder.",
    "Ask {} about the recipe, she knows it.",
    "The kids adore {}.",
    "Me and {} are planning a trip.",
    "{} has the sweetest dog.",
]
NEAR = [
    "We spent a week in {place} and loved it.",
    "I just started a new job at {company}.",
    "Picked up a new {brand} for the trip.",
    "See you on {day}!",
    "The festival is in {month} this year.",
    "We're doing something small for {holiday}.",
    "{opener}, that sounds like a plan.",
    "The office is on {street} now.",
]
PLACES = ["Lisbon", "Nairobi", "Kyoto", "Montreal", "Seville", "Krakow", "Hanoi", "Oslo", "Cape Town", "Lima"]
COMPANIES = ["Google", "Spotify", "the Red Cross", "Siemens", "Unilever", "Airbnb", "Deloitte", "IKEA"]
BRANDS = ["iPhone", "Kindle", "GoPro", "Fitbit", "Nikon camera", "Vespa"]
DAYS = ["Monday", "Tuesday", "Friday", "Saturday", "Sunday"]
MONTHS = ["March", "April", "June", "August", "October"]
HOLIDAYS = ["Christmas", "Diwali", "Eid", "Thanksgiving", "Easter", "Hanukkah"]
OPENERS = ["Honestly", "Sure", "Great", "Wow", "Totally", "Anyway"]
STREETS = ["Baker Street", "Main Street", "Elm Avenue", "Harbour Road"]


@dataclass
class NamedMessage:
    text: str
    gold: list[tuple[int, int, bool]] = field(default_factory=list)
    """(start, end, is the speaker) of each person's name in ``text``."""
    near: list[tuple[int, int]] = field(default_factory=list)
    """(start, end) of each capitalised word that is no person (a near miss)."""


def _name(rng: random.Random) -> str:
    first = rng.choice(FIRST)
    name = f"{first} {rng.choice(LAST)}" if rng.random() < 0.35 else first
    return name.lower() if rng.random() < 0.1 else name


def _near(rng: random.Random) -> tuple[str, str]:
    template = rng.choice(NEAR)
    slot = template[template.index("{") + 1 : template.index("}")]
    pool = {"place": PLACES, "company": COMPANIES, "brand": BRANDS, "day": DAYS, "month": MONTHS,
            "holiday": HOLIDAYS, "opener": OPENERS, "street": STREETS}[slot]  # fmt: skip
    return template.replace("{" + slot + "}", "{}"), rng.choice(pool)


def generate_named(count: int = 500, seed: int = SEED) -> list[NamedMessage]:
    """``count`` chat turns: most name one or two people, about half hold a near miss too."""
    rng = random.Random(seed)
    messages = []
    for i in range(count):
        speaker = SPEAKERS[i % len(SPEAKERS)]
        text = f"{speaker}: "
        message = NamedMessage("", [(0, len(speaker), True)])
        parts: list[tuple[str, str, bool]] = []  # (template, value, is a name)
        people = 0 if rng.random() < 0.15 else (1 if rng.random() < 0.7 else 2)
        parts += [(rng.choice(NAMED), _name(rng), True) for _ in range(people)]
        if not people or rng.random() < 0.5:
            parts.insert(rng.randint(0, len(parts)), (*_near(rng), False))
        for n, (template, value, is_name) in enumerate(parts):
            if n:
                text += " "
            before, _, after = template.partition("{}")
            start = len(text) + len(before)
            text += before + value + after
            if is_name:
                message.gold.append((start, start + len(value), False))
            else:
                message.near.append((start, start + len(value)))
        message.text = text
        messages.append(message)
    return messages


NO_NAMES = (*"Glad Wanna Dance ya Blue Tues Art Nah Nature Guitar Fri Cozy Store Lemme Marley".split(),
            "Last Fri", "kinda nerve")  # fmt: skip
LOCOMO_JUDGED: dict[str, str] = {
    **dict.fromkeys(["Caroline", "Melanie", "Jon", "Gina", "Mel", "Mell", "Caro"], "person"),
    **dict.fromkeys(["Amy Ellis Nutt", "Matt Patterson", "Sara Bareilles", "Bach", "Mozart"], "person"),
    "Ed Sheeran's": "person",
    **dict.fromkeys(["Oliver", "Luna", "Oscar", "Bailey"], "animal"),  # Melanie's pets
    **dict.fromkeys(NO_NAMES, "no name"),
}
"""Every span text spaCy's ``en_core_web_sm`` 3.8 tags PERSON in LoCoMo 26 and 30 ("Speaker: text"),
judged by reading its turns: a person, an animal, or no name ("Marley": "Marley flooring")."""
