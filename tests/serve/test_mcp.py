"""``epigraph mcp`` over stdio, driven by the MCP SDK's own client: the tools add, check, search, read,
ask and remove, with the same keys and groups as the HTTP API (the stdio session presents
``EPIGRAPH_API_KEY``)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.shared.serve_harness import LLMThread, World, server_env
from epigraph import __version__
from epigraph.episodes.inputs import MAX_EPISODE_CHARS

TOOLS = {
    "add_episodes", "episode_status", "search", "read_entity", "changes", "explain", "ask", "remove_episode",
    "communities", "update_communities", "conversations", "conversation", "update_conversations",
}  # fmt: skip
CONTEXT_TOOLS = ["search_episodes", "search_facts", "entities", "conversations_of", "episodes_of"]
"""The default path's retrieval steps (``epigraph.ask.context.PARTS``)."""
CORRECTING = {"add_fact", "retire_fact", "edit_fact", "delete_fact", "merge_entities", "unmerge_entities",
              "rename_entity", "undo_correction", "list_corrections", "delete_group"}  # fmt: skip
MOVING = {"export_group", "load_group"}
FORGETTING = {"forget", "list_forgotten", "retention"}


async def _call(session: ClientSession, tool: str, **args: Any) -> tuple[bool, Any]:
    result = await session.call_tool(tool, args)
    text = "".join(getattr(block, "text", "") for block in result.content)
    if result.is_error:
        return False, text
    return True, result.structured_content if result.structured_content is not None else json.loads(text)


async def _until_done(session: ClientSession, group: str, uuid: str) -> dict[str, Any]:
    for _ in range(300):
        ok, episode = await _call(session, "episode_status", group_id=group, uuid=uuid)
        assert ok, episode
        if episode["status"] != "pending":
            return dict(episode)
        await asyncio.sleep(0.1)
    raise AssertionError(f"episode {uuid} still pending")


PAIR = {"Alice and Bob", "Bob and Alice"}  # named after its members, best connected first (a tie here)


async def _overview_checks(session: ClientSession, uuid: str) -> None:
    """The episode above (source "chat") makes a conversation, whose summary the server's drain folds it
    into after its batch; the communities are built on request; then read and searched."""
    for _ in range(300):
        ok, listed = await _call(session, "conversations", group_id="alpha")
        assert ok and [c["key"] for c in listed["conversations"]] == ["chat"]
        if listed["conversations"][0]["unsummarized"] == 0:
            break
        await asyncio.sleep(0.1)
    assert listed["conversations"][0]["unsummarized"] == 0, listed
    ok, updated = await _call(session, "update_conversations", group_id="alpha")
    assert ok and updated["updates"] == []  # nothing behind
    ok, updated = await _call(session, "update_conversations", group_id="alpha", rebuild=True)
    assert ok and [u["folded"] for u in updated["updates"]] == [1]
    ok, chat = await _call(session, "conversation", group_id="alpha", key="chat")
    assert ok and [e["uuid"] for e in chat["episodes"]] == [uuid]
    assert "Alice met Bob" in chat["summary"]["summary"]
    ok, built = await _call(session, "update_communities", group_id="alpha", rebuild=True)
    assert ok and built["update"]["rebuilt"] and built["communities"][0]["name"] in PAIR
    ok, now = await _call(session, "communities", group_id="alpha")
    assert ok and {m["name"] for m in now["communities"][0]["members"]} == {"Alice", "Bob"}
    ok, found = await _call(session, "search", group_id="alpha", query="Alice Bob", scope="communities")
    assert ok and found["communities"][0]["community"]["name"] in PAIR
    for tool in ("conversations", "communities"):
        ok, refused = await _call(session, tool, group_id="beta")
        assert not ok and "403" in refused
    ok, missing = await _call(session, "conversation", group_id="alpha", key="nothing")
    assert not ok and "no conversation" in missing


