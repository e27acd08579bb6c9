"""Reading originals back outside Python (issue 62 part 2): ``epigraph redact-key`` makes a key,
``epigraph reveal`` and ``POST /v1/groups/{g}/reveal`` replace a text's placeholders with the originals
the group's vault keeps, opened with the key from the environment (the server's own, never a request's).
A wrong key is refused (exit 1, HTTP 403), no key is a configuration error (exit 2, HTTP 503), and the key
is printed by ``redact-key`` alone, never by a command that uses it."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from bench.shared.serve_harness import uvicorn_thread
from epigraph import reveal
from epigraph.cli.app import main
from epigraph.privacy.vault import VaultKey, new_key
from epigraph.serve import create_app
from tests.support.privacy_scene import EMAIL, Setup, inputs


async def run(argv: list[str], environ: dict[str, str]) -> int:
    """The command line, in a thread of its own (it runs its own event loop)."""
    return await asyncio.to_thread(main, argv, environ=environ)


ORIGINAL = "Dana: my new number is +442079460958, and mail goes to dana.reyes@example.org."


def test_redact_key_prints_a_new_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["redact-key"], environ={}) == 0
    first = capsys.readouterr()
    assert main(["--json", "redact-key"], environ={}) == 0
    second = json.loads(capsys.readouterr().out)["key"]
    key = first.out.strip()
    assert VaultKey.parse(key).raw != VaultKey.parse(second).raw  # two fresh keys
    assert "EPIGRAPH_REDACT_KEY" in first.err and key not in first.err


async def ingested(setup: Setup, key: str) -> str:
    async with setup.graph(key=key) as kg:
        [result] = await kg.add_episodes(inputs()[:1])
    assert result.episode.content == "Dana: my new number is <PHONE_1>, and mail goes to <EMAIL_1>."
    return result.episode.uuid


async def test_epigraph_reveal_reads_the_key_from_the_environment(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    key = new_key()
    uuid = await ingested(setup, key)
    environ = {"EPIGRAPH_DB": str(setup.path), "EPIGRAPH_EMBEDDER": "hash", "EPIGRAPH_EMBED_DIM": "64",
               "EPIGRAPH_REDACT_KEY": key}  # fmt: skip
    assert await run(["reveal", "--episode", uuid], environ) == 0
    assert capsys.readouterr().out.strip() == ORIGINAL
    assert await run(["--json", "reveal", "call <PHONE_1> or <PHONE_9>"], environ) == 0
    assert json.loads(capsys.readouterr().out)["text"] == "call +442079460958 or <PHONE_9>"

    wrong = {**environ, "EPIGRAPH_REDACT_KEY": new_key()}
    assert await run(["--json", "reveal", "<PHONE_1>"], wrong) == 1
    refused = capsys.readouterr()
    assert json.loads(refused.out)["error"]["kind"] == "VaultKeyError"
    assert wrong["EPIGRAPH_REDACT_KEY"] not in refused.out + refused.err
    without = {k: v for k, v in environ.items() if k != "EPIGRAPH_REDACT_KEY"}
    assert await run(["reveal", "<PHONE_1>"], without) == 2
    assert "EPIGRAPH_REDACT_KEY" in capsys.readouterr().err


async def test_the_reveal_route_uses_the_servers_key(setup: Setup) -> None:
    key = new_key()
    uuid = await ingested(setup, key)
    body = {"text": "<PHONE_1> and <EMAIL_1>"}
    answers = {}
    for name, server_key in (("right", key), ("wrong", new_key()), ("none", None)):
        with uvicorn_thread(create_app(setup.graph(key=server_key))) as url:
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                answers[name] = await client.post("/v1/groups/default/reveal", json=body)
                if name == "right":
                    stored = (await client.get(f"/v1/groups/default/episodes/{uuid}")).json()["content"]
    assert answers["right"].status_code == 200
    assert answers["right"].json() == {
        "group_id": "default",
        "text": "+442079460958 and dana.reyes@example.org",
    }
    assert (
        stored == "Dana: my new number is <PHONE_1>, and mail goes to <EMAIL_1>."
    )  # reading reveals nothing
    assert answers["wrong"].status_code == 403 and "not the one" in answers["wrong"].json()["detail"]
    assert answers["none"].status_code == 503 and "EPIGRAPH_REDACT_KEY" in answers["none"].json()["detail"]
    assert all(key not in a.text for a in answers.values())


async def test_forgetting_dana_takes_her_numbers_out_of_the_vault(setup: Setup) -> None:
    """Her messages deleted, nothing reveals her phone, email, IP or key any more (no text left holds
    their placeholders); Lee's card and IBAN, which his own remaining message holds, still reveal; the
    preview counted what the forgetting took out."""
    key = new_key()
    async with setup.graph(key=key) as kg:
        await kg.add_episodes(inputs())
        before = await reveal(kg, "<PHONE_1> <EMAIL_1> <CARD_1>")
        preview = await kg.forget("Dana", episodes="delete")
        done = await kg.forget("Dana", episodes="delete", apply=True, expect=preview.digest)
        after = await reveal(kg, "<PHONE_1> <EMAIL_1> <IP_1> <KEY_1> <CARD_1> <IBAN_1>")
        [record] = await kg.forget.history()
    assert "<" not in before and EMAIL in before  # all three revealed before
    assert after.startswith("<PHONE_1> <EMAIL_1> <IP_1> <KEY_1> ") and "<CARD_1>" not in after
    assert "<IBAN_1>" not in after
    assert preview.counts["vault_values"] == 4 == done.counts["vault_values"] == record.counts["vault_values"]
