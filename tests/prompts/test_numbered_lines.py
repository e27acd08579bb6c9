"""The numbered fact line (``prompts.numbered_lines``, ``FactOptions.line_format`` "numbered"): its ends
by their number in the list of names, its sentence free; read, held by a grammar, streamed."""

from __future__ import annotations

import pytest

from epigraph.prompts import extract_facts as fp
from epigraph.prompts.extraction import ExtractionInput, FactLine
from epigraph.prompts.numbered_lines import numbered, numbered_line_rules, read_numbered, relation_of
from epigraph.prompts.parsing import ReplyError
from epigraph.prompts.render import render
from epigraph.prompts.runtime import build_request, stream
from epigraph.testing import ScriptedLLM, ScriptedReply
from epigraph.tokens import count_message_tokens
from tests.support.gbnf import to_regex

NAMES = ["Ann", "pottery class", "community center", "Ann's gym"]
MESSAGE = "Busy! I started a pottery class last Monday. It meets at the community center near my gym."


def _input(**fields: object) -> fp.NumberedFactsInput:
    return fp.NumberedFactsInput(**ExtractionInput.of(f"Ann: {MESSAGE}", "Ann"), entities=NAMES, **fields)


def test_the_numbers_name_the_ends_and_the_free_text_is_the_sentence() -> None:
    parts = read_numbered("1 2 | Ann started a pottery class last Monday", NAMES)
    assert (parts.source.name, parts.target.name) == ("Ann", "pottery class")
    assert parts.sentence == "Ann started a pottery class last Monday"
    assert parts.relation == "started"
    later = read_numbered("3 4 | The community center is near Ann's gym.", NAMES)
    assert (later.source.name, later.target.name, later.relation) == ("community center", "Ann's gym", "near")


@pytest.mark.parametrize(
    ("sentence", "source", "target", "relation"),
    [
        ("The pottery class meets at the community center", "pottery class", "community center", "meets at"),
        ("She moved to Berlin last month", "Ann", "Berlin", "moved to"),  # the source is not named
        ("Ann moved to the city of Berlin and loved it", "Ann", "Oslo", "moved to"),  # the target is not
        (
            "Ann has wanted for a very long time to join the pottery class",
            "Ann",
            "pottery class",
            "has wanted for",
        ),
        ("The pottery class was started by Ann", "Ann", "pottery class", "started by"),  # named the other way
    ],
)
def test_the_relation_comes_from_the_sentences_words(
    sentence: str, source: str, target: str, relation: str
) -> None:
    assert relation_of(sentence, source, target) == relation


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("5 1 | Ann goes to the gym", "hallucinated"),
        ("0 2 | Ann started a pottery class", "hallucinated"),
        ("[Ann] started [pottery class]", "not a numbered fact line"),
        ("1 2 |", "without its sentence"),
        ("1 2 | ...", "without its sentence"),
        ("1 2 | Ann", "says no relation"),
    ],
)
def test_what_is_no_numbered_fact_is_refused_with_a_reason(line: str, why: str) -> None:
    with pytest.raises(ReplyError, match=why):
        read_numbered(line, NAMES)


def test_relation_attributes_may_end_a_line_in_braces() -> None:
    parts = read_numbered("1 3 | Ann works at the community center {role=teacher}", NAMES)
    assert parts.attributes == {"role": "teacher"} and parts.sentence == "Ann works at the community center"


def test_the_decoder_builds_the_fact_a_bracket_line_would() -> None:
    (numbered_fact,) = fp.NumberedFactLines().decode(
        "1 2 | Ann started a pottery class last Monday", _input()
    )
    (bracket_fact,) = fp.GivenNameFactLines().decode(
        "[Ann] started a [pottery class] last Monday",
        fp.ExtractFactsInput(**ExtractionInput.of(f"Ann: {MESSAGE}", "Ann"), entities=NAMES),
    )
    assert isinstance(numbered_fact, FactLine)
    assert numbered_fact == bracket_fact