async def _session_checks(session: ClientSession) -> None:
    tools = await session.list_tools()
    assert {t.name for t in tools.tools} == TOOLS | CORRECTING | MOVING | FORGETTING
    for tool in tools.tools:  # a server without a group of its own: every tool asks for one
        assert "group_id" in tool.input_schema["required"], tool
    ok, refused = await _call(session, "search", query="Alice")
    assert not ok and "group_id" in refused and "required" in refused
    episodes = [{"content": "Alice met Bob.", "reference_time": "2024-05-02T10:00:00Z", "source": "chat"}]
    ok, accepted = await _call(session, "add_episodes", group_id="alpha", episodes=episodes)
    assert ok and accepted["episodes"][0]["status"] == "pending", accepted
    uuid = accepted["episodes"][0]["uuid"]
    assert (await _until_done(session, "alpha", uuid))["status"] == "done"
    ok, found = await _call(session, "search", group_id="alpha", query="Alice Bob", scope="facts")
    assert ok and found["facts"][0]["fact"]["text"] == "Alice knows Bob."
    ok, found = await _call(session, "search", group_id="alpha", query="Alice met Bob", scope="episodes")
    assert ok and [e["episode"]["uuid"] for e in found["episodes"]] == [uuid]
    ok, found = await _call(session, "search", group_id="alpha", query="Alice met Bob", as_of="2024-01-01")
    assert ok and found["episodes"] == []  # said on 2024-05-02: not among what was said by then
    ok, refused = await _call(session, "search", group_id="alpha", query="Alice", as_of=0)
    assert not ok and "ISO 8601" in refused  # not read as 1970
    ok, view = await _call(session, "read_entity", group_id="alpha", name="Alice")
    assert ok and view["entity"]["name"] == "Alice" and view["current"] and view["episodes"]
    ok, then = await _call(session, "read_entity", group_id="alpha", name="Alice", as_of="2024-01-01")
    assert not ok and "as of 2024-01-01" in then and "nothing said by then names it" in then  # issue 63
    ok, changed = await _call(session, "changes", group_id="alpha", since="2024-05-01", until="2024-05-03")
    assert ok and changed["counts"]["started"] == 1 and changed["counts"]["learned"] == 0, changed
    started = {c["fact"]["text"] for e in changed["entities"] for c in e["changes"] if c["kind"] == "started"}
    assert started == {"Alice knows Bob."}
    sources = [c["sources"] for e in changed["entities"] for c in e["changes"]]
    assert {s["uuid"] for found in sources for s in found} == {uuid}
    ok, refused = await _call(session, "changes", group_id="alpha", since="2024-05-03", until="2024-05-01")
    assert not ok and "must be before until" in refused
    ok, answer = await _call(session, "ask", group_id="alpha", question="Who does Alice know?")
    assert ok and "Alice knows Bob" in answer["text"]
    assert [a["tool"] for a in answer["actions"]] == CONTEXT_TOOLS and answer["usage"]["calls"] == 1
    ok, planned = await _call(session, "ask", group_id="alpha", question="Who does Alice know?", mode="agent")
    assert (
        ok and [a["tool"] for a in planned["actions"]] == ["search_facts"] and planned["usage"]["calls"] == 3
    )
    assert planned["citations"] == answer["citations"], "both paths cite the one fact"
    for tool, args in [("search", {"query": "Alice"}), ("episode_status", {"uuid": uuid}),
                       ("add_episodes", {"episodes": episodes})]:  # fmt: skip
        ok, refused = await _call(session, tool, group_id="beta", **args)
        assert not ok and "403" in refused and "Alice" not in refused
    await _overview_checks(session, uuid)
    ok, removed = await _call(session, "remove_episode", group_id="alpha", uuid=uuid)
    assert ok and removed["episode"] == uuid
    ok, gone = await _call(session, "episode_status", group_id="alpha", uuid=uuid)
    assert not ok and "no episode" in gone
    await _correction_checks(session)


