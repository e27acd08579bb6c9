"""OpenTelemetry spans of what epigraph does: an episode's run, each of its stages, each model call.

Off by default, and then nothing here imports OpenTelemetry (installed or not): every function is a
no-op. :func:`enable` (``EPIGRAPH_TRACING=true``: ``KnowledgeGraph`` calls it) turns it on with the
``otel`` extra (``pip install 'epigraph[otel]'``: opentelemetry-api and -sdk); without the extra it
raises :class:`~epigraph.errors.ConfigError` saying so. Spans go to the tracer provider given, or the
process's global one (which the application configures with the SDK, e.g. an OTLP exporter, or
``opentelemetry-instrument``).

The spans (all children of whatever span is current when an episode starts):

- ``ingest episode`` (INTERNAL): ``epigraph.group_id``, ``epigraph.episode.uuid``, its status, model
  calls and tokens; an error status with the reason when the episode failed;
- ``stage <name>`` (INTERNAL), one per timed stage of the report (``IngestReport.stage_ms``: context,
  extract_entities, extract_facts, resolve_entities, resolve_facts, summaries, ...), recorded when the
  stage ends with its measured start;
- ``chat <model>`` (CLIENT), one per model call of the OpenAI-compatible client, and ``embeddings
  <model>`` per request of the OpenAI-compatible embedder (``EPIGRAPH_EMBEDDER=openai``), on the GenAI
  semantic conventions: ``gen_ai.operation.name`` (``chat``), ``gen_ai.provider.name`` (``openai``: the API
  spoken; ``gen_ai.system`` too, its name before v1.37), ``gen_ai.request.model``,
  ``gen_ai.request.max_tokens``, ``gen_ai.request.temperature``, ``gen_ai.response.model``,
  ``gen_ai.response.finish_reasons``, ``gen_ai.usage.input_tokens``, ``gen_ai.usage.output_tokens``,
  ``gen_ai.output.type``, ``server.address`` / ``server.port``, ``error.type`` on failure; and
  ``epigraph.prompt`` (which prompt) and ``epigraph.attempts`` (HTTP attempts, retries included).

No prompt or reply text is recorded (it is the user's data, and large).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from .errors import ConfigError
from .version import __version__

Attributes = Mapping[str, str | int | float | bool | list[str]]

_state: dict[str, Any] = {"tracer": None, "trace": None}


def enable(provider: Any = None) -> None:
    """Record spans from now on, to ``provider`` (an SDK ``TracerProvider``) or the global provider."""
    try:
        from opentelemetry import trace
    except ImportError:
        raise ConfigError(
            "tracing (EPIGRAPH_TRACING) needs OpenTelemetry: pip install 'epigraph[otel]'"
        ) from None
    _state["trace"] = trace
    _state["tracer"] = trace.get_tracer("epigraph", __version__, tracer_provider=provider)


def disable() -> None:
    """Record no spans (the default)."""
    _state["tracer"] = None


def enabled() -> bool:
    return _state["tracer"] is not None


class Span:
    """A span being recorded, or nothing (tracing off): set attributes, mark a failure, end it."""

    __slots__ = ("_span",)

    def __init__(self, span: Any = None) -> None:
        self._span = span

    def set(self, attributes: Attributes) -> None:
        if self._span is not None:
            self._span.set_attributes(dict(attributes))

    def fail(self, error_type: str, description: str = "") -> None:
        """The operation failed: ``error.type`` and an error status (the description, no secret)."""
        if self._span is not None:
            trace = _state["trace"]
            self._span.set_attribute("error.type", error_type)
            self._span.set_status(trace.Status(trace.StatusCode.ERROR, description[:300]))

    def end(self) -> None:
        if self._span is not None:
            self._span.end()
            self._span = None


@contextmanager
def current(name: str, attributes: Attributes) -> Iterator[Span]:
    """A span that is the current one inside the block (its children's parent): an episode's run."""
    tracer = _state["tracer"]
    if tracer is None:
        yield Span()
        return
    with tracer.start_as_current_span(name, attributes=dict(attributes), record_exception=False) as span:
        yield Span(span)


def recorded(name: str, started: float, attributes: Attributes) -> None:
    """A span that ended now and began at ``started`` (``time.perf_counter()``): a timed stage."""
    tracer = _state["tracer"]
    if tracer is None:
        return
    elapsed_ns = int((time.perf_counter() - started) * 1e9)
    end = time.time_ns()
    span = tracer.start_span(name, start_time=end - elapsed_ns, attributes=dict(attributes))
    span.end(end_time=end)


def model_call(
    *,
    model: str,
    base_url: str,
    prompt: str = "",
    operation: str = "chat",
    max_tokens: int | None = None,
    temperature: float | None = None,
    output: str | None = None,
) -> Span:
    """The CLIENT span of one model call (``chat`` or ``embeddings``; GenAI conventions, module
    docstring), started now; the caller sets its response attributes (:func:`model_reply`) or
    :meth:`Span.fail`, then ends it."""
    tracer = _state["tracer"]
    if tracer is None:
        return Span()
    trace = _state["trace"]
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    given = {
        "gen_ai.request.max_tokens": max_tokens,
        "gen_ai.request.temperature": temperature,
        "gen_ai.output.type": output,
        "epigraph.prompt": prompt or None,
    }
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": operation,
        "gen_ai.provider.name": "openai",
        "gen_ai.system": "openai",
        "gen_ai.request.model": model,
        "server.address": parts.hostname or "",
        "server.port": port,
        **{name: value for name, value in given.items() if value is not None},
    }
    kind = trace.SpanKind.CLIENT
    return Span(tracer.start_span(f"{operation} {model}", kind=kind, attributes=attributes))


def model_reply(
    span: Span,
    *,
    input_tokens: int,
    model: str,
    output_tokens: int | None = None,
    finish_reason: str | None = None,
    attempts: int | None = None,
) -> dict[str, Any]:
    """Set a finished call's response attributes on ``span`` (those given); returns them."""
    attributes: dict[str, Any] = {"gen_ai.usage.input_tokens": input_tokens, "gen_ai.response.model": model}
    if output_tokens is not None:
        attributes["gen_ai.usage.output_tokens"] = output_tokens
    if attempts is not None:
        attributes["epigraph.attempts"] = attempts
    if finish_reason:
        attributes["gen_ai.response.finish_reasons"] = [finish_reason]
    span.set(attributes)
    return attributes
