"""Bounds on runaway output, over real HTTP: the local OpenAI-compatible test server and the real client.

A small model repeats lines until the token cap, never ends a line, or writes prose around its lines.
Each call must stay bounded (the stream is closed and the server sees the client leave), keep the valid
lines before the runaway, and say what it dropped and why; never crash. The prompt is the combined
extraction, whose reply is bracket fact lines (``prompts.fact_lines``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from epigraph.llm import EndpointProfile
from epigraph.llm.profiles import local_model_profile
from epigraph.prompts import extract_combined as ep
from epigraph.prompts import extract_entities as en
from epigraph.prompts import extract_facts as fp
from epigraph.prompts import extract_window as ew
from epigraph.prompts.extraction import ExtractionInput
from epigraph.prompts.runtime import REPEAT_STOP, build_request, stream
from epigraph.testing.server import FakeOpenAIServer, Reply
from tests.support.llm_client import make_client

GREETING = ep.ExtractCombinedInput(
    **ExtractionInput.of("Caroline: Hey Mel! Good to see you! How have you been?", "Caroline")
)
MELANIE = "[Melanie] sees [Caroline]"
SLOW = 0.003
"""Seconds per chunk: like a real model, the server writes as it generates (not all at once)."""
CAROLINE = "[Caroline] sees [Melanie]"


def facts(items: list[Any]) -> list[str]:
    return [i.fact for i in items if isinstance(i, ep.FactLine)]


async def _run(reply: Reply, data: Any = GREETING, prompt: Any = ep.PROMPT, **client: Any) -> Any:
    async with FakeOpenAIServer(lambda body: reply) as srv, make_client(srv, **client) as llm:
        lines = stream(llm, prompt, data)
        items = [item async for item in lines]
        await asyncio.sleep(0.05)  # let the server notice the closed connection
        return items, lines.result, srv.chat_requests[-1]


async def test_a_looping_reply_is_stopped_and_its_valid_prefix_kept() -> None:
    loop = [f"{CAROLINE}\n", f"{MELANIE}\n"] * 400  # 800 lines: a model stuck in a cycle
    items, result, request = await _run(Reply(chunks=loop, chunk_delay_s=SLOW))
    assert facts(items) == ["Caroline sees Melanie", "Melanie sees Caroline"]
    assert result.stopped is not None and "repeated" in result.stopped
    assert result.truncated and result.finish_reason == "stopped"
    assert [d.reason for d in result.dropped] == ["repeated line"] * REPEAT_STOP
    assert request.client_closed, "the stream was closed, so the server stops generating"
    assert request.chunks_sent < 50
    assert result.usage.output_tokens > 0, "what the stopped call cost is counted (locally)"


async def test_a_line_that_never_ends_is_stopped() -> None:
    endless = ["[Mel", *(["anie and Caroline and"] * 3000)]
    items, result, request = await _run(Reply(chunks=endless, chunk_delay_s=SLOW))
    assert items == []
    assert result.stopped is not None and "longer than" in result.stopped
    assert [d.reason for d in result.dropped] == ["truncated: incomplete final line"]
    assert request.client_closed and request.chunks_sent < 200


async def test_a_server_that_ignores_the_cap_is_stopped_by_characters() -> None:
    many = [f"[Person {i}] sees [Caroline]\n" for i in range(2000)]  # distinct, never repeats
    items, result, request = await _run(Reply(chunks=many, chunk_delay_s=SLOW))
    assert result.stopped is not None and "past the token cap" in result.stopped
    cap = build_request(ep.PROMPT, GREETING).max_tokens
    assert cap is not None and len(result.raw) <= cap * 6 + 100
    assert 0 < len(facts(items)) < 2000 and request.client_closed


async def test_prose_and_fences_are_dropped_and_the_good_lines_kept() -> None:
    text = f"Here are the facts:\n```\n{CAROLINE}\n```\n{MELANIE}\n"
    items, result, _ = await _run(Reply(text=text))
    assert facts(items) == ["Caroline sees Melanie", "Melanie sees Caroline"]
    assert result.stopped is None and not result.truncated
    assert [d.reason for d in result.dropped] == ["not a fact line '[subject] relation [object] ...'"]


async def test_a_second_unreadable_line_closes_the_reply() -> None:
    text = f"{CAROLINE}\nCaroline sees Melanie\nMelanie sees Caroline\n{MELANIE}\n"
    items, result, _ = await _run(Reply(text=text))
    assert facts(items) == ["Caroline sees Melanie"]
    assert result.stopped == "2 unreadable lines" and result.truncated


async def test_output_caps_follow_the_input_not_the_settings() -> None:
    greeting = build_request(ep.PROMPT, GREETING).max_tokens
    long_turn = ep.ExtractCombinedInput(**ExtractionInput.of("Caroline: " + "word " * 120, "Caroline"))
    longer = build_request(ep.PROMPT, long_turn).max_tokens
    assert greeting is not None and longer is not None
    assert 24 <= greeting <= 100 < longer, (greeting, longer)
    given = fp.ExtractFactsInput(**ExtractionInput.of(GREETING.content(), "Caroline"), entities=["Caroline"])
    assert (build_request(fp.PROMPT, given).max_tokens or 0) <= 200
    async with FakeOpenAIServer(lambda body: "") as srv, make_client(srv, max_tokens=200) as llm:
        [_ async for _ in stream(llm, ep.PROMPT, long_turn)]
        assert srv.chat_requests[-1].body["max_tokens"] == 200, "the client's maximum stays the ceiling"


async def test_the_grammar_goes_only_to_endpoints_that_accept_one() -> None:
    seen: list[dict[str, Any]] = []

    def answer(body: dict[str, Any]) -> Reply:
        seen.append(body)
        if "grammar" in body and body.get("model") == "rejects":
            return Reply.bad_request("unknown field: grammar", param="grammar")
        return Reply(text=MELANIE + "\n")

    async with FakeOpenAIServer(answer, models=("fake-model", "rejects")) as srv:
        for model, profile in (
            ("fake-model", EndpointProfile()),
            ("fake-model", EndpointProfile(grammar=True)),
            ("rejects", EndpointProfile(grammar=True)),
        ):
            async with make_client(srv, model=model, profile=profile) as llm:
                items = [i async for i in stream(llm, ep.PROMPT, GREETING)]
                assert facts(items) == ["Melanie sees Caroline"]
                if model == "rejects":
                    assert not llm.profile.grammar, "a 400 naming the grammar turns it off"
    assert "grammar" not in seen[0]
    grammar = seen[1]["grammar"]
    assert grammar.startswith('root ::= "none\\n" | ( line "\\n" ){0,') and 'line ::= "["' in grammar
    assert '"Names: " name ( "; " name ){0,' in grammar, "a reply that is not none ends with its names"
    assert "grammar" in seen[2] and "grammar" not in seen[3], "rejected once, then sent without it"


def test_the_local_models_profile_constrains_replies_by_grammar() -> None:
    assert local_model_profile(8192).grammar and not EndpointProfile().grammar


def test_every_extraction_grammar_bars_wide_scripts_from_a_reply_about_latin_text() -> None:
    """The grammar of each extraction prompt keeps CJK, Hangul and full-width characters out of the
    reply's free text when the episode (or window) has none, and allows them when it has some."""
    wide = "\u2e80-\u9fff"

    def grammars(speaker: str, text: str) -> list[str]:
        fields = ExtractionInput.of(f"{speaker}: {text}", speaker)
        return [
            en.PROMPT.lines.grammar(en.ExtractEntitiesInput(**fields), 3),
            fp.PROMPT.lines.grammar(fp.ExtractFactsInput(**fields, entities=[speaker]), 3),
            ep.PROMPT.lines.grammar(ep.ExtractCombinedInput(**fields), 3),
            ew.PROMPT.lines.grammar(
                ew.ExtractWindowInput(turns=[ew.WindowTurn(speaker=speaker, message=text)]), 3
            ),
        ]

    assert all(wide in g for g in grammars("Caroline", "I was so thankful for all the support!"))
    assert not any(wide in g for g in grammars("Mei", "我很感恩 for all the support!"))
