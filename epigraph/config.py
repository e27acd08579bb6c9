"""Settings: the ONLY place that reads the environment.

Every ``EPIGRAPH_*`` variable is read once, here, by :meth:`Settings.from_env`. The rest of the library
receives a ``Settings`` (or plain arguments) and never touches ``os.environ``. Secrets are ``SecretStr``
so that a printed or logged ``Settings`` never shows them.

| variable | field | default |
| --- | --- | --- |
| EPIGRAPH_DB | db_path | ./epigraph.db (``:memory:`` for a throwaway graph) |
| EPIGRAPH_DB_CREATE | db_create | true (false: a missing store file is an error, never a new empty graph) |
| EPIGRAPH_GROUP | group_id | default |
| EPIGRAPH_AUTHOR | author | unset: a correction by hand names its author (``person:alice``, or ``alice``) |
| EPIGRAPH_NEO4J_URI / _USER / _PASSWORD / _DATABASE | neo4j_* | unset: the embedded store is used |
| EPIGRAPH_EXACT_BELOW | exact_below | 50000: a group this large gets a vector index (`epigraph index`) |
| EPIGRAPH_LLM_BASE_URL / _API_KEY / _MODEL / _SMALL_MODEL | llm_* | unset: no live LLM |
| EPIGRAPH_LLM_TEMPERATURE / _MAX_TOKENS / _TIMEOUT | llm_* | 0.0 / 4096 / 60 s |
| EPIGRAPH_LLM_STRUCTURED | llm_structured | json_schema (or json_object, or none) |
| EPIGRAPH_LLM_MAX_IN_FLIGHT / _RPM / _TPM | llm_* | 8 / 0 / 0 (0: none, or the provider's headers say) |
| EPIGRAPH_LLM_MAX_ATTEMPTS / _MAX_RETRY_SECONDS | llm_* | 5 / 120 s |
| EPIGRAPH_LLM=local (or _LLM_LOCAL=1) | llm_local | off (on: the local model, epigraph[local-model]) |
| EPIGRAPH_LOCAL_MODEL_DIR / _CTX / _THREADS | local_model_* | ~/.cache/epigraph/models / 8192 / 0: all CPUs |
| EPIGRAPH_LOCAL_MODEL_SLOTS | local_model_slots | 1 (calls the local model runs side by side) |
| EPIGRAPH_LOCAL_MODEL_RUNTIME | local_model_runtime | auto (`epigraph model build`'s build if any) / wheel |
| EPIGRAPH_EMBEDDER | embedder | sentence-transformers (or openai, or hash) |
| EPIGRAPH_EMBED_BASE_URL / _API_KEY / _MODEL / _DIM | embed_* | LLM endpoint, key / MiniLM-L6-v2 / 384 |
| EPIGRAPH_API_KEYS / _API_KEYS_FILE | api_keys* | unset: `epigraph serve` / `mcp` open on loopback only |
| EPIGRAPH_API_KEY | api_key | the key an `epigraph mcp` stdio session presents (its host sets it) |
| EPIGRAPH_KAFKA_BOOTSTRAP / _TOPIC | kafka_* | unset: `enqueue` ingests here / epigraph.episodes |
| EPIGRAPH_CLAIM_SECONDS | claim_seconds | 60 (an ingesting process's claim on an episode, renewed) |
| EPIGRAPH_IN_FLIGHT | in_flight | unset: `IngestOptions.in_flight` (1: one episode of a group at a time) |
| EPIGRAPH_TRACING | tracing | false (true: OpenTelemetry spans, epigraph[otel]; see ``epigraph.tracing``) |
| EPIGRAPH_WEBHOOK_URLS / _SECRET | webhook_* | unset: no webhooks (URLs: commas or spaces between; secrets) |
| EPIGRAPH_WEBHOOK_EVENTS | webhook_events | episode.done,episode.failed |
| EPIGRAPH_WEBHOOK_ATTEMPTS / _BACKOFF / _TIMEOUT / _QUEUE | webhook_* | 5 / 1 s (doubled) / 10 s / 1000 |
| EPIGRAPH_RETENTION_EVERY | retention_every | 3600 s between `epigraph serve`'s retention passes (0: none) |
| EPIGRAPH_REDACT | redact | false (true: personal data replaced at the door, ``IngestOptions.redact``) |
| EPIGRAPH_REDACT_KEY | redact_key | unset: originals dropped (set: sealed by this key, ``privacy.vault``) |

API keys (:func:`api_keys`) are ``KEY=GROUP,GROUP`` entries (``*``: every group), separated by ``;`` in
``EPIGRAPH_API_KEYS`` or one per line in the file (``#`` starts a comment); both sources add up.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from .errors import ConfigError

StructuredMode = Literal["json_schema", "json_object", "none"]
EmbedderKind = Literal["sentence-transformers", "openai", "hash"]

_PREFIX = "EPIGRAPH_"


class Settings(BaseModel):
    """All configuration, immutable. Build it in code or with :meth:`from_env`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    db_path: str = "./epigraph.db"
    db_create: bool = True
    group_id: str = "default"
    author: str | None = None

    neo4j_uri: str | None = None
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr | None = None
    neo4j_database: str = "neo4j"
    exact_below: int = Field(default=50_000, ge=1)
    """The embedded store: a group with this many vectors of a kind or more is searched through an
    approximate index (``graph.embedded.ann``; ``epigraph index`` builds and saves it), fewer exactly."""

    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm_model: str | None = None
    llm_small_model: str | None = None
    llm_temperature: float = 0.0
    llm_max_tokens: int = 4096
    llm_timeout: float = 60.0
    llm_structured: StructuredMode = "json_schema"
    llm_max_in_flight: int = 8
    llm_rpm: int = 0
    llm_tpm: int = 0
    llm_max_attempts: int = 5
    llm_max_retry_seconds: float = 120.0
    llm_local: bool = False
    local_model_dir: str | None = None
    local_model_ctx: int = 8192
    local_model_threads: int = 0
    local_model_slots: int = 1
    local_model_runtime: Literal["auto", "wheel"] = "auto"

    embedder: EmbedderKind = "sentence-transformers"
    embed_base_url: str | None = None
    embed_api_key: SecretStr | None = None
    embed_model: str = "all-MiniLM-L6-v2"
    embed_dim: int = 384

    api_keys: SecretStr | None = None
    api_keys_file: str | None = None
    api_key: SecretStr | None = None

    kafka_bootstrap: str | None = None
    kafka_topic: str = "epigraph.episodes"

    redact: bool = False
    """Personal data replaced at the door (``IngestOptions.redact``), whatever the options say."""
    redact_key: SecretStr | None = None
    """The redaction vault's key (``privacy.vault.new_key``): the originals are kept sealed by it."""

    claim_seconds: float = Field(default=60.0, gt=0)
    """How long a process's claim on the episode it ingests lasts unless renewed (every third of it):
    the longest another process waits to take over an episode of a process that crashed."""

    decisions_days: float | None = Field(default=None, gt=0)
    """How long decision records are kept (``graph.decisions``; ``RecordOptions.days`` when the options
    leave it unset): each episode's write deletes its group's records older than this many days. Unset:
    kept as long as their episodes."""

    in_flight: int | None = Field(default=None, ge=1)
    """Episodes of one group in flight at once (``IngestOptions.in_flight``) for every door of this
    process (library, CLI, server, worker) when the options are not given; None: their default."""

    tracing: bool = False
    """OpenTelemetry spans of episodes, stages and model calls (``epigraph.tracing``, the ``otel`` extra)."""

    webhook_urls: SecretStr | None = None
    """Where ``episode.done`` / ``episode.failed`` are posted (``epigraph.webhooks``): http(s) URLs
    separated by commas or spaces; a secret, as a URL may carry a token."""
    webhook_secret: SecretStr | None = None
    """The key of each delivery's HMAC-SHA256 signature (required with ``webhook_urls``)."""
    webhook_events: str = "episode.done,episode.failed"
    webhook_attempts: int = Field(default=5, ge=1, le=20)
    """Tries per delivery (the first included); then it is a dead letter, counted."""
    webhook_backoff: float = Field(default=1.0, gt=0, le=300)
    """Seconds before the second try, doubled before each next one (at most 5 minutes)."""
    webhook_timeout: float = Field(default=10.0, gt=0)
    webhook_queue: int = Field(default=1000, ge=1)
    """Deliveries waiting or in flight at most; one more is a dead letter (ingestion never waits)."""
    retention_every: float = Field(default=3600.0, ge=0)
    """Seconds between the retention passes of ``epigraph serve`` (each group's policy applied:
    ``forget.retention``); 0: no pass (``epigraph retention apply`` still runs one on demand)."""

    @property
    def store_kind(self) -> Literal["embedded", "neo4j"]:
        return "neo4j" if self.neo4j_uri else "embedded"

    @property
    def local_model_cache(self) -> Path:
        """Where the local model's weights and server state live (``local_model_dir`` or the default)."""
        if self.local_model_dir:
            return Path(self.local_model_dir).expanduser()
        return Path.home() / ".cache" / "epigraph" / "models"

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_base_url or self.llm_api_key) and bool(self.llm_model)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        """Read ``EPIGRAPH_*`` variables (``environ`` defaults to ``os.environ``); ``overrides`` win."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for name in cls.model_fields:
            raw = env.get(_PREFIX + name.upper())
            if raw is not None and raw != "":
                values[name] = raw
        for alias, name in (("EPIGRAPH_DB", "db_path"), ("EPIGRAPH_GROUP", "group_id")):
            if env.get(alias):
                values[name] = env[alias]
        if chosen := env.get("EPIGRAPH_LLM"):
            if chosen.strip().lower() != "local":
                raise ConfigError(f"invalid settings: EPIGRAPH_LLM: 'local' or unset, not {chosen!r}")
            values["llm_local"] = True
        values.update({k: v for k, v in overrides.items() if v is not None})
        try:
            return cls(**values)  # type: ignore[arg-type]
        except ValidationError as exc:
            problems = "; ".join(
                f"{_PREFIX}{str(err['loc'][0]).upper()}: {err['msg']}" for err in exc.errors()
            )
            raise ConfigError(f"invalid settings: {problems}") from None


def api_keys(settings: Settings) -> dict[str, frozenset[str]]:
    """The API keys of the server (``epigraph serve``/``mcp``) and the groups each may use (``*``: all).

    Read from ``settings.api_keys`` and the file ``settings.api_keys_file``; errors name the source and
    the entry number, never the key."""
    sources: list[tuple[str, list[str]]] = []
    if settings.api_keys is not None:
        sources.append(("EPIGRAPH_API_KEYS", settings.api_keys.get_secret_value().split(";")))
    if settings.api_keys_file:
        try:
            text = Path(settings.api_keys_file).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"EPIGRAPH_API_KEYS_FILE: cannot read {settings.api_keys_file}: "
                              f"{exc.strerror}") from None  # fmt: skip
        sources.append((settings.api_keys_file, text.splitlines()))
    keys: dict[str, frozenset[str]] = {}
    for source, entries in sources:
        for number, entry in enumerate(entries, 1):
            entry = entry.split("#", 1)[0].strip() if source != "EPIGRAPH_API_KEYS" else entry.strip()
            if not entry:
                continue
            key, _, groups = entry.partition("=")
            names = frozenset(g.strip() for g in groups.split(",") if g.strip())
            if not key.strip() or not names:
                raise ConfigError(f"{source}: entry {number} is not KEY=GROUP[,GROUP...]")
            keys[key.strip()] = keys.get(key.strip(), frozenset()) | names
    return keys


def child_environment(**changes: str) -> dict[str, str]:
    """This process's environment with ``changes``, for a child process (the local model's server, a
    compiler run): the one place besides :meth:`Settings.from_env` that reads ``os.environ``."""
    return {**os.environ, **changes}
