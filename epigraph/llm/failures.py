"""What a failed call to an OpenAI-compatible endpoint means: its retry kind (``limiter.Failure``) and
a short detail with no secret in it. Shared by every client of such an endpoint (chat, embeddings), so
they retry the same things the same way under :func:`~epigraph.llm.limiter.run_with_retries`."""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import openai

from ..errors import LLMError
from .limiter import Failure, parse_retry_after
from .profiles import error_text

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
