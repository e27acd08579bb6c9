"""Keys scoped to groups, limits with clear errors, hostile strings stored verbatim; over the wire."""

from __future__ import annotations

from pathlib import Path

import pytest

from epigraph.config import Settings, api_keys
from epigraph.errors import ConfigError
from epigraph.serve.auth import Keys, check_exposure
from tests.support.served import Served, T, add, wait_done

GROUP_ROUTES = [
    ("GET", "/episodes"), ("POST", "/episodes/retry"), ("GET", "/search?q=x"), ("GET", "/stats"),
    ("GET", "/entities/Alice"), ("GET", "/events"), ("DELETE", "/episodes/some-id"),
]  # fmt: skip


def test_no_key_or_a_wrong_key_is_401(served: Served) -> None:
    for key in (None, "not-a-key", "key-alpha2", "KEY-ALPHA"):
        with served.client(key) as c:
            for method, path in GROUP_ROUTES:
                response = c.request(method, f"/v1/groups/alpha{path}")
                assert response.status_code == 401, (key, path, response.text)
                assert "alpha" not in response.text
    with served.client(None) as c:
        other = c.get("/v1/groups/alpha/stats", headers={"X-API-Key": "key-alpha"})
        assert other.status_code == 200


def test_another_groups_data_is_403_and_reveals_nothing(served: Served) -> None:
    with served.client("key-alpha") as c:
        ids = add(c, "alpha", "Mallory watches Alice.")
        wait_done(c, "alpha", ids)
    with served.client("key-beta") as c:
        for group in ("alpha", "no-such-group"):  # an existing group and a missing one answer alike
            answers = {
                (m, p): (r.status_code, r.text)
                for m, p in [*GROUP_ROUTES, ("GET", f"/episodes/{ids[0]}")]
                for r in [c.request(m, f"/v1/groups/{group}{p}")]
            }
            assert {status for status, _ in answers.values()} == {403}
            assert all(group not in text and "Mallory" not in text for _, text in answers.values())
        post = c.post("/v1/groups/alpha/episodes", json={"content": "x", "reference_time": T})
        assert post.status_code == 403
        ask = c.post("/v1/groups/alpha/ask", json={"question": "Who watches Alice?", "streaming": True})
        assert ask.status_code == 403 and "Mallory" not in ask.text
        # its own group does not hold alpha's episode: identity is (group, id)
        assert c.get(f"/v1/groups/beta/episodes/{ids[0]}").status_code == 404


def test_limits_answer_413_and_422_naming_the_field(served: Served) -> None:
    with served.client() as c:
        big = c.post("/v1/groups/alpha/episodes/batch", content=b"x" * 30_000,
                     headers={"Content-Type": "application/json"})  # fmt: skip
        assert big.status_code == 413 and big.json()["field"] == "body"
        many = {"episodes": [{"content": f"n{i}", "reference_time": T} for i in range(6)]}
        too_many = c.post("/v1/groups/alpha/episodes/batch", json=many)
        assert too_many.status_code == 413 and too_many.json()["field"] == "episodes"
        long = {
            "episodes": [
                {"content": "ok", "reference_time": T},
                {"content": "y" * 2_001, "reference_time": T},
            ]
        }
        too_long = c.post("/v1/groups/alpha/episodes/batch", json=long)
        assert too_long.status_code == 422 and too_long.json()["field"] == "episodes[1].content"
        missing = c.post("/v1/groups/alpha/episodes", json={"content": "no time"})
        assert missing.status_code == 422 and missing.json()["field"] == "reference_time"
        bad_group = c.get("/v1/groups/bad group!/stats")
        assert bad_group.status_code == 422 and bad_group.json()["field"] == "group_id"
        limit = c.get("/v1/groups/alpha/search", params={"q": "x", "limit": 1000})
        assert limit.status_code == 422 and limit.json()["field"] == "limit"
        assert c.get("/v1/groups/alpha/episodes", params={"limit": 0}).status_code == 422
        nothing_stored = c.get("/v1/groups/alpha/episodes", params={"limit": 1000}).json()["episodes"]
        assert not any(e["content"].startswith(("n0", "y" * 10)) for e in nothing_stored)


HOSTILE = "'; DROP TABLE episodes; -- <script>alert(1)</script> {{x}} $(rm -rf /) \u202eevil\u200b \\u0000 %s"


def test_hostile_strings_are_stored_verbatim(served: Served) -> None:
    with served.client() as c:
        body = {"content": HOSTILE, "reference_time": T, "name": "<b>n</b>", "source": "' OR 1=1 --",
                "id": "../../etc/passwd?x=<y>"}  # fmt: skip
        response = c.post("/v1/groups/alpha/episodes", json=body)
        assert response.status_code == 202
        uuid = response.json()["episodes"][0]["uuid"]
        wait_done(c, "alpha", [uuid])
        stored = c.get(f"/v1/groups/alpha/episodes/{uuid}").json()
        assert (stored["content"], stored["name"], stored["source_description"]) == (
            HOSTILE,
            "<b>n</b>",
            "' OR 1=1 --",
        )
        found = c.get("/v1/groups/alpha/search", params={"q": "DROP TABLE script", "scope": "episodes"})
        assert HOSTILE in [e["episode"]["content"] for e in found.json()["episodes"]]


def test_keys_come_from_the_environment_and_a_file(tmp_path: Path) -> None:
    file = tmp_path / "keys.txt"
    file.write_text("# team keys\nk-file = alpha, beta  # two groups\n\nk-both=gamma\n", encoding="utf-8")
    settings = Settings.from_env(
        {"EPIGRAPH_API_KEYS": "k-env=*;k-both=alpha", "EPIGRAPH_API_KEYS_FILE": str(file)}
    )
    assert api_keys(settings) == {
        "k-env": frozenset({"*"}), "k-both": frozenset({"alpha", "gamma"}),
        "k-file": frozenset({"alpha", "beta"}),
    }  # fmt: skip
    assert "k-env" not in repr(settings) and "k-env" not in str(settings.model_dump())
    bad = Settings.from_env({"EPIGRAPH_API_KEYS": "secret-key-without-groups"})
    with pytest.raises(ConfigError, match="entry 1") as caught:
        api_keys(bad)
    assert "secret-key" not in str(caught.value)


def test_keys_are_off_only_on_loopback_and_the_server_says_so() -> None:
    assert "OFF" in check_exposure(Keys({}), "127.0.0.1") and "OFF" in check_exposure(Keys({}), "::1")
    for host in ("0.0.0.0", "192.168.1.2", "example.org"):
        with pytest.raises(ConfigError, match="without API keys"):
            check_exposure(Keys({}), host)
    assert check_exposure(Keys({"k": frozenset({"a"})}), "0.0.0.0") == "API keys on"
