"""Personal data at the queue's doors (``IngestOptions.redact``): every door replaces it in an episode
before anything is stored, so neither the store nor the model ever sees it (``privacy.redactor``)."""

from __future__ import annotations

from ..graph.model import Episode
from ..graph.roles import role
from ..graph.store import IngestStore
from ..graph.store_roles import RedactionVault
from ..privacy.policy import DEFAULT, Redaction, redaction_of
from ..privacy.redactor import Redactor
from ..privacy.vault import VaultKey


class DoorPrivacy:
    """The redaction of one queue over ``store``: its ``redact`` setting's policy, its vault's ``key``."""

    def __init__(self, store: IngestStore, redact: bool | Redaction, key: VaultKey | None) -> None:
        self._store, self._key = store, key
        policy = redaction_of(redact)
        self.redactor = None if policy is None else self._redactor_for(policy)
        """What replaces personal data at the door, None when it is off."""

    async def episode(self, episode: Episode) -> Episode:
        """The door's step before anything is stored: ``episode`` with its personal data replaced."""
        return episode if self.redactor is None else await self.redactor.episode(episode)

    async def redacted(self, episode: Episode) -> tuple[Episode, str | None]:
        """``episode`` as the door would store it, and the id of the vault its placeholders are numbered
        in (None when nothing was replaced)."""
        done = await self.episode(episode)
        if done is episode or self.redactor is None:
            return done, None
        return done, await self.redactor.vault_id(episode.group_id)

    def vault(self, feature: str) -> Redactor:
        """The store's redaction vault under the policy (or every kind when it is off); StoreRoleMissing
        (naming ``feature``) when the store has no vault."""
        return self.redactor or self._redactor_for(DEFAULT, feature)

    def _redactor_for(self, policy: Redaction, feature: str = "redaction (IngestOptions.redact)") -> Redactor:
        return Redactor(role(self._store, RedactionVault, feature=feature), policy, self._key)