async def _correction_checks(session: ClientSession) -> None:
    """Corrections, export and load as tools, scoped by the same key."""
    episodes = [{"content": "Carol met Dave.", "reference_time": "2024-05-02T10:00:00Z"}]
    ok, accepted = await _call(session, "add_episodes", group_id="alpha", episodes=episodes)
    await _until_done(session, "alpha", accepted["episodes"][0]["uuid"])
    ok, added = await _call(session, "add_fact", group_id="alpha", source="Carol", relation="lives in",
                            target="Oslo", author="alice", create=True)  # fmt: skip
    assert ok and added["description"] == "added 'Carol lives in Oslo'" and added["author"] == "person:alice"
    fact = added["after"]["facts"][0]["uuid"]
    ok, edited = await _call(session, "edit_fact", group_id="alpha", uuid=fact, author="alice",
                             valid_at="2020-01-01T00:00:00Z")  # fmt: skip
    assert ok and edited["after"]["facts"][0]["valid_at"] == "2020-01-01T00:00:00Z"
    ok, cleared = await _call(session, "edit_fact", group_id="alpha", uuid=fact, author="alice",
                              clear_valid_at=True)  # fmt: skip
    assert ok and cleared["after"]["facts"][0]["valid_at"] is None
    ok, merged = await _call(
        session, "merge_entities", group_id="alpha", keep="Carol", merge="Dave", author="bob"
    )
    assert ok and merged["operation"] == "merge_entities"
    ok, listed = await _call(session, "list_corrections", group_id="alpha", entity="Carol")
    assert ok and [c["operation"] for c in listed["corrections"]][:2] == ["merge_entities", "edit_fact"]
    ok, undone = await _call(session, "unmerge_entities", group_id="alpha", entity="Carol", author="bob")
    assert ok and undone["undoes"] == merged["uuid"]
    ok, missing = await _call(session, "retire_fact", group_id="alpha", uuid="no-such", author="bob")
    assert not ok and "no fact 'no-such'" in missing
    ok, refused = await _call(session, "add_fact", group_id="beta", source="A", relation="knows", target="B",
                              author="alice")  # fmt: skip
    assert not ok and "403" in refused
    ok, dump = await _call(session, "export_group", group_id="alpha")
    assert ok and dump["dump"].startswith('{"record": "header"')
    ok, loaded = await _call(session, "load_group", group_id="alpha-copy", dump=dump["dump"])
    assert not ok and "403" in loaded  # the stdio key names only alpha
    ok, broken = await _call(session, "load_group", group_id="alpha", dump=dump["dump"][:-40])
    assert not ok and re.search(r"body:\d+: not JSON", broken)
    ok, deleted = await _call(session, "delete_group", group_id="alpha", confirm="alpha")
    assert ok and deleted["deleted"]["entities"] >= 3
    ok, missing = await _call(session, "export_group", group_id="alpha")
    assert not ok and "no group 'alpha' in the store" in missing, "no empty dump of a group not there"
    ok, loaded = await _call(session, "load_group", group_id="alpha", dump=dump["dump"])
    assert ok and loaded["groups"]["alpha"]["correction"] == 5
    await _forgetting_checks(session)


async def _forgetting_checks(session: ClientSession) -> None:
    """Forgetting and retention as tools: a preview, the apply of exactly it, the audit records."""
    ok, preview = await _call(session, "forget", group_id="alpha", subject="Carol")
    assert ok and not preview["applied"] and preview["ids"]["entities"]
    ok, done = await _call(session, "forget", group_id="alpha", subject="Carol", apply=True,
                           expect=preview["digest"])  # fmt: skip
    assert ok and done["applied"] and done["ids"] == preview["ids"] and done["record"]["call"] == "mcp"
    assert "carol" not in json.dumps(done).lower()
    ok, records = await _call(session, "list_forgotten", group_id="alpha", name="Carol")
    assert ok and [r["uuid"] for r in records["forgotten"]] == [done["record"]["uuid"]]
    ok, missing = await _call(session, "forget", group_id="alpha", subject="Carol")
    assert not ok and "no entity" in missing
    ok, refused = await _call(session, "forget", group_id="beta", subject="Carol")
    assert not ok and "403" in refused
    ok, policy = await _call(session, "retention", group_id="alpha", action="set", days=7)
    assert ok and policy["retention"]["days"] == 7
    ok, preview = await _call(session, "retention", group_id="alpha", action="apply")
    assert ok and not preview["applied"] and preview["ids"]["episodes_deleted"]  # said in 2024
    ok, cleared = await _call(session, "retention", group_id="alpha", action="clear")
    assert ok and cleared["cleared"]
    await _refusal_checks(session)


