"""What ``live.py`` records of every model call: the recording LLM (the pipeline's own meter, replies
kept), how a reply ended (cut by the cap, stopped by the runtime), each reply under the turn it was
about (``--save-replies``), and the share of each reply's output the graph kept."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from epigraph.episodes.events import EpisodeResult
from epigraph.graph.model import normalize_name, speaker_of
from epigraph.pipeline.dating import without_iso_dates
from epigraph.pipeline.metering import CallRecord, MeteredLLM
from epigraph.prompts.extract_combined import names_part
from epigraph.prompts.fact_lines import NamePart, read_line, read_names
from epigraph.prompts.protocol import LLM


def recording(inner: LLM) -> MeteredLLM:
    """The pipeline's own meter over the whole run, keeping every reply's text (fixtures, table)."""
    return MeteredLLM(inner, keep_text=True)


def cut_by_cap(call: CallRecord) -> bool:
    """Cut by the token cap (the server ended it: ``finish_reason == "length"``)."""
    return call.finish_reason == "length"


def stopped_early(call: CallRecord) -> bool:
    """Closed by the runtime at its first repeated or unreadable line (text came, no end ever did):
    the lines before it stand; by design, not a cut."""
    return not call.ok and call.finish_reason is None and bool(call.text)


def is_about(asked: str, episode: str) -> bool:
    """A request's message or episode input (``metering.asked_about``) is about this turn's text: one
    holds the other's first 60 characters (a resolve request shows the episode with its speaker). A
    request about no turn ("": a summary, a bulk window) is any turn's."""
    return episode[:60] in asked or asked[:60] in episode


def reply_rows(calls: Sequence[CallRecord], ends: Sequence[tuple[int, str]]) -> list[dict[str, Any]]:
    """Each reply as written, with its prompt, how it ended and its episode, grouped by episode in the
    order they ended; ``ends``: (number of calls recorded when the episode ended, its text), in order. A
    call is its episode's by what it asked about (``CallRecord.asked_about``: with episodes in flight a
    later turn's extraction is made before an earlier turn ends), else by when it was made (the episode
    that ended next; after the last: the batch's summaries, under the last). An episode that made no
    call of its own (a bulk window's later turns: the window's call is its first turn's) gets a row with
    no prompt, so a replay knows every turn the run ingested."""
    if not ends:
        return []
    texts = [episode for _, episode in ends]
    rows: dict[str, list[dict[str, Any]]] = {episode: [] for episode in texts}
    turn = 0
    for number, call in enumerate(calls):
        while number >= ends[turn][0] and turn < len(ends) - 1:
            turn += 1
        about = [t for t in texts if call.asked_about and is_about(call.asked_about, t)]
        owner = about[0] if about else texts[turn]
        rows[owner].append(
            {"prompt": call.prompt, "finish": call.finish_reason, "episode": owner, "text": call.text}
        )
    empty = {"prompt": None, "finish": None, "text": None}
    return [row for t in rows for row in (rows[t] or [{**empty, "episode": t}])]


def kept_output_tokens(calls: Sequence[CallRecord], results: Sequence[EpisodeResult]) -> list[float]:
    """Per call, the generated tokens of the reply lines the graph kept: an extraction line whose fact
    (or, for a name list, whose entity) the run wrote; every line of other prompts counts as kept
    (decisions and summaries are used whole). A call's tokens are shared by its lines' lengths. A line
    is looked up among what every episode of the run wrote, not its own turn's only: turns overlap (the
    next turn's call can end before the turn before it does), a bulk window's lines go to several turns,
    and a line handed to another turn than its number says is written with that turn's speaker
    (speakers are compared as one). A line whose very sentence one turn dropped and another kept counts
    as kept."""
    written = _Written(results)
    kept = [float(c.output_tokens) for c in calls]
    for i, call in enumerate(calls):
        if call.prompt.startswith("extract_") and call.text.strip():
            lines = [line for line in call.text.splitlines() if line.strip()]
            share = sum(_kept_chars(line, call.prompt, written) for line in lines)
            kept[i] = call.output_tokens * share / max(1, sum(len(line) for line in lines))
    return kept


class _Written:
    """What some episodes wrote: their facts' sentences (each speaker's name as one marker) and names."""

    def __init__(self, results: Sequence[EpisodeResult]) -> None:
        self.speakers = {s.casefold() for r in results if (s := speaker_of(r.episode))}
        self.facts = {self.flat(f.text) for r in results for f in (*r.facts, *r.invalidated)}
        self.names = {normalize_name(n) for r in results for e in r.entities for n in (e.name, *e.aliases)}

    def flat(self, text: str) -> str:
        said = without_iso_dates(text).casefold().rstrip(" .!").split()
        return " ".join("\x00" if w in self.speakers else w for w in said)


def _kept_chars(line: str, prompt: str, written: _Written) -> float:
    """The characters of one reply line the graph kept: a name list's kept names (separate mode's
    names call, a combined reply's ``Names:`` line) by their share of its names' lengths, any other
    line whole or not at all."""
    listed = names_part(line) if prompt == "extract_combined" else None
    if prompt == "extract_entities" or listed is not None:
        try:
            parts = read_names(line if listed is None else listed)
        except ValueError:
            return 0.0
        kept = sum(len(p.name) for p in parts if normalize_name(p.name) in written.names)
        return len(line) * kept / max(1, sum(len(p.name) for p in parts))
    return float(len(line)) if _kept(line, prompt, written) else 0.0


def _kept(line: str, prompt: str, written: _Written) -> bool:
    if prompt == "extract_window":  # "<turn> <speaker>: [a] verb [b]": the turn first
        line = line.partition(" ")[2]
        line = line[line.index("[") :] if "[" in line else line
    try:
        parts = read_line(line)
    except ValueError:
        return False
    if isinstance(parts, NamePart):  # a bare "[name]" line of a combined reply
        return normalize_name(parts.name) in written.names
    return written.flat(parts.sentence) in written.facts
