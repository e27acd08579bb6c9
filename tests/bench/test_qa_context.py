"""bench/quality/qa_context.py's ``--variant``: the library's context, the general parts, one shape's parts,
or the general parts with other shares; a budget below 1 or an unknown part refused, whatever the form."""

from __future__ import annotations

import argparse

import pytest

from bench.quality import qa_context
from epigraph.ask.context import PARTS, SHAPED


def test_each_form_of_a_variant_gives_its_parts() -> None:
    assert qa_context.parse_variant("650").parts is None, "the library's: chosen by each question's shape"
    assert qa_context.parse_variant("650:flat").parts == PARTS
    gather = qa_context.parse_variant("650:gather")
    assert (gather.budget, gather.parts) == (650, SHAPED["gather"])
    shared = qa_context.parse_variant("900:episodes=.3,facts=.3").parts
    assert shared is not None and [p.name for p in shared] == [p.name for p in PARTS]
    assert abs(sum(p.share for p in shared) - 1.0) < 1e-9, "renormalised"
    share = {p.name: p.share for p in shared}
    assert share["facts"] == pytest.approx(share["episodes"]), "facts and episodes given the same share"


@pytest.mark.parametrize("text", ["0", "0:flat", "0:gather", "-5:when", "x:gather", "650:nothing=.5"])
def test_a_bad_budget_or_part_is_refused_in_every_form(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="--variant"):
        qa_context.parse_variant(text)