async def _refusal_checks(session: ClientSession) -> None:
    """An id reused with other content is a tool error (409), never dropped; an episode over the one
    limit of every door (``MAX_EPISODE_CHARS``) too (422); nothing of either is stored."""
    at = "2024-05-02T10:00:00Z"
    again = [{"content": "Eve met Finn.", "reference_time": at, "id": "m-1"}]
    ok, first = await _call(session, "add_episodes", group_id="alpha", episodes=again)
    assert ok, first
    ok, same = await _call(session, "add_episodes", group_id="alpha", episodes=again)
    assert ok and same["episodes"][0]["uuid"] == first["episodes"][0]["uuid"], "a duplicate"
    other = [{"content": "Eve met Gus.", "reference_time": at, "id": "m-1"}]
    ok, refused = await _call(session, "add_episodes", group_id="alpha", episodes=other)
    assert not ok and "409: episode id 'm-1' of group 'alpha' is already taken" in refused
    long = [{"content": "e" * (MAX_EPISODE_CHARS + 1), "reference_time": at}]
    ok, refused = await _call(session, "add_episodes", group_id="alpha", episodes=long)
    assert not ok and f"422 episodes[0].content: at most {MAX_EPISODE_CHARS} characters" in refused
    ok, status = await _call(session, "episode_status", group_id="alpha", uuid=first["episodes"][0]["uuid"])
    assert ok and status["content"] == "Eve met Finn."


async def test_the_mcp_server_over_stdio_with_the_sdk_client(tmp_path: Path) -> None:
    with LLMThread(World()) as llm:
        env = server_env(tmp_path / "graph.db", llm.url, EPIGRAPH_API_KEYS="k-alpha=alpha;k-beta=beta",
                         EPIGRAPH_API_KEY="k-alpha")  # fmt: skip
        params = StdioServerParameters(command=sys.executable, args=["-m", "epigraph", "mcp"], env=env)
        with (tmp_path / "mcp.log").open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                started = await session.initialize()
                assert (started.server_info.name, started.server_info.version) == ("epigraph", __version__)
                await _session_checks(session)
    log = (tmp_path / "mcp.log").read_text(encoding="utf-8")
    assert "API keys on" in log and "k-alpha" not in log


async def test_a_server_started_with_a_group_does_not_ask_for_it(tmp_path: Path) -> None:
    """``epigraph --group alpha mcp`` (or ``EPIGRAPH_GROUP=alpha``): no tool requires ``group_id``; a
    call without one is on alpha, one naming another group is on that group, the key checked for both."""
    with LLMThread(World()) as llm:
        for argv, extra in [(["--group", "alpha"], {}), ([], {"EPIGRAPH_GROUP": "beta"})]:
            own = "alpha" if argv else "beta"
            env = server_env(tmp_path / f"{own}.db", llm.url, EPIGRAPH_API_KEYS="k-alpha=alpha;k-beta=beta",
                             EPIGRAPH_API_KEY="k-alpha", **extra)  # fmt: skip
            args = ["-m", "epigraph", *argv, "mcp"]
            params = StdioServerParameters(command=sys.executable, args=args, env=env)
            with (tmp_path / "mcp.log").open("a") as errlog:
                async with (
                    stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    tools = await session.list_tools()
                    for tool in tools.tools:
                        assert "group_id" not in tool.input_schema.get("required", []), tool
                        assert "group_id" in tool.input_schema["properties"], tool
                    episodes = [{"content": "Alice met Bob.", "reference_time": "2024-05-02T10:00:00Z"}]
                    ok, accepted = await _call(session, "add_episodes", episodes=episodes)
                    if own == "beta":  # the server's group, but the session's key may not use it
                        assert not ok and "403" in accepted
                        ok, accepted = await _call(
                            session, "add_episodes", group_id="alpha", episodes=episodes
                        )
                        assert ok and accepted["group_id"] == "alpha"
                        continue
                    assert ok and accepted["group_id"] == "alpha", accepted
                    uuid = accepted["episodes"][0]["uuid"]
                    assert (await _until_done(session, "alpha", uuid))["status"] == "done"
                    ok, found = await _call(session, "search", query="Alice Bob", scope="facts")
                    assert ok and found["group_ids"] == ["alpha"] and found["facts"], found
                    ok, refused = await _call(session, "search", group_id="beta", query="Alice")
                    assert not ok and "403" in refused
