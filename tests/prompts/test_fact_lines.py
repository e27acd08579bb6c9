"""The compact line formats (``prompts.fact_lines``): reading what a model writes, writing what a
scripted model answers, and the grammar that holds a model to them."""

from __future__ import annotations

import re
from typing import Any

import pytest

from epigraph.prompts.fact_lines import (
    NamePart,
    fact_line_rules,
    name_list_grammar,
    read_fact,
    read_line,
    read_names,
    relation_words,
    time_words,
    unseen_scripts,
    write_fact,
)
from epigraph.prompts.parsing import ReplyError


def test_a_fact_line_is_its_sentence_with_two_bracketed_names() -> None:
    parts = read_fact("[Caroline] went to a [LGBTQ support group] yesterday")
    assert (parts.source.name, parts.target.name, parts.relation) == (
        "Caroline",
        "LGBTQ support group",
        "went to",
    )
    assert parts.sentence == "Caroline went to a LGBTQ support group yesterday"
    lead = read_fact("The [support group] made [Caroline] feel accepted.")
    assert lead.sentence == "The support group made Caroline feel accepted." and lead.relation == "made"


def test_the_relation_is_the_words_between_without_be_and_articles() -> None:
    assert relation_words("is swamped with") == "swamped with"
    assert relation_words("is the mother of") == "mother of"
    assert relation_words("is") == "is"
    assert relation_words("went to her") == "went to"


def test_a_preposition_inside_the_objects_brackets_belongs_to_the_relation() -> None:
    parts = read_fact("[Melanie] is off to go swimming [with the kids]")
    assert (parts.target.name, parts.relation) == ("kids", "off to go swimming with")
    assert parts.sentence == "Melanie is off to go swimming with the kids"


def test_types_and_attributes_are_read_only_when_declared() -> None:
    typed = read_fact(
        "[Ann (Person, age=34)] works at [Acme (Company)] as an engineer {role=engineer}",
        ["Person", "Company"],
    )
    assert typed.source == NamePart("Ann", "Person", {"age": "34"})
    assert typed.target == NamePart("Acme", "Company") and typed.attributes == {"role": "engineer"}
    plain = read_fact("[Cafe (Berlin)] is near [Ann]")
    assert plain.source.name == "Cafe (Berlin)", "no declared type: the parentheses are part of the name"


@pytest.mark.parametrize(
    "bad", ["Caroline went to the group", "[Caroline] [group]", "[] went to [x]", "[a] - [b]"]
)
def test_what_is_not_a_fact_line_is_refused_with_a_reason(bad: str) -> None:
    with pytest.raises(ReplyError):
        read_fact(bad)


def test_a_bare_name_line_and_a_name_list() -> None:
    assert read_line("[Bo]") == NamePart("Bo")
    assert [n.name for n in read_names("pottery class; Ann's gym ; Bo")] == [
        "pottery class",
        "Ann's gym",
        "Bo",
    ]
    typed = read_names("Ann (Person, age=34); Acme (Company)", ["Person", "Company"])
    assert [(n.name, n.entity_type) for n in typed] == [("Ann", "Person"), ("Acme", "Company")]


def test_writing_a_sentence_brackets_its_names_where_it_says_them() -> None:
    assert write_fact("Alice lives in Berlin.", "Alice", "Berlin", "LIVES_IN", " on 2024-01-02") == (
        "[Alice] lives in [Berlin] on 2024-01-02."
    )
    reverse = write_fact("The painting is special to Melanie.", "Melanie", "painting", "CHERISHES")
    assert reverse == "The [painting] is special to [Melanie]."
    nested = write_fact("The charity race for mental health prompted reflection on mental health.",
                        "charity race for mental health", "mental health", "PROMPTED")  # fmt: skip
    assert read_fact(nested).target.name == "mental health"
    assert write_fact("Bob sends his greetings to Carol.", "Bob", "Caro", "GREETS") == "[Bob] greets [Caro]"
    assert (
        time_words("2020-01-01T00:00:00Z", "2021-01-01T12:00:00Z")
        == " from 2020-01-01 to 2021-01-01T12:00:00Z"
    )
    assert time_words(None, "2020-01-01") == " until 2020-01-01" and time_words() == ""


def test_the_grammars_name_what_may_be_written() -> None:
    given = fact_line_rules(["Ann", "Oslo"])
    assert 'text ::= ("Ann" | "Oslo")' in given and 'line ::= "[" name "]" " " relation' in given
    alone = fact_line_rules(alone=True)
    assert 'line ::= "[" name "]" (' in alone
    names = name_list_grammar(3, ["Person"])
    assert names.startswith('root ::= "none\\n" | name ( "; " name ){0,2} "\\n"') and '"Person"' in names


def classes(grammar: str) -> dict[str, re.Pattern[str]]:
    """Each rule's character classes as Python patterns (a GBNF class reads as Python's)."""
    return {
        name.strip(): re.compile(
            "|".join(re.findall(r"\[\^(?:[^\]\\]|\\.)*\]", body)).replace("\\n", "\n") + "+"
        )
        for name, _, body in (line.partition("::=") for line in grammar.splitlines())
        if "[^" in body
    }


def test_a_relation_word_stays_within_one_sentence() -> None:
    """The 1.5B model wrote "[LGBTQ support group] was so powerful. None. (No.) [Caroline] went ...":
    a relation's words may not hold a sentence stop or parentheses, so a line is one sentence."""
    word = classes(fact_line_rules(["Ann", "Oslo"]))["word"]
    assert all(word.fullmatch(w) for w in ("moved", "Ann's", "co-founded", "to,"))
    assert not any(word.fullmatch(w) for w in ("powerful.", "None.", "(No.)", "what?", "wow!"))


@pytest.mark.parametrize(
    "grammar",
    [
        lambda barred: fact_line_rules(alone=True, barred=barred),
        lambda barred: fact_line_rules(["Ann"], barred=barred),
        lambda barred: name_list_grammar(4, barred=barred),
    ],
    ids=["free names", "given names", "name list"],
)
def test_a_reply_about_a_text_in_latin_letters_writes_no_wide_script(grammar: Any) -> None:
    """On English turns the 1.5B model wrote "support and感恩ness": a reply about a text without CJK,
    Hangul or full-width characters may not write them in its free text (names, relation, tail); a
    reply about a text that has them may."""
    english = unseen_scripts("Caroline: I was so thankful for all the support!")
    assert unseen_scripts("Mei: 我很感恩 all the support") == "" and english
    barred, free = classes(grammar(english)), classes(grammar(unseen_scripts("Mei: 我很感恩")))
    assert barred and barred.keys() == free.keys()
    for rule in barred:
        assert barred[rule].fullmatch("thankful") and free[rule].fullmatch("thankful"), rule
        assert not any(barred[rule].fullmatch(w) for w in ("感恩ness", "表演", "한국", "ｆｕｌｌ")), rule
        assert all(free[rule].fullmatch(w) for w in ("感恩ness", "表演", "한국")), rule
