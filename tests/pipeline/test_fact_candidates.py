"""Which earlier facts a new fact is shown (``pipeline.facts.candidates``): structural scope, then each
shared endpoint's own best candidates, so a busy endpoint never takes a quiet one's slots."""

from __future__ import annotations

import math

from epigraph.graph.model import Fact
from epigraph.pipeline.facts.candidates import Vector, rank, select

NAMES: dict[str, tuple[str, Vector | None]] = {
    u: (name, None)
    for u, name in {"alice": "Alice", "fest": "festival", "band": "band", "bob": "Bob"}.items()
}


def _vector(angle_degrees: float) -> list[float]:
    """A unit vector whose cosine with the new fact's ``[1, 0]`` is cos(angle)."""
    a = math.radians(angle_degrees)
    return [math.cos(a), math.sin(a)]


def _fact(source: str, target: str, text: str, angle: float, relation: str = "R") -> Fact:
    return Fact(
        group_id="g",
        source_uuid=source,
        target_uuid=target,
        relation=relation,
        text=text,
        text_embedding=_vector(angle),
    )


NEW = _fact("alice", "fest", "Alice performed at the festival.", 0, "PERFORMED_AT")
BUSY = [_fact("alice", f"thing{i}", f"Alice loves thing {i}.", 10 + i) for i in range(8)]
QUIET = [
    _fact("band", "fest", "The band will play at the festival.", 80, "WILL_PLAY_AT"),
    _fact("band", "fest", "The band is practising for the festival.", 85, "PRACTISING_FOR"),
]
PAIR = [_fact("alice", "fest", f"Alice and the festival, {i}.", 30 + 10 * i) for i in range(5)]
OTHERS = [
    _fact("bob", "paris", "Bob performed in Paris.", 0),  # shares no endpoint: never shown
    _fact(
        "bob", "fest", "Bob performed at the festival.", 0, "PERFORMED_AT"
    ),  # only the object, same relation
]
POOL = [*BUSY, *QUIET, *PAIR, *OTHERS]


def _texts(facts: list[Fact]) -> set[str]:
    return {f.text for f in facts}


def _shown(**kw: int | float) -> list[str]:
    settings: dict[str, float] = {"limit": 10, "per_end": 3, "floor": 0.3, "always": 3, **kw}
    chosen = select(
        NEW,
        rank(NEW, NEW.text_embedding, POOL, NAMES),
        int(settings["limit"]),
        int(settings["per_end"]),
        settings["floor"],
        int(settings["always"]),
    )
    return [f.text for f in chosen]


def test_one_ranking_puts_the_quiet_endpoint_last() -> None:
    ranked = [r.fact.text for r in rank(NEW, NEW.text_embedding, POOL, NAMES)]
    assert set(ranked) == _texts([*BUSY, *QUIET, *PAIR]), "scope: no unshared, no same-relation object"
    assert ranked[-2:] == [f.text for f in QUIET], "by meaning alone the festival's 2 come after Alice's 8"


def test_each_shared_endpoint_gets_its_own_candidates_and_the_pair_the_rest() -> None:
    shown = _shown()
    assert len(shown) == 10
    assert _texts(QUIET) <= set(shown), "the quiet endpoint's facts are shown beside the busy one's"
    assert _texts(BUSY) & set(shown) == _texts(BUSY[:3]), "the busy endpoint's 3 best"
    assert _texts(PAIR) <= set(shown), "the pair facts take the 5 slots left"
    assert not _texts(OTHERS) & set(shown)


def test_a_small_limit_still_reaches_every_shared_endpoint() -> None:
    shown = _shown(limit=5)
    assert len(shown) == 5
    assert {QUIET[0].text, BUSY[0].text, PAIR[0].text} <= set(shown), "round robin: pair, subject, object"


def test_past_the_always_best_a_candidate_needs_the_floor() -> None:
    shown = _shown(always=1)
    assert QUIET[0].text in shown, "an endpoint's best is shown whatever its score"
    assert QUIET[1].text not in shown, "the next one, cosine 0.09, is under the 0.3 floor"
    assert len(_texts(BUSY) & set(shown)) == 3, "the busy endpoint's close ones pass the floor"
