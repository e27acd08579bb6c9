"""Publishing episodes to Kafka: :class:`EpisodeProducer` (extra ``kafka``: aiokafka).

``publish(items)`` validates every item first (the same checks and errors as ingesting them here:
:meth:`EpisodeInput.coerce` and the Episode model; too large a message is refused too), so a malformed
episode raises :class:`~epigraph.errors.InputError` and **nothing of that batch is published**. Then it
sends each episode keyed by its group id, in the given order, and returns once Kafka acknowledged all of
them (``acks=all``, idempotent producer: a retried send is neither duplicated nor reordered), with each
one's partition and offset. Anything Kafka does not take raises :class:`~epigraph.errors.QueueError`
naming the bootstrap and topic; publishing the batch again is safe (deterministic episode ids: a worker
ingests a repeated episode once).

With the redaction policy on, the caller passes ``redact`` (``KnowledgeGraph.enqueue`` and ``--to-kafka``
do): each episode is redacted before it is encoded, through the producer's store, whose vault numbers
the placeholders (the same numbers the worker's door would give, when it is the workers' store: the
envelope names the vault and a worker refuses an episode of another, :mod:`.envelope`).

The partitioner is aiokafka's default, murmur2 of the key as in Kafka's Java client, so any producer of
this topic puts a group on the same partition. The topic is created on first use by the broker's
auto-create (its ``num.partitions``), or by :func:`ensure_topic` with a chosen count; adding partitions
later moves groups to other partitions, so choose the count up front (more than the workers you will run).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from ..episodes.events import EpisodeResult
from ..episodes.inputs import EpisodeInput
from ..errors import InputError, QueueError
from ..graph.model import Episode, IncreasingClock
from .envelope import Envelope, encode, envelope, redacted

DEFAULT_TOPIC = "epigraph.episodes"
MAX_MESSAGE_BYTES = 1_000_000
"""Kafka's default limit is 1 MiB per message (``max.message.bytes``) with some room for the record."""

Item = EpisodeInput | Mapping[str, Any]


@dataclass(frozen=True)
class Published:
    """One episode handed over: where it went (``partition``/``offset``), or ``result`` when there is no
    Kafka and :meth:`KnowledgeGraph.enqueue` ingested it here."""

    uuid: str
    group_id: str
    topic: str | None = None
    partition: int | None = None
    offset: int | None = None
    result: EpisodeResult | None = None


def validated(items: Iterable[Item], created_at: Iterable[datetime]) -> list[Envelope]:
    """Every item as its envelope; the first invalid one raises :class:`InputError` (with the item's
    file and line when it came from one, else its index)."""
    out: list[Envelope] = []
    for index, (item, at) in enumerate(zip(items, created_at, strict=False)):
        try:
            out.append(envelope(EpisodeInput.coerce(item), at))
        except InputError as exc:
            raise _refused(index, _line(item), exc.reason, exc.field) from None
        except (ValidationError, ValueError) as exc:
            raise _refused(index, _line(item), f"invalid episode: {_first_line(exc)}", _field(exc)) from None
    return out


def encoded(messages: Sequence[Envelope], items: Sequence[Item]) -> list[tuple[Envelope, bytes]]:
    """Each message with its value; one too large for Kafka raises :class:`InputError` naming its item."""
    out: list[tuple[Envelope, bytes]] = []
    for index, (message, item) in enumerate(zip(messages, items, strict=True)):
        value = encode(message)
        if len(value) > MAX_MESSAGE_BYTES:
            too_large = f"{len(value):,} bytes as a Kafka message, more than {MAX_MESSAGE_BYTES:,}"
            raise _refused(index, _line(item), too_large, "content")
        out.append((message, value))
    return out


def _line(item: Item) -> int | None:
    return item.line if isinstance(item, EpisodeInput) else None


def _refused(index: int, line: int | None, reason: str, field: str | None) -> InputError:
    """Where: the input file's line when the item has one, else its index in the batch."""
    if line is not None:
        return InputError(reason, line=line, field=field)
    return InputError(f"episode {index}: {reason}", field=field)


def _field(exc: Exception) -> str | None:
    if isinstance(exc, ValidationError) and exc.errors():
        return ".".join(str(part) for part in exc.errors()[0]["loc"]) or None
    return None


