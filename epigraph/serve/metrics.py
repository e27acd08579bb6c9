"""Prometheus metrics of the server at ``GET /metrics`` (the text exposition of ``prometheus-client``, in
the ``serve`` extra): what the server's queue ran, what is waiting, what the model calls cost, how the
routes answer and how the webhooks fare. A registry per app (never the process's default one).

Counted as it happens (this module's middleware): ``epigraph_http_requests_total{route,method,status}``
and ``epigraph_http_request_duration_seconds{route,method}`` (a histogram; ``route`` is the route's
template, e.g. ``/v1/groups/{group_id}/search``, so ids never become labels). Read when scraped:

- ``epigraph_episodes_total{status}``: episodes this server's queue ran to ``done`` or ``failed``;
- ``epigraph_queue_depth``: episodes accepted and not yet run (``Intake.queue_depth``);
- ``epigraph_model_calls_total{prompt,outcome}``, ``epigraph_model_tokens_total{prompt,type}``
  (``input``/``output``), ``epigraph_model_retries_total{prompt}`` and
  ``epigraph_model_call_duration_seconds{prompt}`` (a histogram): the model client's calls
  (``OpenAIChat.calls``; absent for another ``LLM``);
- ``epigraph_webhook_deliveries_total``, ``epigraph_webhook_retries_total``,
  ``epigraph_webhook_dead_letters_total`` and ``epigraph_webhook_outstanding`` (with webhooks).

With API keys configured, ``/metrics`` takes a key that may use every group (``*``): the counts are the
server's, across groups.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..llm import OpenAIChat
from ..llm.calls import BUCKETS
from .intake import Intake

__all__ = ["CONTENT_TYPE_LATEST", "HttpMetrics", "ServerMetrics"]


class ServerMetrics:
    """The app's registry: the HTTP counts recorded by :class:`HttpMetrics`, the rest read at scrape."""

    def __init__(self, intake: Intake) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.requests = Counter(
            "epigraph_http_requests", "HTTP requests answered", ["route", "method", "status"],
            registry=self.registry,
        )  # fmt: skip
        self.latency = Histogram(
            "epigraph_http_request_duration_seconds", "time to answer (a stream: until it ended)",
            ["route", "method"], registry=self.registry,
        )  # fmt: skip
        self.registry.register(_Scraped(intake))

    def text(self) -> bytes:
        return bytes(generate_latest(self.registry))


class _Scraped:
    """What is read when scraped: the queue's counts, the model calls, the webhooks."""

    def __init__(self, intake: Intake) -> None:
        self.intake = intake

    def collect(self) -> Iterator[Metric]:
        episodes = CounterMetricFamily("epigraph_episodes", "episodes run to an end here", labels=["status"])
        for status, count in sorted(self.intake.finished.items()):
            episodes.add_metric([status], count)
        yield episodes
        yield GaugeMetricFamily("epigraph_queue_depth", "episodes accepted, not run yet",
                                value=self.intake.queue_depth)  # fmt: skip
        llm = self.intake.kg.llm
        if isinstance(llm, OpenAIChat):
            yield from _model_calls(llm)
        hooks = self.intake.kg.webhooks
        if hooks is not None:
            stats = hooks.stats
            delivered = stats.delivered
            yield CounterMetricFamily("epigraph_webhook_deliveries", "webhooks delivered", value=delivered)
            yield CounterMetricFamily("epigraph_webhook_retries", "webhook tries after a failed one",
                                      value=stats.retries)  # fmt: skip
            yield CounterMetricFamily("epigraph_webhook_dead_letters", "webhook deliveries given up",
                                      value=stats.dead_letters)  # fmt: skip
            yield GaugeMetricFamily("epigraph_webhook_outstanding", "webhook deliveries waiting or in flight",
                                    value=stats.outstanding)  # fmt: skip


def _model_calls(llm: OpenAIChat) -> Iterator[Metric]:
    calls = CounterMetricFamily("epigraph_model_calls", "model calls", labels=["prompt", "outcome"])
    tokens = CounterMetricFamily("epigraph_model_tokens", "model tokens", labels=["prompt", "type"])
    retries = CounterMetricFamily("epigraph_model_retries", "model HTTP attempts after the first",
                                  labels=["prompt"])  # fmt: skip
    latency = HistogramMetricFamily("epigraph_model_call_duration_seconds", "a model call's time",
                                    labels=["prompt"])  # fmt: skip
    for prompt, counted in sorted(llm.calls.snapshot().items()):
        for outcome, count in sorted(counted.outcomes.items()):
            calls.add_metric([prompt, outcome], count)
        tokens.add_metric([prompt, "input"], counted.input_tokens)
        tokens.add_metric([prompt, "output"], counted.output_tokens)
        retries.add_metric([prompt], counted.retries)
        cumulative, buckets = 0, []
        for bound, count in zip([*map(str, BUCKETS), "+Inf"], counted.buckets, strict=True):
            cumulative += count
            buckets.append((bound, float(cumulative)))
        latency.add_metric([prompt], buckets, counted.seconds)
    yield from (calls, tokens, retries, latency)


class HttpMetrics:
    """ASGI middleware counting each HTTP request by route template, method and status, and timing it
    (a streamed response until its last byte)."""

    def __init__(self, app: ASGIApp, metrics: ServerMetrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), [500]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route, method = _route(scope), str(scope.get("method", ""))
            self.metrics.requests.labels(route, method, str(status[0])).inc()
            self.metrics.latency.labels(route, method).observe(time.perf_counter() - started)


def _route(scope: Scope) -> str:
    """The matched route's whole template (``/v1/groups/{group_id}/search``), or ``unmatched``. The route
    knows its template below the prefix it was included with (``/v1``): the prefix is what the path has
    before the template filled with the request's path parameters."""
    route: Any = scope.get("route")
    template = getattr(route, "path", None)
    if not isinstance(template, str):
        return "unmatched"
    params = scope.get("path_params", {})
    filled = _PARAM.sub(lambda m: str(params.get(m.group(1), m.group(0))), template)
    path = str(scope.get("path", ""))
    return path[: len(path) - len(filled)] + template if path.endswith(filled) else template


_PARAM = re.compile(r"\{([^}:]+)(?::[^}]*)?\}")
