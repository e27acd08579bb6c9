"""What schemathesis found the server doing that its OpenAPI document did not say, each over the wire."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from epigraph.search import RECIPES
from tests.support.served import Served


def test_the_document_states_the_group_pattern_and_the_recipes(served: Served) -> None:
    with served.client(key=None) as c:
        spec = c.get("/openapi.json").json()
    search = spec["paths"]["/v1/groups/{group_id}/search"]["get"]["parameters"]
    group = next(p for p in search if p["name"] == "group_id")["schema"]
    assert group["pattern"] == "^[A-Za-z0-9_.:@-]{1,128}$" and group["maxLength"] == 128
    recipe = next(p for p in search if p["name"] == "recipe")["schema"]["anyOf"][0]["enum"]
    assert "COMBINED" in recipe and "FACTS_NODE_DISTANCE" not in recipe  # the API takes no center
    assert set(recipe) < set(RECIPES)
    with served.client() as c:
        for name in recipe:  # every documented recipe is answered
            assert c.get("/v1/groups/alpha/search", params={"q": "x", "recipe": name}).status_code == 200
        lower = c.get("/v1/groups/alpha/search", params={"q": "x", "recipe": "combined"})
        assert lower.status_code == 422 and lower.json()["field"] == "recipe"


def test_a_number_is_not_a_time(served: Served) -> None:
    with served.client() as c:
        for value in (0, 1.5, "0", "20240501"):
            added = c.post("/v1/groups/alpha/episodes", json={"content": "Zed.", "reference_time": value})
            assert added.status_code == 422 and added.json()["field"] == "reference_time", (value, added.text)
        listed = c.get("/v1/groups/alpha/episodes", params={"until": "0.5"})
        assert listed.status_code == 422 and listed.json()["field"] == "until"
        asked = c.post("/v1/groups/alpha/ask", json={"question": "Who?", "as_of": 0})
        assert asked.status_code == 422 and asked.json()["field"] == "as_of"
        streaming = c.post("/v1/groups/alpha/ask", json={"question": "Who?", "streaming": 0})
        assert streaming.status_code == 422 and streaming.json()["field"] == "streaming"
        assert c.get("/v1/groups/alpha/episodes", params={"since": "2024-05-01"}).status_code == 200
        stored = c.get("/v1/groups/alpha/episodes", params={"until": "1971-01-01T00:00:00Z"}).json()
        assert stored["episodes"] == []  # nothing was stored in 1970


def test_options_names_every_method_of_the_path(served: Served) -> None:
    with served.client() as c:
        one = c.options("/v1/groups/alpha/episodes/some-id")
        assert one.status_code == 405 and one.headers["allow"] == "DELETE, GET"
        assert one.json() == {"detail": "Method Not Allowed", "field": None}
        batch = c.options("/v1/groups/alpha/episodes/batch")  # the fixed path wins over {uuid}
        assert batch.headers["allow"] == "POST"
        assert c.put("/v1/groups/alpha/stats").headers["allow"] == "GET"


def test_a_chunked_body_over_the_limit_is_413(served: Served) -> None:
    """No Content-Length: the limit is found while the body streams in (it was a 400 "There was an
    error parsing the body")."""

    def chunks() -> object:
        for _ in range(30):
            yield b"x" * 1_000

    with served.client() as c:
        big = c.post("/v1/groups/alpha/episodes/batch", content=chunks(),  # type: ignore[arg-type]
                     headers={"Content-Type": "application/json"})  # fmt: skip
    assert "content-length" not in big.request.headers
    assert big.status_code == 413 and big.json()["field"] == "body", big.text


def test_a_body_that_is_not_json_says_where_it_broke(served: Served) -> None:
    with served.client() as c:
        broken = c.post("/v1/groups/alpha/episodes", content=b'{"content": "x",\n "reference_time": }',
                        headers={"Content-Type": "application/json"})  # fmt: skip
        assert broken.status_code == 422 and broken.json()["field"] == "body"
        assert broken.json()["detail"] == "the body is not valid JSON: Expecting value at line 2, column 20"
        latin = c.post("/v1/groups/alpha/episodes", content='{"content": "café"}'.encode("latin-1"),
                       headers={"Content-Type": "application/json"})  # fmt: skip
        assert latin.status_code == 422 and latin.json()["field"] == "body"
        assert latin.json()["detail"] == "the body is not UTF-8: byte 16 (0xe9) cannot be decoded"


def test_a_request_that_is_not_http_is_a_documented_400(served: Served) -> None:
    host, port = urlsplit(served.url).hostname, urlsplit(served.url).port
    with socket.create_connection((host or "127.0.0.1", port or 80), timeout=30) as s:
        s.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        head = s.recv(4096).decode("latin-1")
    assert head.startswith("HTTP/1.1 400")
    with served.client(key=None) as c:
        spec = c.get("/openapi.json").json()
    operations = [op for path in spec["paths"].values() for op in path.values()]
    assert operations and all("400" in op["responses"] for op in operations)


def test_a_conversation_key_with_a_control_character_is_refused_as_the_schema_says(served: Served) -> None:
    """The schema states what the server takes as a conversation key (1-512 characters without control
    characters, ``graph.derived.CHAIN_KEY_RE``), and a key outside it is refused naming the key."""
    with served.client(key=None) as c:
        spec = c.get("/openapi.json").json()
    body = spec["components"]["schemas"]["ConversationsUpdateIn"]["properties"]["keys"]["anyOf"][0]["items"]
    path = spec["paths"]["/v1/groups/{group_id}/conversations/{key}"]["get"]["parameters"]
    documented = next(p for p in path if p["name"] == "key")["schema"]
    assert body["pattern"] == documented["pattern"] == "^[^\\x00-\\x1f\\x7f-\\x9f]{1,512}$"
    with served.client() as c:
        for key in ("chat\x01", "\x7f", "tab\there", "\x85"):
            refused = c.post("/v1/groups/alpha/conversations/update", json={"keys": ["chat", key]})
            assert refused.status_code == 422 and refused.json()["field"] == "keys.1", (key, refused.text)
        taken = c.post("/v1/groups/alpha/conversations/update", json={"keys": ["chat:ünïcode ☃"]})
        assert taken.status_code == 200, taken.text