def _first_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError) and exc.errors():
        error = exc.errors()[0]
        return str(error["msg"])
    return str(exc).splitlines()[0]


Redact = Callable[[Episode], Awaitable[tuple[Episode, str | None]]]
"""An episode -> itself redacted and the id of the vault it was redacted into (None: nothing was)."""


async def _redacted(message: Envelope, redact: Redact) -> Envelope:
    episode, vault = await redact(message.to_episode())
    return message if vault is None else redacted(message, episode, vault)


class EpisodeProducer:
    """Publishes validated episodes to ``topic`` keyed by group (see the module docstring). An async
    context manager; or :meth:`start` and :meth:`close`."""

    def __init__(
        self,
        bootstrap: str,
        topic: str = DEFAULT_TOPIC,
        *,
        client_id: str = "epigraph-producer",
        timeout: float = 30.0,
    ) -> None:
        self.bootstrap, self.topic, self.timeout = bootstrap, topic, timeout
        self._client_id = client_id
        self._producer: Any = None
        # strictly increasing, so a group's episodes sharing a reference time keep the given order
        self._created_at = IncreasingClock()

    async def start(self) -> EpisodeProducer:
        if self._producer is not None:
            return self
        from aiokafka import AIOKafkaProducer
        from aiokafka.errors import KafkaError

        producer = AIOKafkaProducer(
            bootstrap_servers=self.bootstrap,
            client_id=self._client_id,
            acks="all",
            enable_idempotence=True,
            request_timeout_ms=int(self.timeout * 1000),
            max_request_size=MAX_MESSAGE_BYTES + 64_000,
            linger_ms=5,
        )
        try:
            await producer.start()
        except KafkaError as exc:
            await producer.stop()
            raise self._error(f"cannot connect ({exc})") from None
        self._producer = producer
        return self

    async def close(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.stop()

    async def __aenter__(self) -> EpisodeProducer:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def publish(self, items: Iterable[Item], *, redact: Redact | None = None) -> list[Published]:
        """Validate all of ``items``, then publish them in order; returns once every one is acknowledged.
        ``redact``: each episode as the queue's door would store it and the vault it was redacted
        into (``Ingestor.redacted``), so what the topic carries holds no original (envelope v2)."""
        items = list(items)
        messages = validated(items, (self._created_at() for _ in items))
        if not messages:
            return []
        if redact is not None:
            messages = [await _redacted(message, redact) for message in messages]
        values = encoded(messages, items)
        await self.start()
        return await self._send(values)

    async def _send(self, messages: Sequence[tuple[Envelope, bytes]]) -> list[Published]:
        from aiokafka.errors import KafkaError

        try:
            async with asyncio.timeout(self.timeout):
                send = self._producer.send
                pending = [await send(self.topic, value, key=message.key) for message, value in messages]
                acks = await asyncio.gather(*pending)
        except TimeoutError:
            raise self._error(f"not acknowledged within {self.timeout:g} s") from None
        except KafkaError as exc:
            raise self._error(f"refused: {exc}") from None
        return [
            Published(message.uuid, message.group, self.topic, ack.partition, ack.offset)
            for (message, _), ack in zip(messages, acks, strict=True)
        ]

    def _error(self, what: str) -> QueueError:
        return QueueError(f"Kafka at {self.bootstrap}, topic {self.topic!r}: {what}")


async def ensure_topic(bootstrap: str, topic: str, partitions: int, *, replicas: int = 1) -> int:
    """Create ``topic`` with ``partitions`` partitions and ``replicas`` replicas (1 suits a single
    broker; a cluster wants 3) unless it exists; returns its partition count."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.errors import KafkaError, TopicAlreadyExistsError

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        await admin.start()
        try:
            new = NewTopic(topic, num_partitions=partitions, replication_factor=replicas)
            await admin.create_topics([new])
        except TopicAlreadyExistsError:
            pass
        described = await admin.describe_topics([topic])
    except KafkaError as exc:
        raise QueueError(f"Kafka at {bootstrap}, topic {topic!r}: cannot create it ({exc})") from None
    finally:
        await admin.close()
    return len(described[0]["partitions"])
