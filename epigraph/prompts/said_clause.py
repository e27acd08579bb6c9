"""A fact's sentence taken from its message: the clause that names both of the fact's ends, the speaker's
first person turned into the speaker's name.

The model links, the message speaks: a small model asked to write a sentence around two bracketed names
bends the message's sentence around them (a name said twice, the sentence running on, a reply's words
stuck to a name), while the message already says the fact in words a reader can use. So the decoders
keep the model's two ends and relation and take the sentence from the message when one of its clauses
names both ends:

    Caroline: "I went to a LGBTQ support group yesterday and it was so powerful."
    [Caroline] went to [LGBTQ support group] yesterday
    -> "Caroline went to a LGBTQ support group yesterday"

- the message is cut into sentences, a question is no statement (left out), and each sentence into
  clauses at commas, semicolons and the conjunctions of :data:`_JOINS`; the shortest run of consecutive
  clauses of one sentence that names both ends is the fact's sentence;
- the first person is the speaker's ("I", "me", "myself" -> the name, "my", "mine" -> the name's; "I'm",
  "I've", "I'd", "I'll" opened; "am", "have", "do" after it in the third person, and a present verb
  right after it given its -s);
- an end is named when its words stand in the clause as a run (up to endings: ``same_word``), the
  two ends at different places;
- no clause naming both: ``None`` (the decoder keeps the model's sentence).
"""

from __future__ import annotations

import re

from ..language import same_word

_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_JOINS = ("and", "but", "so", "because", "while", "though", "although", "when", "since", "then")
_CLAUSES = re.compile(r"(\s*[,;:]\s+|\s+(?:" + "|".join(_JOINS) + r")\s+|\s+[-–—&]\s+)", re.IGNORECASE)
_WORD = re.compile(r"[\w'’]+")
_OPENED = {"i'm": "is", "i've": "has", "i'd": "would", "i'll": "will"}
_THIRD_PERSON = {"am": "is", "have": "has", "do": "does", "don't": "doesn't", "haven't": "hasn't"}
_NOT_PRESENT = frozenset(
    "was were did had can could will would should shall may might must also really just still never "
    "always totally even actually ever only already usually often sometimes recently finally went got "
    "made took saw felt found said thought knew ran came gave met left bought brought kept began won "
    "wrote heard told lost paid sat stood spent taught caught built sent fell held led grew drew flew "
    "chose wore broke forgot understood became".split()
)
"""Words after "I" that keep their form for the speaker's name: the past, modals, adverbs."""
_ADVERBS = frozenset("also really just still never always totally even actually usually often".split())


def _third_person(verb: str) -> str:
    low = verb.casefold()
    if low in _THIRD_PERSON:
        return _THIRD_PERSON[low]
    if low in _NOT_PRESENT or low.endswith("ed") or not low.isalpha():
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def in_third_person(text: str, speaker: str) -> str:
    """``text`` with the first person singular turned into ``speaker`` ("I love my kids" -> "Melanie
    loves Melanie's kids"); everything else as written."""
    out: list[str] = []
    at = 0
    verb_next = False
    for match in _WORD.finditer(text):
        word, low = match.group(0), match.group(0).casefold().replace("’", "'")
        out.append(text[at : match.start()])
        at = match.end()
        if low in _OPENED:
            word, verb_next = f"{speaker} {_OPENED[low]}", False
        elif low in ("i", "me", "myself"):
            word, verb_next = speaker, low == "i"
        elif low in ("my", "mine"):
            word, verb_next = f"{speaker}'s", False
        elif verb_next:
            word, verb_next = _third_person(word), low in _ADVERBS  # "I really love" -> "really loves"
        out.append(word)
    out.append(text[at:])
    return "".join(out)


def _words(text: str) -> list[str]:
    """Case-folded words, a possessive ``'s`` its own word ("melanie", "'s", "kids")."""
    out: list[str] = []
    for word in re.findall(r"[\w'’]+", text.casefold().replace("’", "'")):
        if word.endswith("'s") and len(word) > 2:
            out.extend((word[:-2], "'s"))
        else:
            out.append(word)
    return out


def _places(clause: list[str], name: str) -> list[range]:
    """Where ``name``'s words (a leading article left out) stand in ``clause`` as a run."""
    core = _words(name)
    if len(core) > 1 and core[0] in ("the", "a", "an"):
        core = core[1:]
    size = len(core)
    return [
        range(i, i + size)
        for i in range(len(clause) - size + 1)
        if size and all(same_word(clause[i + k], core[k]) for k in range(size))
    ]


def _names_both(clause: list[str], source: str, target: str) -> bool:
    return any(not set(a) & set(b) for a in _places(clause, source) for b in _places(clause, target))


def _pieces(sentence: str) -> list[tuple[str, str]]:
    """(clause, the separator before it) pairs of a sentence."""
    parts = _CLAUSES.split(sentence)
    pieces = [(parts[0], "")]
    for i in range(1, len(parts) - 1, 2):
        pieces.append((parts[i + 1], parts[i]))
    return [(c, sep) for c, sep in pieces if c.strip()]


def said_clause(message: str, speaker: str | None, source: str, target: str) -> str | None:
    """The message's shortest run of clauses naming ``source`` and ``target`` (first person as the
    ``speaker``), without its closing stop; None when no clause of a statement names both."""
    text = in_third_person(message, speaker) if speaker else message
    best: str | None = None
    for sentence in _SENTENCES.split(text.strip()):
        if sentence.rstrip().endswith("?"):
            continue
        pieces = _pieces(sentence.strip())
        for start in range(len(pieces)):
            for end in range(start + 1, len(pieces) + 1):
                run = pieces[start][0] + "".join(sep + clause for clause, sep in pieces[start + 1 : end])
                if _names_both(_words(run), source, target):
                    if best is None or len(run) < len(best):
                        best = run
                    break
    if best is None:
        return None
    best = best.strip().rstrip(".!,;:").strip()
    return best[:1].upper() + best[1:]
