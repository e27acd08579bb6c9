"""Forgetting on a group's handle, one namespace that is also called: ``kg.forget("Dana")`` (a preview;
``apply=True`` forgets; by :func:`forgetter_of`'s forgetter), the audit records (``kg.forget.history()``)
and the group's retention (``retention``, ``set_retention(days)``, ``clear_retention``,
``apply_retention``: its old episodes, previewed or forgotten). They need a store with the forgetting
roles (``graph.store_roles.Forgetting``, ``Retention``): :class:`~epigraph.errors.StoreRoleMissing`
otherwise. See :mod:`epigraph.forget`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar, Unpack

from ..errors import EpigraphError, RetentionNotSet
from ..forget import ForgetOptions, ForgetResult, Forgetter, due
from ..forget.retention import cutoff
from ..graph.forgetting import ForgetRecord, RetentionPolicy
from ..graph.roles import role
from ..graph.store_roles import Forgetting as ForgettingRole
from ..graph.store_roles import Retention as RetentionRole
from .parts import Graph, opened

log = logging.getLogger("epigraph.forget")
R = TypeVar("R")


def forgetter_of(graph: Graph) -> Forgetter:
    """The graph's forgetter: under the ingestion queue's group locks, with its model and options."""
    return Forgetter(
        graph.store, graph.embedder, graph.llm, graph.options, graph.overview_options,
        lock=graph.ingestor.group_lock, pay_owed=graph.ingestor.pay_owed_summaries,
    )  # fmt: skip


class Forgettings:
    """``kg.forget``: called, a subject forgotten (:meth:`__call__`); its methods, what the group forgot
    (its audit records) and its retention policy: its episodes older than ``days`` (by when they were
    said), and what only they support, forgotten by ``epigraph serve``'s passes
    (``Settings.retention_every``) or by :meth:`apply_retention`."""

    def __init__(self, graph: Graph, group_id: str) -> None:
        self._graph, self.group_id = graph, group_id

    async def __call__(self, subject: str, **options: Unpack[ForgetOptions]) -> ForgetResult:
        """Forget ``subject`` (its id, name or alias): a preview unless ``apply`` (see
        :attr:`~epigraph.facade.group.GroupHandle.forget`; ``options``:
        :class:`~epigraph.forget.ForgetOptions`)."""
        return await forgetter_of(await opened(self._graph)).subject(self.group_id, subject, **options)

    async def _store(self, role_of: Callable[..., R], feature: str) -> R:
        return role((await opened(self._graph)).store, role_of, feature=feature)

    async def history(self, *, name: str | None = None, limit: int = 100) -> list[ForgetRecord]:
        """The group's audit records of forgetting, newest first (ids, counts, when, by which call; the
        subject only as a salted hash); with ``name``, those that forgot a subject so called."""
        store = await self._store(ForgettingRole, "forgetting.history")
        records = await store.forgettings(self.group_id, limit=limit)
        return [r for r in records if name is None or r.is_of(name)]

    async def retention(self) -> RetentionPolicy | None:
        """The group's retention policy, or None (it keeps everything)."""
        found = await (await self._store(RetentionRole, "retention")).retention_policies(self.group_id)
        return found[0] if found else None

    async def set_retention(self, days: int) -> RetentionPolicy:
        """Keep the group's episodes ``days`` days (1 to 36,500)."""
        policy = RetentionPolicy(group_id=self.group_id, days=days, updated_at=self._graph.options.clock())
        await (await self._store(RetentionRole, "retention")).set_retention(policy)
        return policy

    async def clear_retention(self) -> bool:
        """Keep everything again; whether the group had a policy."""
        return await (await self._store(RetentionRole, "retention")).clear_retention(self.group_id)

    async def apply_retention(
        self, *, apply: bool = False, expect: str | None = None, call: str = "retention"
    ) -> ForgetResult:
        """The episodes the policy forgets now, and what only they support: a preview (nothing changes),
        or with ``apply`` forgotten in one transaction (``expect``: only the plan of that digest).
        :class:`~epigraph.errors.RetentionNotSet` when the group has no policy."""
        policy = await self.retention()
        if policy is None:
            raise RetentionNotSet(self.group_id)
        g = await opened(self._graph)
        now = g.options.clock()
        old = await due(g.store, policy, now)
        return await forgetter_of(g).episodes(
            self.group_id, old, older_than=cutoff(policy, now), apply=apply, expect=expect, call=call
        )


async def retention_pass(graph: Graph) -> list[ForgetResult]:
    """Every group's retention policy applied (what ``epigraph serve`` runs on its schedule); a group
    with nothing old is left as it is (no audit record). A group that fails is logged and skipped: the
    next pass tries it again."""
    g = await opened(graph)
    policies = await role(g.store, RetentionRole, feature="retention").retention_policies()
    done: list[ForgetResult] = []
    for policy in policies:
        try:
            done.append(await Forgettings(g, policy.group_id).apply_retention(apply=True))
        except EpigraphError as exc:
            log.warning("retention of group %s failed (%s); the next pass tries again", policy.group_id,
                        type(exc).__name__)  # fmt: skip
    return done
