"""The one exception tree of epigraph.

Every error the library raises on purpose is an ``EpigraphError``; callers can catch the root or a branch::

    EpigraphError
    ├── UsageError                 the caller asked for something invalid (fix the call, not the system)
    │   ├── ConfigError            a setting or environment variable is missing or malformed
    │   ├── InputError             bad input data; says where: file, line, field
    │   └── AmbiguousName          a name denotes several entities (forget one by its id); lists them
    ├── NotFound                   an entity, episode, fact or correction does not exist in the group
    │   ├── EntityNotFound         carries the closest names, for "did you mean"
    │   ├── EpisodeNotFound
    │   ├── ConversationNotFound   no episode of the group has that source (chain key)
    │   ├── FactNotFound
    │   ├── CorrectionNotFound
    │   ├── GroupNotFound          no record of the group in the store (an export of it)
    │   └── RetentionNotSet        the group has no retention policy
    ├── ConflictError              the graph changed under a correction, or a load found the group not
    │   │                          empty: nothing was written
    │   └── EpisodeConflict        an episode id already taken by an episode with other content
    ├── LLMError                   the language model could not give a usable answer
    │   ├── RateLimited            429s outlasted the retry budget
    │   ├── LLMTimeout             requests timed out past the retry budget
    │   ├── LLMUnavailable         5xx / connection failures past the retry budget
    │   ├── LLMRequestRejected     a non-retryable 4xx (auth, bad request, unknown model)
    │   └── StructuredOutputError  the reply never matched the prompt's schema; carries raw reply and usage
    ├── EmbeddingError             the embedder failed
    ├── LocalModelError            the local model's weights or server failed (hash mismatch, no start)
    ├── VaultKeyError              the redaction vault's key is wrong (or it keeps no originals)
    ├── QueueError                 Kafka did not take the episodes (unreachable, refused, not acknowledged)
    └── StoreError                 the graph store failed
        ├── StoreUnavailable       cannot reach / open the store
        │   └── StoreNotFound      the store file does not exist (and was not to be created)
        └── SchemaMismatch         the store was written by an incompatible schema version

Messages never contain secrets (API keys, passwords).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class EpigraphError(Exception):
    """Root of every error epigraph raises on purpose."""


class UsageError(EpigraphError, ValueError):
    """The caller asked for something invalid."""


class ConfigError(UsageError):
    """A setting is missing or malformed."""


class InputError(UsageError):
    """Bad input data, located as precisely as we can: file, line, field."""

    def __init__(
        self, message: str, *, file: str | None = None, line: int | None = None, field: str | None = None
    ) -> None:
        self.file, self.line, self.field = file, line, field
        where = ":".join(str(p) for p in (file, line) if p is not None)
        prefix = f"{where}: " if where else ""
        suffix = f" (field {field!r})" if field else ""
        super().__init__(f"{prefix}{message}{suffix}")
        self.reason = message


class AmbiguousName(UsageError):
    """A name denotes several entities of the group, so what it asks is refused: ``candidates`` are their
    ids (the message lists them and never repeats the name)."""

    def __init__(self, group_id: str, candidates: Sequence[str]) -> None:
        self.group_id, self.candidates = group_id, list(candidates)
        super().__init__(
            f"the name given denotes {len(self.candidates)} entities of group {group_id!r} "
            f"({', '.join(self.candidates)}): give the id of the one meant"
        )


class NotFound(EpigraphError, LookupError):
    """Something does not exist in the group it was looked up in."""


class EntityNotFound(NotFound):
    def __init__(self, name: str, group_id: str, closest: Sequence[str] = (), as_of: str = "") -> None:
        """``as_of``: the time asked, when the entity may exist now but had not been mentioned then."""
        self.name, self.group_id, self.closest = name, group_id, list(closest)
        hint = f"; closest names: {', '.join(self.closest)}" if self.closest else ""
        when = f" as of {as_of} (nothing said by then names it)" if as_of else ""
        super().__init__(f"no entity {name!r} in group {group_id!r}{when}{hint}")


class EpisodeNotFound(NotFound):
    def __init__(self, uuid: str, group_id: str) -> None:
        self.uuid, self.group_id = uuid, group_id
        super().__init__(f"no episode {uuid!r} in group {group_id!r}")


class ConversationNotFound(NotFound):
    def __init__(self, key: str, group_id: str) -> None:
        self.key, self.group_id = key, group_id
        super().__init__(f"no conversation {key[:200]!r} in group {group_id!r}")


class FactNotFound(NotFound):
    def __init__(self, uuid: str, group_id: str) -> None:
        self.uuid, self.group_id = uuid, group_id
        super().__init__(f"no fact {uuid!r} in group {group_id!r}")


class CorrectionNotFound(NotFound):
    def __init__(self, uuid: str, group_id: str) -> None:
        self.uuid, self.group_id = uuid, group_id
        super().__init__(f"no correction {uuid!r} in group {group_id!r}")


class GroupNotFound(NotFound):
    def __init__(self, group_id: str, known: Sequence[str] = ()) -> None:
        self.group_id, self.known = group_id, list(known)
        hint = f" (groups: {', '.join(map(repr, self.known[:20]))})" if self.known else " (it holds no group)"
        super().__init__(f"no group {group_id!r} in the store{hint}: nothing was written")


class RetentionNotSet(NotFound):
    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        super().__init__(f"group {group_id!r} has no retention policy: set one first (days)")


class ConflictError(EpigraphError):
    """What a write expected of the graph no longer holds (a correction prepared from records that
    changed since, a load into a group that holds data): nothing was written. Read again and retry."""


class EpisodeConflict(ConflictError):
    """An episode came with the id of one already stored, or of an earlier one of the same call, but with
    other content: the same id and content is a duplicate (skipped), the same id and other content is
    refused, never dropped. ``episode_id``: the caller's id (None when unknown: a Kafka message's
    episode), ``uuid``: the episode's, ``line``: the input line of the refused one and ``earlier_line``
    the line of the one that took the id in the same input (``in_input``), when known. Nothing of the
    call was stored."""

    def __init__(
        self,
        group_id: str,
        uuid: str,
        *,
        episode_id: str | None = None,
        line: int | None = None,
        in_input: bool = False,
        earlier_line: int | None = None,
    ) -> None:
        self.group_id, self.uuid, self.episode_id = group_id, uuid, episode_id
        self.line, self.in_input, self.earlier_line = line, in_input, earlier_line
        named = f"episode id {episode_id!r}" if episode_id is not None else f"episode {uuid}"
        if in_input:
            holder = "an earlier episode of the same input" + (
                f" (line {earlier_line})" if earlier_line is not None else ""
            )
        else:
            holder = f"the stored episode {uuid}"
        self.reason = (
            f"{named} of group {group_id!r} is already taken by {holder} with other content: refused, "
            "nothing stored (give the new episode its own id, or remove the stored one first)"
        )
        super().__init__(self.reason if line is None else f"line {line}: {self.reason}")


class LLMError(EpigraphError):
    """The language model could not give a usable answer."""

    def __init__(self, message: str, *, attempts: int = 1) -> None:
        self.attempts = attempts
        super().__init__(message)


class RateLimited(LLMError):
    pass


class LLMTimeout(LLMError):
    pass


class LLMUnavailable(LLMError):
    pass


class LLMRequestRejected(LLMError):
    pass


class StructuredOutputError(LLMError):
    """The reply never matched the prompt's schema (after the one bounded re-ask)."""

    def __init__(self, message: str, *, raw: str, usage: Any = None, attempts: int = 1) -> None:
        self.raw, self.usage = raw, usage
        super().__init__(message, attempts=attempts)


