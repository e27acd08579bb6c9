"""``POST .../load`` on a group-scoped key writes that group and no other, over the wire: a dump naming
another group is loaded as the key's group, a dump of two groups or a correction carrying another group's
records is refused naming the line and field, and another group's route is 403; nothing is written in
any group it refuses. The same on both stores, through the library: tests/transfer/test_load_scope.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.shared.serve_harness import LLMThread, uvicorn_thread
from epigraph.client import KnowledgeGraph
from epigraph.serve import Keys, create_app
from tests.support.served import LIMITS, auth, graph_settings

FIXTURE = Path(__file__).resolve().parents[1] / "transfer" / "fixtures" / "dump-v1.jsonl"


def dump_of(*groups: str) -> list[dict[str, Any]]:
    """The fixture's records once per group, under one header and one end line."""
    base = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    head, end, body = base[0], base[-1], base[1:-1]
    records = [json.loads(json.dumps(r).replace('"v1-fixture"', json.dumps(g))) for g in groups for r in body]
    counts = {g: end["counts"]["v1-fixture"] for g in groups}
    return [{**head, "groups": list(groups)}, *records, {**end, "counts": counts}]


def body(lines: list[dict[str, Any]]) -> bytes:
    return "\n".join(json.dumps(r) for r in lines).encode()


def test_a_group_scoped_key_loads_into_its_own_group_only(
    llm: LLMThread, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp = tmp_path_factory.mktemp("load-scope")
    keys = Keys({"key-mine": frozenset({"mine"}), "key-all": frozenset({"*"})})
    app = create_app(KnowledgeGraph(graph_settings(tmp / "graph.db", llm.url)), keys=keys, limits=LIMITS,
                     groups_file=tmp / "graph.db.groups")  # fmt: skip
    with uvicorn_thread(app) as url:
        with httpx.Client(base_url=url, headers=auth("key-mine"), timeout=30.0) as mine:
            theirs = mine.post("/v1/groups/victim/load", content=body(dump_of("victim")))
            assert theirs.status_code == 403 and "victim" not in theirs.text

            two = mine.post("/v1/groups/mine/load", content=body(dump_of("mine", "victim")))
            assert two.status_code == 422 and "2 groups" in two.json()["detail"], two.text

            smuggled = dump_of("mine")
            number = next(i for i, r in enumerate(smuggled) if r["record"] == "correction")
            smuggled[number]["after"]["facts"][0]["group_id"] = "victim"
            refused = mine.post("/v1/groups/mine/load", content=body(smuggled))
            assert refused.status_code == 422, refused.text
            assert refused.json()["field"] == "after.facts.0.group_id"
            assert refused.json()["detail"].startswith(f"body:{number + 1}: ")

            renamed = mine.post("/v1/groups/mine/load", content=body(dump_of("victim")))
            assert renamed.status_code == 201, renamed.text
            assert renamed.json()["renamed"] == {"victim": "mine"}
            assert mine.get("/v1/groups/mine/stats").json()["entities"] == 3
        with httpx.Client(base_url=url, headers=auth("key-all"), timeout=30.0) as everyone:
            victim = everyone.get("/v1/groups/victim/stats").json()
            assert (victim["episodes"], victim["entities"], victim["facts"]) == (0, 0, 0)
            corrections = everyone.get("/v1/groups/victim/corrections").json()
            assert corrections["corrections"] == [], corrections
