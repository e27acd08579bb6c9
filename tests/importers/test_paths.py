"""The field-path engine: parse, resolve, join. Tested exhaustively: properties, hostile data."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from epigraph.errors import InputError
from epigraph.importers import paths as P


def vals(path: str, data: Any, root: Any = None) -> list[Any]:
    scope = P.Scope.of(data) if root is None else P.Scope(root, data, {})
    return P.values(P.parse(path), scope)


RECORD = {
    "field": "v",
    "parent": {"child": 1, "deep": {"x": [10, 20, 30]}},
    "items": [{"t": "a"}, {"t": "b"}, {"u": "c"}],
    "dialogues": [
        {"turns": [{"text": "d0t0"}, {"text": "d0t1"}]},
        {"turns": [{"text": "d1t0"}]},
        {"turns": []},
    ],
    "stem": "Q?",
    "options": ["A", "B"],
    "session_1": ["s1"],
    "session_2": ["s2a", "s2b"],
    "session_1_date_time": "t1",
    "session_2_date_time": "t2",
    "events_session_1": "no",
}


# ------------------------------------------------------------------------------------------ resolution


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("field", ["v"]),
        ("parent.child", [1]),
        ("parent.deep.x[1]", [20]),
        ("parent.deep.x[-1]", [30]),
        ("parent.deep.x[-3]", [10]),
        ("parent.deep.x[3]", []),
        ("parent.deep.x[-4]", []),
        ("items[0]", [{"t": "a"}]),
        ("items[*].t", ["a", "b"]),
        ("items[*]", RECORD["items"]),
        ("dialogues[*].turns[0].text", ["d0t0", "d1t0"]),
        ("dialogues[*].turns[*].text", ["d0t0", "d0t1", "d1t0"]),
        ("parent.*", [1, {"x": [10, 20, 30]}]),
        ("session_*[*]", ["s1", "s2a", "s2b"]),
        ("session_{n}[0]", ["s1", "s2a"]),
        ("missing", []),
        ("field.sub", []),
        ("field[0]", []),
        ("parent[*]", []),
        ("items.t", []),
        ("@", [RECORD]),
        ("$", [RECORD]),
        ("$.field", ["v"]),
        ("@.field", ["v"]),
    ],
)
def test_resolve(path: str, expected: list[Any]) -> None:
    assert vals(path, RECORD) == expected


def test_capture_binds_and_reuses_variables() -> None:
    matches = P.resolve(P.parse("session_{n}[*]"), P.Scope.of(RECORD))
    assert [(m.value, dict(m.bindings)) for m in matches] == [
        ("s1", {"n": "1"}),
        ("s2a", {"n": "2"}),
        ("s2b", {"n": "2"}),
    ]
    date = P.parse("$.session_{n}_date_time")
    assert [P.values(date, P.Scope(RECORD, m.value, m.bindings)) for m in matches] == [["t1"], ["t2"], ["t2"]]


def test_capture_is_letters_and_digits_only() -> None:
    # session_{n} must not swallow session_1_date_time (n would have to contain "_")
    assert vals("session_{n}", RECORD) == [["s1"], ["s2a", "s2b"]]
    assert vals("{a}_{b}", {"x_y": 1, "x_y_z": 2, "_y": 3}) == [1]


def test_partially_bound_pattern() -> None:
    data = {"a_1_x": 1, "a_1_y": 2, "a_2_x": 3}
    matches = P.resolve(P.parse("a_{n}_{m}"), P.Scope(data, data, {"n": "1"}))
    assert [(m.value, m.bindings["m"]) for m in matches] == [(1, "x"), (2, "y")]


def test_root_versus_current() -> None:
    root = {"name": "root", "child": {"name": "child"}}
    assert vals("name", root["child"], root=root) == ["child"]
    assert vals("$.name", root["child"], root=root) == ["root"]
    assert vals("$", root["child"], root=root) == [root]


def test_non_string_leaves_and_joining() -> None:
    data = {"a": [1, 2.5, True, None, "x", {"o": 1}, [3, ["y"]], ""], "z": False}
    assert P.join_text(vals("a", data)) == "1\n2.5\ntrue\nx\n3\ny"
    assert P.join_text(vals("z", data)) == "false"
    assert P.join_text(vals("a[5]", data)) == ""
    assert P.join_text(["a", "b"], " | ") == "a | b"


# -------------------------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("path", "segments"),
    [
        ("a", [P.Key("a")]),
        ("a.b", [P.Key("a"), P.Key("b")]),
        ("a[0]", [P.Key("a"), P.Index(0)]),
        ("a[-2]", [P.Key("a"), P.Index(-2)]),
        ("a[*].b", [P.Key("a"), P.Each(), P.Key("b")]),
        ("[0]", [P.Index(0)]),
        ("[*][*]", [P.Each(), P.Each()]),
        (r"a\.b", [P.Key("a.b")]),
        (r"a\[0\]", [P.Key("a[0]")]),
        (r"x\\y", [P.Key("x\\y")]),
        (r"\$x", [P.Key("$x")]),
        (r"\@", [P.Key("@")]),
        ("a.$b", [P.Key("a"), P.Key("$b")]),
        ("first name", [P.Key("first name")]),
        (" padded ", [P.Key(" padded ")]),
        ("名前.ключ.🙂", [P.Key("名前"), P.Key("ключ"), P.Key("🙂")]),
        (r"\{x\}", [P.Key("{x}")]),
        (r"a\*", [P.Key("a*")]),
    ],
)
def test_parse(path: str, segments: list[P.Segment]) -> None:
    parsed = P.parse(path)
    assert list(parsed.segments) == segments
    assert P.parse(P.format_path(parsed.segments)).segments == parsed.segments


@pytest.mark.parametrize(
    ("path", "position"),
    [
        ("", 0),
        (".a", 0),
        ("a.", 2),
        ("a..b", 2),
        ("a[", 1),
        ("a[x]", 2),
        ("a[1.5]", 2),
        ("a[]", 2),
        ("a[0]b", 4),
        ("a]", 1),
        ("a}", 1),
        ("a\\", 1),
        ("{", 0),
        ("{1x}", 0),
        ("{n}{n}", 0),
        ("$a", 1),
        ("$.", 2),
        ("@x", 1),
    ],
)
def test_parse_errors_say_where(path: str, position: int) -> None:
    with pytest.raises(P.PathSyntaxError) as info:
        P.parse(path)
    assert info.value.position == position
    assert isinstance(info.value, InputError)
    assert repr(path) in str(info.value)


def test_escape_key_round_trip_examples() -> None:
    for key in ["a.b", "[0]", "x\\y", "$", "@home", "{n}", "*", "plain", "ü.ñ", "a b"]:
        path = P.parse(P.escape_key(key))
        assert path.segments == (P.Key(key),)
        assert vals(P.escape_key(key), {key: 1}) == [1]


# ------------------------------------------------------------------------------------------ properties

keys = st.text(min_size=1, max_size=12)
json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
json_values = st.recursive(
    json_leaf,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@given(st.lists(keys, min_size=1, max_size=8), json_leaf)
def test_any_key_chain_round_trips(chain: list[str], leaf: Any) -> None:
    data: Any = leaf
    for key in reversed(chain):
        data = {key: data}
    path = ".".join(P.escape_key(k) for k in chain)
    parsed = P.parse(path)
    assert parsed.segments == tuple(P.Key(k) for k in chain)
    assert P.values(parsed, P.Scope.of(data)) == [leaf]
    assert P.format_path(parsed.segments) == path


@given(st.text(max_size=30))
def test_parse_only_raises_path_syntax_error(text: str) -> None:
    try:
        P.parse(text)
    except P.PathSyntaxError:
        pass


@settings(max_examples=200)
@given(st.text(alphabet="ab.[]*{}\\$@0-1 n", max_size=16), json_values)
def test_resolve_never_raises_on_any_data(text: str, data: Any) -> None:
    try:
        path = P.parse(text)
    except P.PathSyntaxError:
        return
    found = P.resolve(path, P.Scope.of(data))
    assert isinstance(found, list)
    P.join_text(m.value for m in found)


@given(st.lists(json_values, max_size=10))
def test_each_returns_elements_in_order(items: list[Any]) -> None:
    assert vals("[*]", items) == items
    assert vals("x[*]", {"x": items}) == items


@given(st.dictionaries(st.text(min_size=1, max_size=8), json_leaf, max_size=8))
def test_star_returns_object_values_in_order(obj: dict[str, Any]) -> None:
    assert vals("*", obj) == list(obj.values())


@given(json_values)
def test_join_equals_json_text_of_scalar_leaves(data: Any) -> None:
    def expected(v: Any) -> list[str]:
        if isinstance(v, list):
            return [t for x in v for t in expected(x)]
        if isinstance(v, str):
            return [v] if v else []
        if isinstance(v, bool | int | float):
            return [json.dumps(v)]
        return []

    assert P.join_text([data]) == "\n".join(expected(data))


# ----------------------------------------------------------------------------------------- hostile data


def test_deep_nesting_without_recursion_limits() -> None:
    depth = 20_000
    data: Any = "bottom"
    for _ in range(depth):
        data = {"k": data}
    assert vals(".".join(["k"] * depth), data) == ["bottom"]
    assert vals(".".join(["*"] * depth), data) == ["bottom"]
    nested: Any = ["x"]
    for _ in range(depth):
        nested = [nested]
    assert P.join_text([nested]) == "x"


def test_huge_arrays() -> None:
    data = {"rows": [{"t": str(i)} for i in range(200_000)]}
    found = vals("rows[*].t", data)
    assert len(found) == 200_000 and found[-1] == "199999"
    assert vals("rows[-1].t", data) == ["199999"]
    assert vals("rows[199999].t", data) == ["199999"]


def test_non_string_keys_are_ignored_by_patterns() -> None:
    assert vals("*", {1: "a", "b": "c"}) == ["a", "c"]
    assert vals("b*", {1: "a", "b": "c"}) == ["c"]


def test_longest_resolving_prefix_for_hints() -> None:
    assert P.longest_resolving_prefix(P.parse("items.t"), [P.Scope.of(RECORD)]) == (
        1,
        "items",
        RECORD["items"],
    )
    assert P.longest_resolving_prefix(P.parse("nope.x"), [P.Scope.of(RECORD)]) == (0, "@", RECORD)
    assert P.describe({"a": 1}) == "an object (keys: a)"
    assert P.describe([1, 2]) == "an array of 2"
    assert P.describe(None) == "null"


PATTERNS = ["session_{n}", "a.session_{n}_date_time", "x*y", "*", r"a\.b*", "$.k_{x}[*].v"]


@pytest.mark.parametrize("path", PATTERNS)
def test_patterns_format_back_to_equivalent_paths(path: str) -> None:
    parsed = P.parse(path)
    again = P.parse(P.format_path(parsed.segments, parsed.from_root))
    assert again.segments == parsed.segments and again.from_root == parsed.from_root
