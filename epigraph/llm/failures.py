"""What a failed call to a model endpoint means: a :class:`Failure` (its retry kind, the wait the server
asked for, a short detail with no secret in it), the typed ``LLMError`` it ends as, and the mapping of
the ``openai`` SDK's exceptions to it. Shared by every client of an OpenAI-compatible endpoint (chat,
embeddings), so they retry the same things the same way under
:func:`~epigraph.llm.limiter.run_with_retries`."""

from __future__ import annotations

import email.utils
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal
from urllib.parse import urlsplit

import openai

from ..errors import LLMError, LLMRequestRejected, LLMTimeout, LLMUnavailable, RateLimited
from .profiles import error_text

FailureKind = Literal["rate_limited", "timeout", "unavailable", "rejected", "unexpected", "fallback"]
"""``unexpected``: an exception nobody anticipated (a bug, a broken server reply); not retried."""
_ERROR_TYPES: dict[FailureKind, type[LLMError]] = {
    "rate_limited": RateLimited,
    "timeout": LLMTimeout,
    "unavailable": LLMUnavailable,
    "rejected": LLMRequestRejected,
    "unexpected": LLMUnavailable,
}


@dataclass(frozen=True, slots=True)
class Failure:
    """A classified failed attempt. ``detail`` must already be free of secrets."""

    kind: FailureKind
    detail: str
    retry_after: float | None = None
    """Seconds the server asked us to wait (``Retry-After`` / ``retry-after-ms``), if it said."""
    chain: bool = False
    """Keep the original exception as ``__cause__`` (unexpected errors: the traceback matters). Off for
    API errors, whose text may echo credentials and is already summarized in ``detail``."""

    @property
    def retryable(self) -> bool:
        return self.kind in ("rate_limited", "timeout", "unavailable")


def typed_error(failure: Failure, message: str, attempts: int) -> LLMError:
    """The ``LLMError`` subtype for a failure kind (a stray ``fallback`` counts as unavailable)."""
    return _ERROR_TYPES.get(failure.kind, LLMUnavailable)(message, attempts=attempts)


def parse_retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds to wait per ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date); None if absent."""
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


_SECRET_PATTERNS = (re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-*.]{6,}"), re.compile(r"(?i)bearer\s+\S+"))
DETAIL_LIMIT = 300


def redact(text: str, secret: str = "") -> str:
    """``text`` without ``secret`` and without anything shaped like an API key or bearer token."""
    if secret and len(secret) >= 4:
        text = text.replace(secret, "[redacted]")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub("[redacted]", text)
    return text


def classify_openai_error(exc: Exception, *, secret: str = "", timeout: float | None = None) -> Failure:
    """Map a failure of one ``openai`` SDK call to a retry kind, with a short, redacted detail.

    Shared by every client of an OpenAI-compatible endpoint (chat, embeddings) so that they retry the
    same things the same way under :func:`~epigraph.llm.limiter.run_with_retries`.
    """
    if isinstance(exc, openai.APIStatusError):
        return _status_failure(exc, secret)
    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        within = f" within the {timeout:g} s timeout" if timeout is not None else ""
        return Failure("timeout", f"no answer{within}")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        reason = f"{type(cause).__name__}: {cause}" if cause else str(exc)
        return Failure("unavailable", redact(f"connection failed ({reason})", secret)[:DETAIL_LIMIT])
    if isinstance(exc, openai.APIError | OSError | json.JSONDecodeError):
        return Failure("unavailable", redact(f"{type(exc).__name__}: {exc}", secret)[:DETAIL_LIMIT])
    if isinstance(exc, LLMError):
        return Failure("unavailable", str(exc))
    detail = redact(f"unexpected {type(exc).__name__}: {exc}", secret)[:DETAIL_LIMIT]
    return Failure("unexpected", detail, chain=True)


def _status_failure(exc: openai.APIStatusError, secret: str) -> Failure:
    status = exc.status_code
    text = redact(error_text(exc.body, exc.message), secret)[:DETAIL_LIMIT]
    detail = f"HTTP {status}: {text}"
    retry_after = parse_retry_after(exc.response.headers)
    if status == 429 and "insufficient_quota" not in text:
        return Failure("rate_limited", detail, retry_after)
    if status == 408:
        return Failure("timeout", detail, retry_after)
    if status == 409 or status >= 500:
        return Failure("unavailable", detail, retry_after)
    hint = {401: "check the API key", 403: "check the API key's permissions", 404: "check the model name"}
    return Failure("rejected", f"{detail} ({hint[status]})" if status in hint else detail)


def public_url(url: str) -> str:
    """``url`` without credentials, query or fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else url
