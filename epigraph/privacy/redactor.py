"""The redaction at the door: an episode's text with its personal data replaced by placeholders, before
it is stored or shown to a model (``ingestion.ingestor`` calls :meth:`Redactor.episode` at every door:
library, CLI, HTTP, MCP, Kafka worker), and the originals read back with the right key
(:meth:`Redactor.reveal`).

A value's placeholder is found by its digest (``vault.Sealer``) in the store's ``RedactionVault``, or
numbered there the first time (the next of its kind in the group), so the same number is ``<PHONE_3>``
in every episode of the group and a different one in another group. The episode keeps its id (derived
from what it was given, so sending it again is still a no-op, and a Kafka envelope's id is still the
stored one); its content hash is of the redacted text. An episode with nothing to replace costs no
store call, one with something two (the vault's header, then its numbers). Nothing is cached between
episodes: a group deleted (or forgotten) in between starts a new vault, whichever process deleted it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..graph.model import Episode, content_hash
from ..graph.store import RedactionVault, VaultEntry
from .detectors import Span, find
from .placeholders import PLACEHOLDER, placeholder, placeholders_in
from .policy import Redaction
from .vault import Sealer, VaultKey

NameFinder = Callable[[str], list[Span]]


class Redactor:
    """Redacts episodes into ``vault`` (the store) by ``policy``, sealing originals with ``key`` (None:
    dropped). ``names`` finds person names when the policy asks for them (default: spaCy's tagger)."""

    def __init__(
        self,
        vault: RedactionVault,
        policy: Redaction,
        key: VaultKey | None = None,
        *,
        names: NameFinder | None = None,
    ) -> None:
        self.vault, self.policy, self.key = vault, policy, key
        self._names = names

    def spans(self, text: str) -> list[Span]:
        """The spans of ``text`` the policy replaces, earliest first, none overlapping (the rules' win)."""
        found = [s for s in find(text) if s.kind in self.policy.kinds]
        if self.policy.names:
            for name in self._find_names()(text):
                if not any(name.start < s.end and s.start < name.end for s in found):
                    found.append(name)
            found.sort(key=lambda s: s.start)
        return [s for s in found if not PLACEHOLDER.fullmatch(text[s.start : s.end])]

    async def episode(self, episode: Episode) -> Episode:
        """``episode`` with its content, name and source description redacted (itself when nothing is)."""
        fields = {
            "content": episode.content,
            "name": episode.name,
            "source_description": episode.source_description,
        }
        found = {name: self.spans(text) for name, text in fields.items()}
        if not any(found.values()):
            return episode
        numbers = await self._number(episode.group_id, [s for spans in found.values() for s in spans])
        changed = {name: _replaced(fields[name], spans, numbers) for name, spans in found.items() if spans}
        changed["content_hash"] = content_hash(changed.get("content", episode.content))
        return episode.model_copy(update=changed)

    async def reveal(self, group_id: str, text: str, key: VaultKey) -> str:
        """``text`` with every placeholder of the group's vault replaced by its original, opened with
        ``key`` (:class:`~epigraph.errors.VaultKeyError` when it is not the vault's key, or the vault
        keeps no originals); a placeholder the vault does not hold is left as it is."""
        refs = placeholders_in(text)
        sealed = await self.vault.sealed_values(group_id, refs) if refs else {}
        if not sealed:
            return text
        sealer = await self._sealer(group_id, key)
        opened = {placeholder(kind, n): sealer.open(kind, value) for (kind, n), value in sealed.items()}
        return PLACEHOLDER.sub(lambda m: opened.get(m.group(), m.group()), text)

    # --- internals ------------------------------------------------------------------------------------

    def _find_names(self) -> NameFinder:
        if self._names is None:
            from .names import person_names

            self._names = person_names
        return self._names

    async def _sealer(self, group_id: str, key: VaultKey | None) -> Sealer:
        return Sealer(group_id, await self.vault.vault_header(group_id, Sealer.proposal(key)), key)

    async def _number(self, group_id: str, spans: Sequence[Span]) -> dict[tuple[str, str], int]:
        """Each span's (kind, value) -> its placeholder number in the group."""
        sealer = await self._sealer(group_id, self.key)
        values = list(dict.fromkeys((s.kind, s.value) for s in spans))
        entries = [
            VaultEntry(kind, sealer.digest(kind, value), sealer.seal(kind, value)) for kind, value in values
        ]
        return dict(zip(values, await self.vault.placeholders(group_id, entries), strict=True))


def _replaced(text: str, spans: Sequence[Span], numbers: dict[tuple[str, str], int]) -> str:
    out, at = [], 0
    for span in spans:
        out += [text[at : span.start], placeholder(span.kind, numbers[(span.kind, span.value)])]
        at = span.end
    return "".join([*out, text[at:]])
