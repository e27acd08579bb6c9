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
episodes: a group deleted (or forgotten) in between starts a new vault, whichever process deleted it.

Besides episodes: :meth:`Redactor.texts` (a correction's words, numbered like an episode's),
:meth:`Redactor.query` (a search or a question: values the vault knows become their placeholders,
others ``<PHONE>``; nothing is written), :meth:`Redactor.reserve` (a loaded dump's placeholders, so
that no new value gets their numbers) and :meth:`Redactor.vault_id` / :meth:`Redactor.check_vault` (a
Kafka producer that redacted, and the worker that checks its store numbered it)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from ..errors import ConflictError, InputError
from ..graph.model import Episode, content_hash
from ..graph.placeholders import PLACEHOLDER, placeholder, placeholders_in, unnumbered
from ..graph.store import VaultEntry
from ..graph.store_roles import RedactionVault
from .detectors import Span, find
from .policy import Redaction
from .vault import Sealer, VaultKey, vault_id

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
        fields = (episode.content, episode.name, episode.source_description)
        content, name, source = await self.texts(episode.group_id, fields)
        if (content, name, source) == fields:
            return episode
        update = {"content": content, "name": name, "source_description": source}
        return episode.model_copy(update={**update, "content_hash": content_hash(content)})

    async def texts(self, group_id: str, texts: Sequence[str]) -> list[str]:
        """``texts`` redacted into the group's vault (a new value numbered), in order; one vault call
        for all of them, none when nothing is found."""
        found = [self.spans(text) for text in texts]
        if not any(found):
            return list(texts)
        numbers = await self._number(group_id, [s for spans in found for s in spans])
        return [_replaced(text, spans, numbers) for text, spans in zip(texts, found, strict=True)]

    async def query(self, group_ids: Sequence[str], text: str) -> str:
        """A search query or a question of ``group_ids`` with each value the policy replaces written as
        its placeholder in those groups (several when the groups number it differently: "<PHONE_1>
        <PHONE_4>"), or ``<PHONE>`` where no vault of them holds it. Reads the vaults, never writes."""
        spans = self.spans(text)
        if not spans:
            return text
        values = list(dict.fromkeys((s.kind, s.value) for s in spans))
        known: dict[tuple[str, str], list[str]] = {value: [] for value in values}
        for group_id in dict.fromkeys(group_ids):
            header = await self.vault.read_vault_header(group_id)
            if header is None:
                continue
            sealer = Sealer(group_id, header, self.key)
            numbers = await self.vault.known_placeholders(group_id, [sealer.digest(*v) for v in values])
            for (kind, value), number in zip(values, numbers, strict=True):
                if number is not None:
                    known[(kind, value)].append(placeholder(kind, number))
        words = {v: " ".join(dict.fromkeys(found)) or unnumbered(v[0]) for v, found in known.items()}
        return _replaced(text, spans, words)

    async def reserve(self, group_id: str, texts: Iterable[str]) -> None:
        """Before ``texts`` from elsewhere (a loaded dump's) are written into the group: the placeholders
        they hold reserved in its vault, so that no new value gets their numbers;
        :class:`~epigraph.errors.ConflictError` (nothing reserved) when the vault numbers one of them
        for a value of its own (the text's ``<PHONE_1>`` and the group's would be two values)."""
        refs = list(dict.fromkeys(ref for text in texts for ref in placeholders_in(text)))
        clashes = await self.vault.reserve_placeholders(group_id, refs) if refs else []
        if clashes:
            names = ", ".join(placeholder(kind, n) for kind, n in clashes[:3])
            raise ConflictError(
                f"group {group_id!r}: its redaction vault already numbers {names} for values of its own, "
                "which the loaded text names too (two values under one placeholder): load it as a group "
                "without a vault (another name); nothing was written"
            )

    async def vault_id(self, group_id: str) -> str | None:
        """The id of the group's vault (``vault.vault_id``), None when it has none; never writes."""
        header = await self.vault.read_vault_header(group_id)
        return None if header is None else vault_id(header)

    async def check_vault(self, group_id: str, expected: str) -> None:
        """:class:`~epigraph.errors.InputError` unless the group's vault is the one ``expected`` names:
        an episode redacted elsewhere holds placeholders of that vault, which mean other values here."""
        mine = await self.vault_id(group_id)
        if mine != expected:
            raise InputError(
                f"redacted against redaction vault {expected} of group {group_id!r}, but this store's is "
                f"{mine or 'none'}: a producer that redacts (enqueue, --to-kafka with --redact) must use "
                "the workers' store (the group may also have been deleted since); not ingested",
                field="vault",
            )

    async def reveal(self, group_id: str, text: str, key: VaultKey) -> str:
        """``text`` with every placeholder of the group's vault replaced by its original, opened with
        ``key`` (:class:`~epigraph.errors.VaultKeyError` when it is not the vault's key, or the vault
        keeps no originals); a placeholder the vault keeps no original of is left as it is (all of them in
        a vault started without a key)."""
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


def _replaced(text: str, spans: Sequence[Span], words: Mapping[tuple[str, str], int | str]) -> str:
    """``text`` with each span written as its word: a number's placeholder, or the word itself."""
    out, at = [], 0
    for span in spans:
        word = words[(span.kind, span.value)]
        out += [text[at : span.start], word if isinstance(word, str) else placeholder(span.kind, word)]
        at = span.end
    return "".join([*out, text[at:]])
