"""Bulk extraction (``IngestOptions(mode="bulk")``): a window of consecutive turns of one group
extracted in ONE call (``prompts.extract_window``), each turn then run as its own episode, in order.

What stays per turn: every line is handed to the turn that states it (:func:`attributed`: the turn it
is numbered with, unless another turn's text grounds more of its names), and that turn's run takes
it from there exactly as if its own extraction call had written it: its speaker, "my X" as the
speaker's, its reference time for the time words, grounding in its own text, resolution against the
graph as the earlier turns left it, one atomic write. What is shared: the call (its cost is charged to
the window's first turn, whose report also says what the call dropped). A turn the call did not deliver
extracts on its own, as in combined mode: every turn of a window whose call failed (the first one's
report says why and is charged for the call), and the turns a reply cut short (at the token cap, or
stopped as a runaway) never got to; the turn it was cut in keeps the lines it got (its report says the
reply was cut). The next window starts after the last turn of this one, so windows stay
``IngestOptions.window`` turns apart. An episode already done is left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..errors import LLMError
from ..graph.model import Episode, EpisodeStatus, speaker_of
from ..graph.store import GraphReads
from ..prompts import extract_window as wp
from ..prompts.extraction import EntityLine, FactLine
from ..prompts.protocol import LLM
from ..prompts.runtime import stream
from .metering import MeteredLLM
from .names.grounding import Grounding
from .names.policy import GroundingPolicy
from .options import IngestOptions
from .state import Prefetched


def _turn(episode: Episode) -> wp.WindowTurn:
    speaker = speaker_of(episode)
    text = episode.content
    if speaker is not None:
        text = text.lstrip()[len(speaker) + 1 :].strip()
    return wp.WindowTurn(speaker=speaker or "", message=text)


async def extract_window(
    store: GraphReads, llm: LLM, options: IngestOptions, episodes: Sequence[Episode]
) -> dict[str, Prefetched]:
    """One extract_window call for the ``episodes`` not already done: each one's lines by its uuid (a
    turn that states nothing gets an empty list). A turn a cut reply never got to is left out, and so is
    every turn when the call fails (or is cut before its first line) but the first, whose entry then
    carries the failed call (``delivered`` False): each of those extracts on its own."""
    pending = [e for e in episodes if not await _done(store, e)]
    if not pending:
        return {}
    meter = MeteredLLM(llm)
    data = wp.ExtractWindowInput(
        turns=[_turn(e) for e in pending],
        sentences_from_message=options.facts.sentences_from_message,
        **options.ontology.prompt_fields(),
    )
    lines = stream(meter, wp.PROMPT, data)
    found: list[wp.TurnLine] = [line async for line in lines]
    result = lines.result
    if result.error is not None and not found and not isinstance(result.error, LLMError):
        raise result.error
    reached = len(pending) if result.complete else max((line.turn for line in found), default=0)
    out = {e.uuid: Prefetched() for e in pending[:reached]}
    for line in attributed(
        found, data.turns[:reached], (options.names.grounding or GroundingPolicy()).synonyms
    ):
        out[pending[line.turn - 1].uuid].lines.extend(line.items)
    first = out.setdefault(pending[0].uuid, Prefetched(delivered=False))  # failed, or cut before a line
    first.records, first.result = list(meter.records), result
    return out


def attributed(
    found: Sequence[wp.TurnLine], turns: Sequence[wp.WindowTurn], synonyms: Iterable[frozenset[str]]
) -> list[wp.TurnLine]:
    """Each line handed to the turn that states it. A model that writes several turns in one reply
    may number a line one turn off (it copies its example's rhythm), and writes the speaker of the
    turn it numbered in place of "I". So a line goes to the reached turn whose text grounds the most of
    its other names (each name that is a turn's speaker counts for that turn), keeping its own
    number on a tie, else the nearest such turn (the later of two as near); moved to a turn of
    another speaker, the speaker it was written for becomes that turn's speaker ("Mo's sister" too),
    even where that turn's text names them: there they are mostly the one addressed ("Sorry about
    your job Jon, ... I also lost my job")."""
    grounding = [Grounding([t.message], synonyms) for t in turns]
    out: list[wp.TurnLine] = []
    for line in found:
        label = turns[line.turn - 1].speaker
        others = [i.name for i in line.items if isinstance(i, EntityLine) and not _is(i.name, label)]
        score = [
            sum(1 for n in others if _is(n, t.speaker) or g.grounded(n))
            for t, g in zip(turns, grounding, strict=True)
        ]
        if not others or score[line.turn - 1] == max(score):
            out.append(line)
            continue
        best = [n for n, s in enumerate(score, start=1) if s == max(score)]
        to = min(best, key=lambda n: (abs(n - line.turn), -n))
        speaker = turns[to - 1].speaker
        items = line.items
        if label and speaker and label != speaker:
            items = [_renamed(i, label, speaker) for i in items]
        out.append(wp.TurnLine(turn=to, items=items))
    return out


def _is(name: str, speaker: str) -> bool:
    return bool(speaker) and name.strip().casefold() == speaker.casefold()


def _renamed(item: EntityLine | FactLine, old: str, new: str) -> EntityLine | FactLine:
    """``item`` with the name ``old`` (alone or as an owner, "Ann's gym") read as ``new``."""
    pattern = re.compile(rf"\b{re.escape(old)}\b")
    if isinstance(item, EntityLine):
        return item.model_copy(update={"name": pattern.sub(new, item.name)})
    return item.model_copy(
        update={
            "source": pattern.sub(new, item.source),
            "target": pattern.sub(new, item.target),
            "fact": pattern.sub(new, item.fact),
        }
    )


async def _done(store: GraphReads, episode: Episode) -> bool:
    stored = await store.get_episode(episode.group_id, episode.uuid)
    return stored is not None and stored.status == EpisodeStatus.DONE
