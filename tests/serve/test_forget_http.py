"""Forgetting over the wire (uvicorn, httpx): a preview then the apply of exactly it, the audit records,
the errors (403, 404, 409 for a stale plan, 422 for a bad body), the retention routes; no answer holds
the name forgotten. (A name two entities share, refused: ``tests/forget``, ``tests/cli``.)"""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.served import Served, add, wait_done


def ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_forgetting_over_http(served: Served) -> None:
    g = "forgets"
    with served.client() as c:
        ids = add(c, g, "Alice met Bob in Paris.", "Nadia called Carol.", "Bob met Nadia.")
        assert wait_done(c, g, ids) == dict.fromkeys(ids, "done")
        preview = ok(c.post(f"/v1/groups/{g}/forget", json={"subject": "Nadia"}))
        assert not preview["applied"] and preview["counts"]["entities"] == 1 and preview["record"] is None
        assert "nadia" not in str(preview).lower()
        assert c.get(f"/v1/groups/{g}/entities/Nadia").status_code == 200  # a preview changes nothing

        stale = c.post(f"/v1/groups/{g}/forget", json={"subject": "Nadia", "apply": True, "expect": "0" * 32})
        assert stale.status_code == 409 and "changed since" in stale.json()["detail"]
        done = ok(c.post(f"/v1/groups/{g}/forget",
                         json={"subject": "Nadia", "apply": True, "expect": preview["digest"]}))  # fmt: skip
        assert done["applied"] and done["ids"] == preview["ids"] and done["record"]["call"] == "http"
        assert "nadia" not in str(done).lower()
        assert c.get(f"/v1/groups/{g}/entities/Nadia").status_code == 404
        episodes = c.get(f"/v1/groups/{g}/episodes").json()["episodes"]
        assert "Bob met [forgotten]." in {e["content"] for e in episodes}
        export = c.get(f"/v1/groups/{g}/export").text
        assert "nadia" not in export.lower() and '"record": "forgetting"' in export

        records = ok(c.get(f"/v1/groups/{g}/forgotten"))["forgotten"]
        assert [r["uuid"] for r in records] == [done["record"]["uuid"]]
        assert ok(c.get(f"/v1/groups/{g}/forgotten", params={"name": "NADIA"}))["forgotten"] == records
        assert ok(c.get(f"/v1/groups/{g}/forgotten", params={"name": "Bob"}))["forgotten"] == []

        missing = c.post(f"/v1/groups/{g}/forget", json={"subject": "Nadia"})
        assert missing.status_code == 404
        bad = c.post(f"/v1/groups/{g}/forget", json={"subject": "Bob", "episodes": "shred"})
        assert bad.status_code == 422 and bad.json()["field"] == "episodes"
        unknown = c.post(f"/v1/groups/{g}/forget", json={"subject": "Bob", "nickname": "B"})
        assert unknown.status_code == 422
    with served.client("key-beta") as beta:
        assert beta.post(f"/v1/groups/{g}/forget", json={"subject": "Bob"}).status_code == 403
        assert beta.get(f"/v1/groups/{g}/forgotten").status_code == 403


def test_retention_over_http(served: Served) -> None:
    g = "keeps"
    with served.client() as c:
        assert ok(c.get(f"/v1/groups/{g}/retention"))["retention"] is None
        refused = c.post(f"/v1/groups/{g}/retention/apply", json={})
        assert refused.status_code == 404 and "no retention policy" in refused.json()["detail"]
        assert c.put(f"/v1/groups/{g}/retention", json={"days": 0}).status_code == 422
        ids = add(c, g, "Alice met Bob in Paris.")  # said in 2024: older than 30 days
        assert wait_done(c, g, ids) == dict.fromkeys(ids, "done")
        policy = ok(c.put(f"/v1/groups/{g}/retention", json={"days": 30}))["retention"]
        assert policy["days"] == 30 and ok(c.get(f"/v1/groups/{g}/retention"))["retention"] == policy
        preview = ok(c.post(f"/v1/groups/{g}/retention/apply", json={}))
        assert not preview["applied"] and preview["ids"]["episodes_deleted"] == ids
        done = ok(
            c.post(f"/v1/groups/{g}/retention/apply", json={"apply": True, "expect": preview["digest"]})
        )
        assert done["applied"] and done["record"]["call"] == "http" and done["record"]["older_than"]
        assert c.get(f"/v1/groups/{g}/episodes").json()["episodes"] == []
        assert ok(c.delete(f"/v1/groups/{g}/retention"))["cleared"] is True
        assert ok(c.get(f"/v1/groups/{g}/retention"))["retention"] is None
