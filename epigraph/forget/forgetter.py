"""Forgetting as the library does it: preview, then apply in the store's one transaction, then rebuild
with a model what a model wrote.

1. **Preview**: the group read from one consistent dump and planned (``graph.forget_plan``): what would
   go or be rewritten, as counts and ids, and the plan's digest. Nothing changes.
2. **Apply**: the rewritten texts embedded, then ``Forgetting.forget`` in one transaction of the store,
   which plans again over what it reads there and refuses (ConflictError) a plan whose digest is not
   the preview's. Without ``expect`` (the caller applies whatever the plan is now) a plan the graph
   changed under is previewed and tried again, at most ``ATTEMPTS`` times; with it, the conflict is the
   caller's to see (HTTP 409). The store then compacts its files (the embedded store; see
   ``graph.embedded.forgetting``).
3. **Rebuild**: the store's write already holds no forgotten name (summaries composed from the facts
   that stay, derived summaries dropped or left stale); where a model wrote the text before, a model
   writes it again: the entity summaries marked owed (``pipeline.refresh``), the conversation summaries
   dropped (folded again from the episodes that stay) and the stale communities. Without a model, or
   when it fails, that waits (the marks stay: the next batch end pays them) and the result says so.

Everything runs under the group's lock of the ingestion queue: no episode of the group is run by this
process halfway through. Logs carry counts and ids, never a name.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, aclosing
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, TypedDict, Unpack

from ..embed import Embedder
from ..episodes.reports import merge_reports
from ..errors import ConflictError, EpigraphError, UsageError
from ..graph.forget_plan import ForgetPlan, plan_forgetting
from ..graph.forgetting import (
    EPISODE_CHOICES,
    Compaction,
    EpisodesChoice,
    ForgetOutcome,
    ForgetRecord,
    ForgetRequest,
    subject_hash,
)
from ..graph.model import IngestReport
from ..graph.roles import optional, role
from ..graph.scrub import PLACEHOLDER, Scrubber
from ..graph.store import ForgetStore, GraphStore, OverviewStore
from ..graph.store_roles import RedactionVault
from ..overview import Communities, Conversations, OverviewOptions
from ..pipeline.options import IngestOptions
from ..pipeline.refresh import owed_summaries
from ..present.tables import Table, TableView
from ..prompts.protocol import LLM
from .subject import find_subject

log = logging.getLogger("epigraph.forget")

ATTEMPTS = 3
"""Previews and applies of one forgetting without ``expect`` before the conflict is raised."""

Lock = Callable[[str], AbstractAsyncContextManager[Any]]


@dataclass(frozen=True)
class Rebuilt:
    """What a model wrote again after a forgetting, and what still waits for one."""

    summaries: int = 0
    conversations: int = 0
    communities: int = 0
    waiting: list[str] = field(default_factory=list)
    """What waits (no model, or it failed): ``summaries``, ``conversations``, ``communities``."""
    report: IngestReport = field(default_factory=IngestReport)

    def to_dict(self) -> dict[str, Any]:
        r = self.report
        return {"summaries": self.summaries, "conversations": self.conversations,
                "communities": self.communities, "waiting": list(self.waiting), "llm_calls": r.llm_calls,
                "input_tokens": r.input_tokens, "output_tokens": r.output_tokens,
                "warnings": list(r.warnings)}  # fmt: skip


WHAT: dict[str, str] = {
    "entities": "entities forgotten (the subject)",
    "aliases": "aliases forgotten with it",
    "orphans": "entities only deleted episodes mentioned",
    "facts": "facts forgotten",
    "facts_current": "  of them current",
    "facts_retired": "  of them retired",
    "facts_redacted": "facts kept, the name taken out",
    "facts_detached": "facts kept, a deleted episode taken out of their sources",
    "kept_retired": "facts a forgotten fact had retired (they stay retired)",
    "episodes_mentioning": "episodes that mention or name it",
    "episodes_deleted": "episodes deleted",
    "episodes_redacted": "episodes kept, the name taken out",
    "entities_rewritten": "entities rewritten (names, summaries composed anew)",
    "summaries_owed": "  of them owed a model summary",
    "communities_rewritten": "communities rewritten (summarized again)",
    "communities_dissolved": "communities left without a member",
    "conversations_reset": "conversation summaries dropped (folded again)",
    "corrections_deleted": "corrections by hand deleted (they touched it)",
    "corrections_redacted": "corrections by hand kept, the name taken out",
    "names_unused": "spellings too short to take out",
    "vault_values": "redacted values taken out of the vault (no text left holds their placeholder)",
}
"""What each count of a forgetting means (its ``counts`` keys), as a table shows them."""


@dataclass(frozen=True)
class ForgetResult(TableView):
    """A forgetting previewed (``applied`` False: nothing changed) or applied: what goes or is rewritten
    (``counts`` and ``ids``, by kind), the plan's ``digest`` (apply exactly this plan with
    ``expect=digest``) and, once applied, the audit record, what was rebuilt and the compaction."""

    group_id: str
    applied: bool
    digest: str
    episodes: EpisodesChoice
    counts: dict[str, int]
    ids: dict[str, list[str]]
    record: ForgetRecord | None = None
    rebuilt: Rebuilt | None = None
    compaction: Compaction | None = None

    @property
    def empty(self) -> bool:
        """Nothing to forget."""
        return not any(self.ids.values())

    def _header(self) -> str:
        if not self.applied:
            head = f"would forget in group {self.group_id!r} (a preview: nothing changed)"
            return f"{head}\nplan {self.digest}: apply it to forget exactly this (expect={self.digest})"
        record = f", audit record {self.record.uuid}" if self.record is not None else ""
        return f"forgot in group {self.group_id!r}\nplan {self.digest}{record}"

    def tables(self) -> list[Table]:
        rows = tuple((what, str(self.counts[k])) for k, what in WHAT.items() if self.counts.get(k))
        found = [Table("what goes or is rewritten", ("what", "count"), rows, numeric=frozenset({"count"}),
                       empty="(nothing to forget)")]  # fmt: skip
        c, r = self.compaction, self.rebuilt
        after: list[tuple[str, str]] = []
        if r is not None:
            after += [("rebuilt by the model", f"{r.summaries} summaries, {r.conversations} conversations, "
                       f"{r.communities} communities ({r.report.llm_calls} calls)")]  # fmt: skip
            after += [("waiting for a model", ", ".join(r.waiting))] if r.waiting else []
        if c is not None:
            sizes = f"{c.size_before / 2**20:.1f} -> {c.size_after / 2**20:.1f} MiB"
            said = f"{'yes' if c.done else 'no'} in {c.seconds:.2f} s ({sizes})" + (
                f"; {c.note}" if c.note else ""
            )
            after.append(("store compacted", said))
        if after:
            found.append(Table("afterwards", ("step", "result"), tuple(after)))
        return found

    def to_dict(self) -> dict[str, Any]:
        c = self.compaction
        return {
            "group_id": self.group_id, "applied": self.applied, "digest": self.digest,
            "episodes": self.episodes, "counts": dict(self.counts),
            "ids": {k: list(v) for k, v in self.ids.items()},
            "record": None if self.record is None else self.record.model_dump(mode="json"),
            "rebuilt": None if self.rebuilt is None else self.rebuilt.to_dict(),
            "compaction": None if c is None else {"done": c.done, "seconds": round(c.seconds, 3),
                                                  "steps": c.steps, "size_before": c.size_before,
                                                  "size_after": c.size_after, "note": c.note},
        }  # fmt: skip


class ForgetOptions(TypedDict, total=False):
    """How a subject is forgotten (``kg.forget(subject, **options)``); every key optional."""

    episodes: EpisodesChoice
    """``"redact"`` (the default: the messages that mention it kept, its names taken out; the other
    subjects' facts kept) or ``"delete"`` (the messages deleted, with what only they support)."""
    also: Sequence[str]
    """Other spellings of its name to take out (a nickname the graph never linked)."""
    placeholder: str | None
    """What replaces each spelling (default ``[forgotten]``)."""
    apply: bool
    """Forget it (default False: a preview, nothing changes)."""
    expect: str | None
    """Apply only the plan of this digest (a preview's): ConflictError, nothing written, otherwise."""
    call: str
    """Which door asks, for the audit record (default ``python``)."""


class Forgetter:
    """Forgetting in a graph's groups: a subject (:meth:`subject`) or episodes (:meth:`episodes`,
    retention's), previewed or applied (see the module docstring)."""

    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        llm: LLM | None,
        options: IngestOptions,
        overview_options: OverviewOptions,
        lock: Lock,
        pay_owed: Callable[[str], Awaitable[object]],
    ) -> None:
        self.store, self.embedder, self.llm = store, embedder, llm
        self.options, self.overview_options, self.lock = options, overview_options, lock
        self.pay_owed = pay_owed
        """Pays the summaries a group owes, as a batch's end does (the queue's
        ``Ingestor.pay_owed_summaries``: only the queue writes what a model summarizes)."""
        self.forgets: ForgetStore = role(store, ForgetStore, feature="forget")
        self.vault = optional(store, RedactionVault)
        """The redaction vault, when the store keeps one: the placeholders its texts held are read into
        the preview, so their values go with the last text that holds them."""

    async def subject(self, group_id: str, ref: str, **how: Unpack[ForgetOptions]) -> ForgetResult:
        """Forget the entity ``ref`` (an id, a name or an alias) of the group: itself, its aliases and
        vectors, every fact with it as an end, its names (and ``also``) in everything that stays; the
        episodes that mention or name it redacted or deleted (``episodes``). See :class:`ForgetOptions`."""
        episodes = how.get("episodes", "redact")
        if episodes not in EPISODE_CHOICES:
            raise UsageError(f"episodes is 'redact' or 'delete', got {episodes!r}")
        found = await find_subject(self.store, group_id, ref, how.get("also", ()))
        request = ForgetRequest(
            group_id=group_id,
            now=self.options.clock(),
            entities=(found.entity.uuid,),
            names=found.names,
            mentioning=episodes,
            call=how.get("call", "python"),
            subject=subject_hash(found.entity.name),
            compose_max=self.options.summaries.compose_max,
            placeholder=how.get("placeholder") or PLACEHOLDER,
        )
        _check(request)
        return await self._run(request, how.get("apply", False), how.get("expect"))

    async def episodes(
        self,
        group_id: str,
        uuids: Sequence[str],
        *,
        older_than: datetime | None = None,
        apply: bool = False,
        expect: str | None = None,
        call: str = "retention",
    ) -> ForgetResult:
        """Forget the group's episodes ``uuids`` and what only they support (retention's way in)."""
        request = ForgetRequest(
            group_id=group_id,
            now=self.options.clock(),
            episodes=tuple(uuids),
            mentioning="delete",
            call=call,
            older_than=older_than,
            compose_max=self.options.summaries.compose_max,
        )
        return await self._run(request, apply, expect)

    # --- the three steps ------------------------------------------------------------------------------
    async def _run(self, request: ForgetRequest, apply: bool, expect: str | None) -> ForgetResult:
        plan, outcome = await self._locked(request, apply, expect)
        if outcome is None:
            return _result(request, plan)
        rebuilt = await self._rebuild(request.group_id, outcome)  # outside the lock: the queue takes it
        return _result(request, plan, outcome, rebuilt)

    async def _locked(
        self, request: ForgetRequest, apply: bool, expect: str | None
    ) -> tuple[ForgetPlan, ForgetOutcome | None]:
        """Under the group's lock: the plan, and what applying it did (None: a preview, or nothing)."""
        async with self.lock(request.group_id):
            for attempt in range(1, ATTEMPTS + 1):
                plan = await self._preview(request)
                if expect is not None and plan.digest != expect:
                    raise ConflictError(
                        "the group changed since the forgetting was previewed (its plan is not the one "
                        "given); nothing was written: preview it again"
                    )
                if not apply or plan.empty:
                    return plan, None
                try:
                    outcome = await self._apply(request, plan)
                except ConflictError:
                    if expect is not None or attempt == ATTEMPTS:
                        raise
                    log.info("group %s changed under a forgetting; planning it again", request.group_id)
                    continue
                record = outcome.record
                log.info(
                    "forgot in group %s (%s): %d entities, %d facts, %d episodes deleted, %d redacted; "
                    "record %s", request.group_id, record.call, record.counts.get("entities", 0),
                    record.counts.get("facts", 0), record.counts.get("episodes_deleted", 0),
                    record.counts.get("episodes_redacted", 0), record.uuid,
                )  # fmt: skip
                return plan, outcome
        raise AssertionError("unreachable")

    async def _preview(self, request: ForgetRequest) -> ForgetPlan:
        async with aclosing(self.forgets.dump([request.group_id], vectors=False)) as items:
            records = [item async for item in items]
        held = [] if self.vault is None else await self.vault.held_placeholders(request.group_id)
        return plan_forgetting(records, request, held)

    async def _apply(self, request: ForgetRequest, plan: ForgetPlan) -> ForgetOutcome:
        texts = list(plan.texts)
        vectors: dict[str, list[float]] = {}
        if texts:
            rows = await self.embedder.embed(texts)
            vectors = {text: [float(x) for x in row] for text, row in zip(texts, rows, strict=True)}
        return await self.forgets.forget(replace(request, vectors=vectors, expect=plan.digest))

    async def _rebuild(self, group_id: str, outcome: ForgetOutcome) -> Rebuilt:
        """Model-written text written again (see the module docstring); a failure leaves it waiting."""
        llm = self.llm
        waiting: list[str] = []
        report = IngestReport()
        done = {"summaries": 0, "conversations": 0, "communities": 0}
        views = optional(self.store, OverviewStore)
        wanted = {
            "summaries": bool(outcome.owed),
            "conversations": bool(outcome.conversations) and views is not None,
            "communities": outcome.communities_stale and views is not None,
        }
        for part in (p for p, want in wanted.items() if want):
            if llm is None:
                waiting.append(part)
                continue
            try:
                count, cost = await self._rebuild_part(part, llm, group_id, outcome, views)
            except EpigraphError as exc:  # the model failed: the next batch end (or update) catches up
                log.warning("after a forgetting in group %s, %s wait: %s", group_id, part, type(exc).__name__)
                waiting.append(part)
                continue
            done[part] = count
            report = merge_reports(report, cost)
        return Rebuilt(waiting=waiting, report=report, **done)

    async def _rebuild_part(
        self, part: str, llm: LLM, group_id: str, outcome: ForgetOutcome, views: OverviewStore | None
    ) -> tuple[int, IngestReport]:
        if part == "summaries":
            await self.pay_owed(group_id)  # its cost in the report of an episode of the group
            left = set(await owed_summaries(self.store, group_id))
            return sum(1 for uuid in outcome.owed if uuid not in left), IngestReport()
        assert views is not None
        if part == "conversations":
            conversations = Conversations(views, llm, self.embedder, self.overview_options)
            updates = [await conversations.update(group_id, key) for key in outcome.conversations]
            report = IngestReport()
            for update in updates:
                report = merge_reports(report, update.report)
            return sum(1 for u in updates if u.folded and not u.error), report
        communities = await Communities(views, llm, self.embedder, self.overview_options).update(group_id)
        return communities.summarized, communities.report


def _check(request: ForgetRequest) -> None:
    """A placeholder that is no text, or that holds a name it replaces, is refused before anything."""
    try:
        Scrubber(request.names, request.placeholder)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _result(
    request: ForgetRequest,
    plan: ForgetPlan,
    outcome: ForgetOutcome | None = None,
    rebuilt: Rebuilt | None = None,
) -> ForgetResult:
    return ForgetResult(
        group_id=request.group_id,
        applied=outcome is not None,
        digest=plan.digest,
        episodes=request.mentioning,
        counts=dict(plan.counts),
        ids={k: list(v) for k, v in plan.ids.items()},
        record=None if outcome is None else outcome.record,
        rebuilt=rebuilt,
        compaction=None if outcome is None else outcome.compaction,
    )
