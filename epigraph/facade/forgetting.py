"""Forgetting on a group's handle: ``kg.forget("Dana")`` (a preview; ``apply=True`` forgets),
``kg.forgotten()`` (the audit records) and the group's retention, ``kg.retention`` (``set(days)``,
``get()``, ``clear()``, ``forget()``: its old episodes, previewed or forgotten). Both need a store with the
forgetting roles (``graph.store.Forgetting``, ``Retention``): :class:`~epigraph.errors.StoreRoleMissing`
otherwise. See :mod:`epigraph.forget`."""

from __future__ import annotations

import logging

from ..errors import EpigraphError, RetentionNotSet
from ..forget import ForgetResult, Forgetter, due
from ..forget.retention import cutoff
from ..graph.forgetting import RetentionPolicy
from ..graph.roles import role
from ..graph.store import Retention as RetentionRole
from .parts import Graph, opened

log = logging.getLogger("epigraph.forget")


def forgetter_of(graph: Graph) -> Forgetter:
    """The graph's forgetter: under the ingestion queue's group locks, with its model and options."""
    return Forgetter(
        graph.store, graph.embedder, graph.llm, graph.options, graph.overview_options,
        lock=graph.ingestor.group_lock,
    )  # fmt: skip


class Retention:
    """The group's retention policy: its episodes older than ``days`` (by when they were said), and what
    only they support, forgotten by ``epigraph serve``'s passes (``Settings.retention_every``) or by
    :meth:`forget`."""

    def __init__(self, graph: Graph, group_id: str) -> None:
        self._graph, self.group_id = graph, group_id

    async def _store(self) -> RetentionRole:
        return role((await opened(self._graph)).store, RetentionRole, feature="retention")

    async def get(self) -> RetentionPolicy | None:
        """The group's policy, or None (it keeps everything)."""
        found = await (await self._store()).retention_policies(self.group_id)
        return found[0] if found else None

    async def set(self, days: int) -> RetentionPolicy:
        """Keep the group's episodes ``days`` days (1 to 36,500)."""
        policy = RetentionPolicy(group_id=self.group_id, days=days, updated_at=self._graph.options.clock())
        await (await self._store()).set_retention(policy)
        return policy

    async def clear(self) -> bool:
        """Keep everything again; whether the group had a policy."""
        return await (await self._store()).clear_retention(self.group_id)

    async def forget(
        self, *, apply: bool = False, expect: str | None = None, call: str = "retention"
    ) -> ForgetResult:
        """The episodes the policy forgets now, and what only they support: a preview (nothing changes),
        or with ``apply`` forgotten in one transaction (``expect``: only the plan of that digest).
        :class:`~epigraph.errors.RetentionNotSet` when the group has no policy."""
        policy = await self.get()
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
            done.append(await Retention(g, policy.group_id).forget(apply=True))
        except EpigraphError as exc:
            log.warning("retention of group %s failed (%s); the next pass tries again", policy.group_id,
                        type(exc).__name__)  # fmt: skip
    return done
