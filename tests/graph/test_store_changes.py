"""What changed in a window (``kg.changes``, ``ChangeReads.changes``, ``graph.changes``) on every store.

The bar: a scripted conversation run through the real pipeline (moves that retire where Ann lived, a
stated end, a second name for her, Cy's home), corrections by hand (a retirement, an edit, an added fact,
a merge) and a forgetting (Cy, by ``kg.forget``), with the system clock held apart from the
conversation's own dates (said in 2024, learned in 2025), and a table of windows: for each, exactly the
facts that started, ended, were learned, retired, corrected, merged or forgotten in it. A forgotten
fact is only its id and its forgetting: no window shows its text or what it said any more, and every
door (Python, the CLI, HTTP, MCP, the notebook's table) lists it alike. Then the read's own contract:
the limit, unbounded sides, an empty window.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from epigraph import KnowledgeGraph
from epigraph.errors import InputError
from epigraph.graph.changes import ChangeKind, Window
from epigraph.graph.store import GraphStore
from epigraph.graph.store_roles import ChangeReads
from epigraph.pipeline.options import IngestOptions
from epigraph.present.changes import ChangeList
from epigraph.testing import HashEmbedder
from tests.support.doors import cli_json, http_json, mcp_json
from tests.support.stores import DIM
from tests.support.world import F, Turn, World


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


class Clock:
    """The system clock of the run: set before each step, so "learned" and "retired" times are known."""

    def __init__(self) -> None:
        self.now = at("2025-01-01")

    def __call__(self) -> datetime:
        return self.now


FORGOT = at("2025-03-05")
"""When Cy is forgotten (the system clock)."""

OSLO = F("Ann", "Oslo", "LIVES_IN", "Ann lives in Oslo.")
ACME = F("Ann", "Acme", "WORKS_AT", "Ann works at Acme.")
BERLIN = F("Ann", "Berlin", "LIVES_IN", "Ann lives in Berlin.")
ROME = F("Ann", "Rome", "STUDIED_IN", "Ann studied in Rome.", invalid_at="2020-06-01")
PARIS = F("Ann", "Paris", "LIVES_IN", "Ann lives in Paris.")
CHESS = F("Anne", "chess", "PLAYS", "Anne plays chess.")
LIMA = F("Cy", "Lima", "LIVES_IN", "Cy lives in Lima.")

# (said at, learned at, message, its facts): what the conversation says and when the graph heard it
CONVERSATION = [
    ("2024-01-10", "2025-01-01", "Ann: I live in Oslo.", [OSLO]),
    ("2024-02-05", "2025-01-02", "Ann: I work at Acme.", [ACME]),
    ("2024-03-15", "2025-01-03", "Ann: I moved to Berlin.", [BERLIN]),
    ("2024-04-20", "2025-01-04", "Ann: I studied in Rome until June 2020.", [ROME]),
    ("2024-05-10", "2025-01-05", "Ann: I moved to Paris.", [PARIS]),
    ("2024-05-20", "2025-01-06", "Bo: Anne plays chess.", [CHESS]),
    ("2024-05-25", "2025-01-07", "Cy: I live in Lima.", [LIMA]),
]


def _turn(message: str, facts: list[F]) -> Turn:
    """The speaker and the facts' ends as the turn's entities, each once."""
    names = [message.split(":")[0], *(n for f in facts for n in (f.source, f.target))]
    return Turn(list(dict.fromkeys(names)), facts)


WORLD = World(
    turns={message: _turn(message, facts) for _, _, message, facts in CONVERSATION},
    contradicts={BERLIN.fact: [OSLO.fact], PARIS.fact: [BERLIN.fact]},
)  # fmt: skip
PARIS_EDITED = "Ann lives in Paris, France."
JAZZ = "Ann likes jazz."


@dataclass
class Scripted:
    kg: KnowledgeGraph
    names: dict[str, str]
    """fact uuid -> a short name (oslo, acme, ...)"""

    async def changed(self, window: Window, kinds: tuple[ChangeKind, ...]) -> dict[str, set[str]]:
        listing = await self.kg.changes(window.since, window.until)
        found: dict[str, set[str]] = {kind.value: set() for kind in kinds}
        for change in listing.changes:
            if change.kind in kinds:
                uuid = change.fact.uuid if change.fact is not None else change.forgotten
                assert uuid is not None
                found[change.kind.value].add(self.names[uuid])
        return found


async def scripted(store: GraphStore, group: str) -> Scripted:
    clock = Clock()
    kg = KnowledgeGraph(store=store, llm=WORLD.llm(), embedder=HashEmbedder(dim=DIM),
                        options=IngestOptions(clock=clock), group_id=group)  # fmt: skip
    await kg.open()
    for said, learned, message, _ in CONVERSATION:
        clock.now = at(learned)
        result = await kg.add_episode(message, reference_time=at(said))
        assert result.ok, result.error
    everything = await kg.search("Ann", include_retired=True, limit=50)
    by_text = {f.fact.text: f.fact.uuid for f in everything.facts}
    names = {by_text[f.fact]: f.target.lower() for _, _, _, facts in CONVERSATION for f in facts}
    clock.now = at("2025-02-01")
    await kg.corrections.retire_fact(names_of(names)["acme"], at="2024-06-30", author="alice")
    clock.now = at("2025-02-02")
    await kg.corrections.edit_fact(names_of(names)["paris"], text=PARIS_EDITED, author="alice")
    clock.now = at("2025-02-03")
    added = await kg.corrections.add_fact("Ann", "likes", "jazz", text=JAZZ, valid_at="2024-05-01",
                                          create=True, author="alice")  # fmt: skip
    names[next(f.uuid for f in added.after.facts if f.text == JAZZ)] = "jazz"
    clock.now = at("2025-02-04")
    await kg.corrections.merge_entities("Ann", "Anne", author="alice")
    clock.now = FORGOT
    forgot = await kg.forget("Cy", apply=True)
    assert forgot.applied and forgot.counts["facts"] == 1
    clock.now = at("2025-04-01")
    return Scripted(kg, names)


def names_of(names: dict[str, str]) -> dict[str, str]:
    return {short: uuid for uuid, short in names.items()}


NONE: set[str] = set()
# window -> (started, ended, learned, retired, corrected, merged, forgotten): exactly these facts (Cy's
# home, forgotten, is in no window on any other kind: it is gone, and so is what it said)
TABLE: list[tuple[str, Window, tuple[set[str], ...]]] = [
    ("event Q1 2024", Window(at("2024-01-01"), at("2024-04-01")),
     ({"oslo", "acme", "berlin"}, {"oslo"}, NONE, NONE, NONE, NONE, NONE)),
    ("event Q2 2024", Window(at("2024-04-01"), at("2024-07-01")),
     ({"paris", "jazz", "chess"}, {"berlin", "acme"}, NONE, NONE, NONE, NONE, NONE)),
    ("half-open: until the move excludes it", Window(at("2024-01-10"), at("2024-03-15")),
     ({"oslo", "acme"}, NONE, NONE, NONE, NONE, NONE, NONE)),
    ("half-open: since the move includes it", Window(at("2024-03-15"), at("2024-03-16")),
     ({"berlin"}, {"oslo"}, NONE, NONE, NONE, NONE, NONE)),
    ("a stated end long before it was said", Window(at("2020-01-01"), at("2021-01-01")),
     (NONE, {"rome"}, NONE, NONE, NONE, NONE, NONE)),
    ("system January 2025: the conversation heard", Window(at("2025-01-01"), at("2025-02-01")),
     (NONE, NONE, {"oslo", "acme", "berlin", "rome", "paris", "chess"}, {"oslo", "berlin"}, NONE, NONE,
      NONE)),
    ("system February 2025: the corrections", Window(at("2025-02-01"), at("2025-03-01")),
     (NONE, NONE, {"jazz"}, {"acme"}, {"acme", "paris", "jazz"}, {"chess"}, NONE)),
    ("the merge's instant alone", Window(at("2025-02-04"), at("2025-02-05")),
     (NONE, NONE, NONE, NONE, NONE, {"chess"}, NONE)),
    ("everything (no bounds)", Window(),
     ({"oslo", "acme", "berlin", "paris", "jazz", "chess"}, {"rome", "oslo", "berlin", "acme"},
      {"oslo", "acme", "berlin", "rome", "paris", "chess", "jazz"}, {"oslo", "berlin", "acme"},
      {"acme", "paris", "jazz"}, {"chess"}, {"lima"})),
    ("system March 2025: the forgetting", Window(at("2025-03-01"), at("2025-04-01")),
     (NONE, NONE, NONE, NONE, NONE, NONE, {"lima"})),
    ("half-open: until the forgetting excludes it", Window(at("2025-02-05"), FORGOT),
     (NONE, NONE, NONE, NONE, NONE, NONE, NONE)),
    ("half-open: since the forgetting includes it", Window(FORGOT, at("2025-03-06")),
     (NONE, NONE, NONE, NONE, NONE, NONE, {"lima"})),
]  # fmt: skip
KINDS = (ChangeKind.STARTED, ChangeKind.ENDED, ChangeKind.LEARNED, ChangeKind.RETIRED,
         ChangeKind.CORRECTED, ChangeKind.MERGED, ChangeKind.FORGOTTEN)  # fmt: skip


async def test_the_scripted_conversation_changes_exactly_as_expected_in_every_window(
    store: GraphStore, group: str
) -> None:
    run = await scripted(store, group)
    wrong = {}
    for title, window, expected in TABLE:
        found = await run.changed(window, KINDS)
        want = {kind.value: names for kind, names in zip(KINDS, expected, strict=True)}
        if found != want:
            wrong[title] = {k: (found[k], want[k]) for k in want if found[k] != want[k]}
    assert wrong == {}, "(found, expected) per window and kind"


async def test_changes_carry_both_axes_their_sources_and_are_grouped_by_entity(
    store: GraphStore, group: str
) -> None:
    run = await scripted(store, group)
    listing = await run.kg.changes("2025-01-03", "2025-01-04")
    retired = [c for c in listing.changes if c.kind == ChangeKind.RETIRED]
    assert [run.names[c.fact.uuid] for c in retired if c.fact] == ["oslo"]
    oslo = retired[0]
    assert oslo.axis == "system" and oslo.at == at("2025-01-03")
    assert oslo.fact is not None and oslo.fact.invalid_at == at("2024-03-15")  # the event axis beside it
    assert oslo.retired_by is not None
    assert listing.episodes[oslo.retired_by.episode_uuid].reference_time == at("2024-03-15")
    assert {listing.episodes[e].reference_time for e in oslo.episodes} == {at("2024-01-10")}
    record = listing.to_dict()
    groups = {group["name"]: group for group in record["entities"]}
    assert set(groups) == {"Ann", "Oslo", "Berlin"}  # the retired fact under both its ends
    ann = next(c for c in groups["Ann"]["changes"] if c["kind"] == "retired")
    assert ann["retired_by"]["episode"]["reference_time"] == "2024-03-15T00:00:00+00:00"
    assert ann["retired_by"]["by_hand"] is False
    # a system-time window: Berlin learned, Oslo retired; what they started and ended was in 2024
    assert record["counts"] == {"started": 0, "ended": 0, "learned": 1, "retired": 1, "corrected": 0,
                                "merged": 0, "forgotten": 0}  # fmt: skip
    html = listing._repr_html_()  # a notebook cell: a table per entity, the retired row muted
    assert html.count("<table") == 3 and '<tr class="retired">' in html and "retired (system)" in html
    frame = listing.to_pandas()  # one row per change and entity
    assert len(frame) == 4 and set(frame["kind"]) == {"learned", "retired"}  # 2 changes x 2 ends
    merged = await run.kg.changes("2025-02-04", "2025-02-05")
    names = {group["name"] for group in merged.to_dict()["entities"]}
    assert names == {"Ann", "Anne", "chess"}  # the merged-away name from its correction


async def test_a_forgotten_fact_is_its_id_and_its_forgetting_never_its_text(
    store: GraphStore, group: str
) -> None:
    run = await scripted(store, group)
    (record,) = await run.kg.forget.history()
    lima = names_of(run.names)["lima"]
    listing = await run.kg.changes("2025-03-01", "2025-04-01")
    (change,) = listing.changes
    assert (change.kind, change.axis, change.at) == (ChangeKind.FORGOTTEN, "system", FORGOT)
    assert change.fact is None
    assert change.forgotten == lima and change.forgetting == record and change.entities == (record.uuid,)
    data = listing.to_dict()
    (entity,) = data["entities"]
    assert entity == {"uuid": record.uuid, "name": "[forgotten]", "changes": [listing.record(change)]}
    assert entity["changes"][0]["forgotten"] == {"fact_uuid": lima, "forgetting": {
        "uuid": record.uuid, "at": "2025-03-05T00:00:00+00:00", "call": "python", "episodes": "redact",
        "older_than": None, "entities": record.ids["entities"]}}  # fmt: skip
    assert data["counts"]["forgotten"] == 1 and entity["changes"][0]["fact"] is None
    html = listing._repr_html_()  # the notebook's table: under the forgetting, muted, by its id
    assert html.count("<table") == 1 and "forgotten (system)" in html and lima in html
    assert '<tr class="retired">' in html and record.uuid in html
    frame = listing.to_pandas()
    assert list(frame["fact_uuid"]) == [lima] and list(frame["forgetting"]) == [record.uuid]
    everything = (await run.kg.changes()).to_json()
    assert LIMA.fact not in everything and '"Cy"' not in everything  # nothing it said is left to show
    assert (await run.kg.changes(kinds="forgotten")).counts() == {"forgotten": 1}
    assert (await run.kg.changes(kinds=["merged"])).counts() == {"merged": 1}


async def test_kinds_limit_and_bad_windows(store: GraphStore, group: str) -> None:
    run = await scripted(store, group)
    only = await run.kg.changes(kinds="retired")
    assert {c.kind for c in only.changes} == {ChangeKind.RETIRED} and only.kinds == (ChangeKind.RETIRED,)
    cut = await run.kg.changes(limit=2)
    assert cut.truncated and not (await run.kg.changes()).truncated
    assert len({c.fact.uuid for c in cut.changes if c.fact and c.correction is None}) <= 2
    with pytest.raises(InputError, match=r"since .* must be before until") as raised:
        await run.kg.changes("2024-05-01", "2024-05-01")
    assert raised.value.field == "until"
    with pytest.raises(InputError, match="unknown kind of change 'moved'") as bad:
        await run.kg.changes(kinds=["moved"])
    assert bad.value.field == "kinds"
    with pytest.raises(InputError) as when:
        await run.kg.changes("yesterday")
    assert when.value.field == "since"


async def test_the_read_returns_what_the_window_touches_on_either_axis_only(
    store: GraphStore, group: str
) -> None:
    run = await scripted(store, group)
    reads: ChangeReads = store  # type: ignore[assignment]
    records = await reads.changes(run.kg.group_id, Window(at("2023-01-01"), at("2023-02-01")), 100)
    assert records.facts == [] and records.corrections == [] and not records.truncated
    records = await reads.changes(run.kg.group_id, Window(until=at("2024-01-11")), 100)
    assert {run.names[f.uuid] for f in records.facts} == {"oslo", "rome"}  # started; ended in 2020
    assert {e.name for e in records.entities} >= {"Ann", "Oslo", "Rome"}
    assert all(e.group_id == run.kg.group_id for e in records.episodes) and records.episodes
    other = await reads.changes(f"{run.kg.group_id}-other", Window(), 100)
    assert other.facts == [] and other.corrections == [] and other.forgettings == []  # nothing crosses groups
    # the forgettings made in the window, by their record's time, half-open, under the limit
    records = await reads.changes(run.kg.group_id, Window(FORGOT, at("2025-03-06")), 100)
    assert records.forgettings == await run.kg.forget.history() and records.facts == records.corrections == []
    assert (await reads.changes(run.kg.group_id, Window(until=FORGOT), 100)).forgettings == []
    cut = await reads.changes(run.kg.group_id, Window(FORGOT), 0)
    assert cut.truncated and cut.forgettings == []


def test_the_list_draws_a_table_per_entity() -> None:
    listing = ChangeList("g", Window(at("2024-01-01")), [])
    assert listing.tables() == [] and "nothing" in listing._header()
    assert "from 2024-01-01 until now" in listing._header()


@pytest.mark.parametrize(
    ("since", "until", "inside", "outside"),
    [
        (at("2024-01-01"), at("2024-02-01"), [at("2024-01-01"), at("2024-01-31")], [at("2024-02-01")]),
        (None, at("2024-02-01"), [at("1900-01-01")], [at("2024-02-01"), None]),
        (at("2024-01-01"), None, [at("2999-01-01")], [at("2023-12-31")]),
    ],
)
def test_the_window_is_half_open(
    since: datetime | None, until: datetime | None, inside: list[datetime], outside: list[datetime | None]
) -> None:
    window = Window(since, until)
    holds: Callable[[datetime | None], bool] = window.holds
    assert all(holds(t) for t in inside) and not any(holds(t) for t in outside)


# --- the doors ---------------------------------------------------------------------------------------


async def test_every_door_lists_the_same_changes_forgotten_ones_included(
    store: GraphStore, group: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same window through Python, the CLI, HTTP and MCP: the same JSON, the forgetting in it."""
    run = await scripted(store, group)
    since, until = "2025-02-01T00:00:00Z", "2025-04-01T00:00:00Z"
    python = (await run.kg.changes(since, until)).to_dict()
    doors = {
        "cli": await cli_json(run.kg, ["changes", "--since", since, "--until", until], capsys),
        "http": await http_json(run.kg, "changes", {"since": since, "until": until}),
        "mcp": await mcp_json(run.kg, "changes", {"since": since, "until": until}),
    }
    assert {door: found for door, found in doors.items() if found != python} == {}
    assert python["counts"] == {"started": 0, "ended": 0, "learned": 1, "retired": 1, "corrected": 3,
                                "merged": 1, "forgotten": 1}  # fmt: skip
    only = {"cli": await cli_json(run.kg, ["changes", "--kind", "forgotten"], capsys),
            "http": await http_json(run.kg, "changes", {"kind": "forgotten"}),
            "mcp": await mcp_json(run.kg, "changes", {"kinds": ["forgotten"]})}  # fmt: skip
    lima = names_of(run.names)["lima"]
    for found in only.values():
        (entity,) = found["entities"]
        assert entity["name"] == "[forgotten]" and found["counts"] == {"forgotten": 1}
        assert [c["forgotten"]["fact_uuid"] for c in entity["changes"]] == [lima]
