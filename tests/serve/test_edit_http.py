"""Corrections by hand, export and load over the wire (uvicorn, httpx): each route, its errors (401/403,
404, 409, 422 naming the field or the dump's line) and a dump taken while episodes are being ingested."""

from __future__ import annotations

import itertools
import json
import threading
from typing import Any

import httpx

from epigraph.transfer import read
from epigraph.transfer.moves import regroup
from tests.support.json_lines import error_column
from tests.support.served import Served, add, wait_done


def correction(response: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    return body


def entity(c: httpx.Client, group: str, name: str) -> dict[str, Any]:
    response = c.get(f"/v1/groups/{group}/entities/{name}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def fact_uuid(c: httpx.Client, group: str, name: str, text: str) -> str:
    view = entity(c, group, name)
    [found] = [f["uuid"] for f in view["current"] if f["text"] == text]
    return str(found)


def test_corrections_over_http(served: Served) -> None:
    g = "edits"
    with served.client() as c:
        ids = add(c, g, "Alice met Bob in Paris.", "Robert called Carol.")
        assert wait_done(c, g, ids) == dict.fromkeys(ids, "done")
        body = {
            "source": "Bob",
            "relation": "lives in",
            "target": "Paris",
            "author": "alice",
            "reason": "told",
        }
        added = correction(c.post(f"/v1/groups/{g}/facts", json=body), 201)
        assert added["operation"] == "add_fact" and added["author"] == "person:alice"
        assert added["after"]["facts"][0]["text"] == "Bob lives in Paris"
        assert added["description"] == "added 'Bob lives in Paris'"
        assert (
            "text_embedding" not in json.dumps(added) or added["after"]["facts"][0]["text_embedding"] is None
        )

        missing = c.post(f"/v1/groups/{g}/facts", json={k: v for k, v in body.items() if k != "author"})
        assert missing.status_code == 422 and missing.json()["field"] == "author"
        unknown = c.post(f"/v1/groups/{g}/facts", json={**body, "source": "Dave"})
        assert unknown.status_code == 404 and "no entity 'Dave'" in unknown.json()["detail"]
        bad_date = c.post(
            f"/v1/groups/{g}/facts", json={**body, "valid_at": "2024-05-02", "invalid_at": "2024-01-01"}
        )
        assert bad_date.status_code == 422 and "before valid_at" in bad_date.json()["detail"]

        merged = correction(c.post(f"/v1/groups/{g}/entities/merge",
                                   json={"keep": "Bob", "merge": "Robert", "author": "alice"}))  # fmt: skip
        assert merged["description"] == "merged 'Robert' into 'Bob' (1 fact(s) moved)"
        bob = entity(c, g, "Robert")  # an alias of Bob now
        assert bob["entity"]["name"] == "Bob" and [h["uuid"] for h in bob["corrections"]] == [
            merged["uuid"], added["uuid"],
        ]  # fmt: skip
        listed = c.get(f"/v1/groups/{g}/corrections", params={"entity": "Bob"}).json()["corrections"]
        assert [h["operation"] for h in listed] == ["merge_entities", "add_fact"]
        full = correction(c.get(f"/v1/groups/{g}/corrections/{merged['uuid']}"))
        assert {e["name"] for e in full["before"]["entities"]} == {"Bob", "Robert"}

        knows = fact_uuid(c, g, "Carol", "Robert knows Carol.")
        edited = correction(c.patch(f"/v1/groups/{g}/facts/{knows}",
                                    json={"text": "Bob knows Carol.", "author": "bob"}))  # fmt: skip
        assert edited["after"]["facts"][0]["text"] == "Bob knows Carol."
        refused = c.post(f"/v1/groups/{g}/entities/unmerge", json={"entity": "Bob", "author": "alice"})
        assert refused.status_code == 409 and f"fact '{knows}' changed since" in refused.json()["detail"]
        correction(
            c.post(f"/v1/groups/{g}/corrections/undo", json={"correction": edited["uuid"], "author": "bob"})
        )
        undone = correction(
            c.post(f"/v1/groups/{g}/entities/unmerge", json={"entity": "Bob", "author": "alice"})
        )
        assert undone["undoes"] == merged["uuid"]
        assert entity(c, g, "Robert")["entity"]["name"] == "Robert"

        retired = correction(c.post(f"/v1/groups/{g}/facts/{knows}/retire",
                                    json={"author": "alice", "at": "2030-01-01T00:00:00Z"}))  # fmt: skip
        assert retired["after"]["facts"][0]["invalid_at"] == "2030-01-01T00:00:00Z"
        deleted = c.delete(f"/v1/groups/{g}/facts/{knows}", params={"author": "alice", "reason": "wrong"})
        assert correction(deleted)["operation"] == "delete_fact"
        assert c.delete(f"/v1/groups/{g}/facts/{knows}", params={"author": "alice"}).status_code == 404
        renamed = c.post(
            f"/v1/groups/{g}/entities/rename", json={"entity": "Carol", "name": "Caro", "author": "x"}
        )
        assert correction(renamed)["description"] == "renamed 'Carol' to 'Caro'"
        assert c.get(f"/v1/groups/{g}/corrections/no-such").status_code == 404

    with served.client("key-alpha") as c:  # keys still scope groups
        refused = c.post(f"/v1/groups/{g}/facts", json=body)
        assert refused.status_code == 403
        assert c.get(f"/v1/groups/{g}/export").status_code == 403
        assert c.delete(f"/v1/groups/{g}", params={"confirm": "yes"}).status_code == 403
    with served.client(None) as c:
        assert c.get(f"/v1/groups/{g}/corrections").status_code == 401


def test_export_load_and_delete_a_group_over_http(served: Served) -> None:
    g, copy = "moving", "moved"
    with served.client() as c:
        ids = add(c, g, "Alice met Bob in Paris.", "Carol called Dave.")
        wait_done(c, g, ids)
        correction(
            c.post(f"/v1/groups/{g}/entities/rename", json={"entity": "Dave", "name": "David", "author": "a"})
        )
        response = c.get(f"/v1/groups/{g}/export")
        assert response.status_code == 200 and response.headers["content-type"].startswith(
            "application/x-ndjson"
        )
        dump = response.text
        records = [json.loads(line) for line in dump.splitlines()]
        assert records[0]["groups"] == [g] and records[-1]["counts"][g]["correction"] == 1

        loaded = c.post(f"/v1/groups/{copy}/load", content=dump.encode(),
                        headers={"content-type": "application/x-ndjson"})  # fmt: skip
        assert loaded.status_code == 201, loaded.text
        assert loaded.json()["groups"] == {copy: records[-1]["counts"][g]} and loaded.json()["renamed"] == {
            g: copy
        }
        again = read(c.get(f"/v1/groups/{copy}/export").text.splitlines(), "export")
        assert again.groups[copy] == regroup(read(dump.splitlines(), "export").groups[g], copy)
        assert entity(c, copy, "David")["corrections"][0]["description"] == "renamed 'Dave' to 'David'"
        twice = c.post(f"/v1/groups/{copy}/load", content=dump.encode())
        assert twice.status_code == 409 and "already hold data" in twice.json()["detail"]
        assert "--into" not in twice.json()["detail"], "no flag of another door"
        nowhere = c.get("/v1/groups/nowhere/export")
        assert nowhere.status_code == 404 and "no group 'nowhere'" in nowhere.json()["detail"]

        cut = dump.splitlines()
        cut[2] = cut[2][:60]  # a line cut short: the same column as `epigraph load` says
        truncated = c.post("/v1/groups/fresh/load", content="\n".join(cut).encode())
        assert truncated.status_code == 422
        assert truncated.json()["detail"].startswith("body:3: not JSON: ")
        detail = truncated.json()["detail"]
        assert f"(column {error_column(cut[2])}) (the line ends before its object does" in detail

        lines = dump.splitlines()
        lines[2] = lines[2].replace('"reference_time": "', '"reference_time": "x')
        broken = c.post("/v1/groups/fresh/load", content="\n".join(lines).encode())
        assert broken.status_code == 422, broken.text
        assert broken.json()["detail"].startswith("body:3: ") and broken.json()["field"] == "reference_time"
        lines = dump.splitlines()
        at = next(i for i, line in enumerate(lines) if json.loads(line)["record"] == "fact")
        lines[at] = json.dumps({**json.loads(lines[at]), "valid_at": 1.7e9})  # seconds since 1970?
        numbered = c.post("/v1/groups/fresh/load", content="\n".join(lines).encode())
        assert numbered.status_code == 422, numbered.text
        assert (
            numbered.json()["detail"].startswith(f"body:{at + 1}: ")
            and numbered.json()["field"] == "valid_at"
        )
        assert c.get("/v1/groups/fresh/stats").json()["entities"] == 0

        refused = c.delete(f"/v1/groups/{copy}")
        assert refused.status_code == 422 and refused.json()["field"] == "confirm"
        gone = c.delete(f"/v1/groups/{copy}", params={"confirm": "yes"})
        assert gone.status_code == 200 and gone.json()["deleted"]["episodes"] == 2
        assert c.get(f"/v1/groups/{copy}/stats").json()["episodes"] == 0


def test_a_dump_taken_while_episodes_are_ingested_is_whole(served: Served) -> None:
    """Exports during ingestion: every dump reads as a whole graph (facts join entities of the dump, each
    fact's episodes are in it and done, the end line's counts match), never an episode halfway."""
    g = "busy"
    names = [f"Per{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(25)]  # Peraa, Perab, ...
    turns = [f"{a} met {b} in Lisbon." for a, b in itertools.pairwise(names)]
    dumps: list[str] = []
    with served.client() as c:
        ids = add(c, g, *turns[:4])
        wait_done(c, g, ids)

        def ingest() -> None:
            with served.client() as other:  # batches of at most 5 (the test server's limit)
                added = [u for i in range(4, len(turns), 5) for u in add(other, g, *turns[i : i + 5])]
                wait_done(other, g, added)

        ingesting = threading.Thread(target=ingest, daemon=True)
        ingesting.start()
        while ingesting.is_alive() or len(dumps) < 3:
            dumps.append(c.get(f"/v1/groups/{g}/export").text)
        ingesting.join(60)
        dumps.append(c.get(f"/v1/groups/{g}/export").text)  # the loop's last dump may precede the end
    sizes = []
    for text in dumps:
        dump = read(text.splitlines(), "export")
        group = dump.groups[g]
        done = {e.uuid for e in group.episodes if e.status.value == "done"}
        assert all(set(f.episodes) <= done for f in group.facts), "a fact cites an episode not yet done"
        sizes.append(len(group.facts))
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1] == 24