class EmbeddingError(EpigraphError):
    pass


class LocalModelError(EpigraphError):
    """The local model (``epigraph[local-model]``) could not be assembled, verified or started."""


class VaultKeyError(EpigraphError):
    """The key given does not open the group's redaction vault (``epigraph.privacy.vault``), or the
    vault keeps no originals to read back. Nothing was read or written."""


class QueueError(EpigraphError):
    """The message queue (Kafka) did not take what was published: unreachable, refused or not
    acknowledged in time. Says the bootstrap and topic; re-publishing is safe (episode ids are
    deterministic, so a worker ingests a repeated episode once)."""


class StoreError(EpigraphError):
    pass


class StoreUnavailable(StoreError):
    pass


class StoreNotFound(StoreUnavailable):
    """The embedded store's file does not exist, and the caller asked not to create one (a reading
    command on a mistyped path)."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(
            f"no epigraph store at {path!r}: nothing was created (check --db / EPIGRAPH_DB; "
            "ingesting into a new path creates it)"
        )


class StoreRoleMissing(StoreError, TypeError):
    """A feature needs an optional role of the store (``graph.store``: derived views, corrections,
    whole groups, bulk writes) that the store in use does not implement (raised by
    ``graph.roles.role``)."""

    def __init__(self, feature: str, role: str, store: str, methods: Sequence[str]) -> None:
        self.feature, self.role, self.store, self.methods = feature, role, store, list(methods)
        super().__init__(
            f"{feature} needs a store with the {role} role; {store} has not got "
            f"{', '.join(self.methods) or 'it'} (graph.store: GraphStore is the core every store "
            "implements; the other roles are optional)"
        )


class SchemaMismatch(StoreError):
    pass