def test_the_grammar_holds_a_line_to_two_different_numbers_of_the_list_and_one_sentence() -> None:
    grammar = to_regex(fp.NumberedFactLines().grammar(_input(), 4))
    allowed = [
        "none\n",
        "1 2 | Ann started a pottery class last Monday\n",
        "2 3 | The pottery class meets at the community center.\n3 4 | The center is near Ann's gym\n",
    ]
    refused = [
        "1 1 | Ann is Ann\n",  # the same end twice
        "5 1 | Ann goes to the gym\n",  # no fifth name
        "1 2 | Ann started a class. It was fun\n",  # a stop inside: two sentences
        "[Ann] started [pottery class]\n",  # the bracket format
        "1 2 | Ann started a pottery class | again\n",
        "1 2 Ann started a pottery class\n",
    ]
    assert all(grammar.fullmatch(reply) for reply in allowed)
    assert not any(grammar.fullmatch(reply) for reply in refused)


def test_the_grammar_of_many_names_reads_each_number_whole() -> None:
    grammar = to_regex("root ::= line\n" + numbered_line_rules(12))
    assert grammar.fullmatch("12 1 | Ann met Bo") and grammar.fullmatch("1 12 | Ann met Bo")
    assert not grammar.fullmatch("13 1 | Ann met Bo") and not grammar.fullmatch("12 12 | Ann met Bo")


def test_the_numbered_prompt_shows_the_names_numbered_and_its_own_example() -> None:
    request = build_request(fp.NUMBERED_PROMPT, _input())
    system, *shots, last = request.messages
    assert last["content"].startswith(f"Names: {numbered(NAMES)}\nSpeaker: Ann")
    assert "Names: 1 Ann, 2 pottery class, 3 community center, 4 Ann's gym" in last["content"]
    assert shots[1]["content"].splitlines()[0] == "1 2 | Ann started a pottery class last Monday"
    assert system["content"].startswith("You turn a message into facts for a knowledge graph.")
    assert request.prompt_name == "extract_facts" and fp.NUMBERED_PROMPT.version != fp.PROMPT.version
    assert request.grammar is not None and '"1 " other1' in request.grammar


def test_the_option_picks_the_prompt_and_brackets_stay_the_default() -> None:
    assert fp.prompt_for("numbered") is fp.NUMBERED_PROMPT
    assert fp.prompt_for("brackets") is fp.PROMPT
    assert fp.PROMPT.version == "2" and fp.PROMPT.template_file == "extract_facts.txt"


async def test_lines_stream_as_they_come_and_a_cut_reply_keeps_what_came_before() -> None:
    reply = (
        "1 2 | Ann started a pottery class last Monday\n"
        "9 2 | Ann loves the pottery class\n"
        "2 3 | The pottery class meets at the community center\n"
        "3 4 | The community center is ne"
    )
    llm = ScriptedLLM({"extract_facts": ScriptedReply(reply, finish_reason="length", chunk_size=7)})
    lines = stream(llm, fp.NUMBERED_PROMPT, _input())
    got = [(f.source, f.target, f.relation) async for f in lines]
    assert got == [("Ann", "pottery class", "started"), ("pottery class", "community center", "meets at")]
    result = lines.result
    assert result.truncated
    reasons = [d.reason for d in result.dropped]
    assert any("9 numbers none of the 4 names" in r and "hallucinated" in r for r in reasons)
    assert any("incomplete final line" in r for r in reasons)


def test_the_numbered_prompt_is_a_fixed_part_then_a_small_new_part() -> None:
    """As every extraction prompt (tests/pipeline/test_prompts_and_context.py): the episode last, so a
    server's prompt cache evaluates only it, and both small."""
    example = fp.NUMBERED_PROMPT.example
    messages = render(fp.NUMBERED_PROMPT, example)
    assert count_message_tokens(messages) < 520 and count_message_tokens(messages[-1:]) < 100
    fixed = render(fp.NUMBERED_PROMPT, example.model_copy(update={"context": "Earlier: hi\n\n"}))
    assert messages[:-1] == fixed[:-1]


async def test_none_is_the_reply_with_no_fact() -> None:
    lines = stream(ScriptedLLM({"extract_facts": "none\n"}), fp.NUMBERED_PROMPT, _input())
    assert [f async for f in lines] == [] and lines.result.dropped == [] and lines.result.complete
