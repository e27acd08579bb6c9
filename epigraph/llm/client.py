"""The LLM client: :class:`OpenAIChat` implements ``prompts.protocol.LLM`` over ``openai.AsyncOpenAI``.

Any OpenAI-compatible endpoint works (OpenAI, Azure, vLLM, Ollama, LM Studio, llama.cpp server). The
SDK's own retries are off: every HTTP attempt goes through the client's one shared
:class:`~epigraph.llm.limiter.Limiter` and the bounded retry loop, so concurrency, RPM, TPM and 429
pauses hold across every caller. What the endpoint supports (JSON schema, JSON object, stream usage)
comes from an :class:`~epigraph.llm.profiles.EndpointProfile`; a 400 on a capability steps the profile
down once per step and the client remembers the weaker profile.

Bound: ``complete`` returns or raises ONE ``LLMError`` subtype within about ``max_retry_seconds`` plus
one request ``timeout`` (plus queueing for a limiter slot); ``stream`` ends with one ``done`` chunk
carrying usage, or the error. Error messages carry the attempt count and never the API key.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import replace
from typing import Any, cast

import httpx
import openai
from pydantic import SecretStr

from .. import tracing
from ..config import Settings
from ..errors import ConfigError, LLMError
from ..prompts.protocol import ChatRequest, Completion, StreamChunk, Usage
from ..tokens import aload_encoding, count_message_tokens, estimate_usage
from .calls import CallStats
from .failures import DETAIL_LIMIT, Failure, classify_openai_error, public_url, redact
from .limiter import Limiter, LimiterStats, RetryPolicy, Slot, run_with_retries
from .profiles import (
    EndpointProfile,
    error_text,
    mentions_response_format,
    mentions_stream_options,
    strip_think,
)
from .stream import StreamSession

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_NO_KEY = "not-needed"  # local servers ignore the key, but the SDK insists on one


class _Fallback(Exception):
    """An attempt hit a 400 on a capability: retry at once with ``profile``, which lacks it."""

    def __init__(self, profile: EndpointProfile, detail: str) -> None:
        super().__init__(detail)
        self.profile = profile


class OpenAIChat:
    """``LLM`` over the OpenAI chat completions API. Use as an async context manager, or ``aclose()``.

    ``limiter`` may be shared with other clients of the same endpoint (e.g. the embedder); by default
    the client owns one. ``http_client`` (an ``httpx.AsyncClient``, e.g. with a custom transport) is
    used as given and left open on close: its owner closes it.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | SecretStr | None = None,
        small_model: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 4096,
        timeout: float = 60.0,
        profile: EndpointProfile | None = None,
        limiter: Limiter | None = None,
        retry: RetryPolicy | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        secret = api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key
        self._secret = secret or ""
        self.model, self.small_model = model, small_model
        self.temperature, self.max_tokens, self.timeout = temperature, max_tokens, timeout
        self.base_url = base_url or DEFAULT_BASE_URL
        self._profile = profile or EndpointProfile()
        self.limiter = limiter or Limiter()
        self.retry = retry or RetryPolicy()
        self.calls = CallStats()
        """Every call's outcome, tokens, retries and latency, per prompt (``epigraph serve``'s metrics)."""
        self._owns_http = http_client is None
        # base_url and api_key are always explicit, so the SDK never falls back to OPENAI_* variables.
        self._sdk = openai.AsyncOpenAI(
            api_key=self._secret or _NO_KEY,
            base_url=self.base_url,
            timeout=timeout,
            max_retries=0,
            # httpx.AsyncClient (and the SDK's own httpx2 client) are both accepted at run time.
            http_client=cast(Any, http_client),
        )

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        http_client: httpx.AsyncClient | None = None,
        *,
        limiter: Limiter | None = None,
        retry: RetryPolicy | None = None,
        profile: EndpointProfile | None = None,
    ) -> OpenAIChat:
        """The client the settings describe; ``limiter``/``retry``/``profile`` override the derived ones."""
        if not settings.llm_configured or settings.llm_model is None:
            raise ConfigError(
                "no LLM configured: set EPIGRAPH_LLM_MODEL and EPIGRAPH_LLM_BASE_URL or EPIGRAPH_LLM_API_KEY"
            )
        return cls(
            model=settings.llm_model,
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key,
            small_model=settings.llm_small_model,
            temperature=settings.llm_temperature,
            max_tokens=settings.llm_max_tokens,
            timeout=settings.llm_timeout,
            profile=profile or EndpointProfile.from_settings(settings),
            limiter=limiter or Limiter.from_settings(settings),
            retry=retry or RetryPolicy.from_settings(settings),
            http_client=http_client,
        )

    async def __aenter__(self) -> OpenAIChat:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_http:
            await self._sdk.close()

    @property
    def profile(self) -> EndpointProfile:
        """The current profile: the configured one, or weaker after the server rejected a capability."""
        return self._profile

    @property
    def stats(self) -> LimiterStats:
        return self.limiter.stats

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIChat(model={self.model!r}, base_url={public_url(self.base_url)!r})"

    # -- complete -------------------------------------------------------------------------------

    async def complete(self, request: ChatRequest) -> Completion:
        started = time.monotonic()
        span = self._span(request)
        try:
            completion = await self._complete(request, started)
        except BaseException as exc:
            self._ended(request, span, started, error=exc)
            raise
        self._ended(request, span, started, usage=completion.usage, finish=completion.finish_reason,
                    model=completion.model, attempts=completion.attempts)  # fmt: skip
        return completion

    async def _complete(self, request: ChatRequest, started: float) -> Completion:
        estimate = await self._estimate_tokens(request)
        trial = self._profile

        async def attempt(number: int) -> tuple[Any, Usage, EndpointProfile]:
            nonlocal trial
            profile = trial
            async with self.limiter.slot(estimate) as slot:
                try:
                    response = await self._create(request, profile, slot, stream=False)
                except _Fallback as fallback:
                    trial = fallback.profile
                    raise
                usage = await self._usage(response.usage, request, _message_text(response))
                slot.settle(usage.input_tokens + usage.output_tokens)
            return response, usage, profile

        (response, usage, used), attempts = await run_with_retries(
            attempt, self._classify, limiter=self.limiter, policy=self.retry, what=self._what(request)
        )
        self._adopt(used)
        text = _message_text(response)
        choice = response.choices[0] if response.choices else None
        return Completion(
            text=strip_think(text) if used.strip_think else text,
            usage=usage,
            finish_reason=(choice.finish_reason if choice else None) or "stop",
            model=response.model or self._model_for(request),
            latency_s=time.monotonic() - started,
            attempts=attempts,
        )

    # -- stream ---------------------------------------------------------------------------------

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamChunk]:
        """Text chunks as they arrive, then one ``done`` chunk (usage + finish_reason, or ``error``).

        Failures before the first chunk is yielded are retried like ``complete``; after that, a failure
        becomes the final chunk. Iterate to the end (or ``aclose()`` the iterator) to free the slot.
        """
        started = time.monotonic()
        span = self._span(request)
        session: StreamSession | None = None
        last = StreamChunk()
        try:
            try:
                session, attempts = await self._open_stream(request)
            except LLMError as error:
                last = StreamChunk(
                    done=True, error=error, attempts=error.attempts, latency_s=time.monotonic() - started
                )
                yield last
                return
            chunks = session.chunks(attempts, started, self._classify, self._what(request))
            async with aclosing(chunks):
                async for chunk in chunks:
                    last = chunk
                    yield chunk
        finally:
            if session is not None:
                await session.close()
            self._stream_ended(request, span, started, last)

    async def _open_stream(self, request: ChatRequest) -> tuple[StreamSession, int]:
        estimate = await self._estimate_tokens(request)
        trial = self._profile

        async def attempt(number: int) -> StreamSession:
            nonlocal trial
            profile = trial
            session = StreamSession(request, profile, self._usage, self.limiter, estimate)
            try:
                await session.enter_slot()
                try:
                    sdk_stream = await self._create(request, profile, session.slot, stream=True)
                except _Fallback as fallback:
                    trial = fallback.profile
                    raise
                await session.start(sdk_stream)
            except BaseException:
                await session.close()
                raise
            return session

        session, attempts = await run_with_retries(
            attempt, self._classify, limiter=self.limiter, policy=self.retry, what=self._what(request)
        )
        self._adopt(session.profile)
        return session, attempts

    # -- what a call came to: its span and counts ------------------------------------------------

    def _span(self, request: ChatRequest) -> tracing.Span:
        temperature = self.temperature if request.temperature is None else request.temperature
        return tracing.model_call(
            model=self._model_for(request), base_url=self.base_url, prompt=request.prompt_name,
            max_tokens=self._max_tokens(request), temperature=temperature,
            output="text" if request.response_type in ("text", "lines") else "json",
        )  # fmt: skip

    def _ended(
        self,
        request: ChatRequest,
        span: tracing.Span,
        started: float,
        *,
        usage: Usage | None = None,
        finish: str | None = None,
        model: str = "",
        attempts: int = 1,
        error: BaseException | None = None,
        outcome: str = "ok",
    ) -> None:
        """Count the call (``calls``) and end its span: ok, or failed with ``error``."""
        if error is not None:
            attempts = getattr(error, "attempts", attempts)
            outcome = type(error).__name__
            span.fail(outcome, self._redact(str(error)))
        tokens = usage or Usage()
        tracing.model_reply(span, input_tokens=tokens.input_tokens, output_tokens=tokens.output_tokens,
                            finish_reason=finish, model=model or self._model_for(request),
                            attempts=attempts)  # fmt: skip
        span.end()
        seconds = time.monotonic() - started
        self.calls.record(
            request.prompt_name, seconds=seconds, attempts=attempts, outcome=outcome, usage=usage
        )

    def _stream_ended(
        self, request: ChatRequest, span: tracing.Span, started: float, last: StreamChunk
    ) -> None:
        """A stream's end: its last chunk says how (an error, a finish), or the reader closed it early."""
        if last.done and last.error is not None:
            self._ended(request, span, started, error=last.error)
        elif last.done:
            self._ended(request, span, started, usage=last.usage, finish=last.finish_reason,
                        attempts=last.attempts)  # fmt: skip
        else:
            self._ended(request, span, started, attempts=last.attempts, outcome="closed")

    # -- helpers --------------------------------------------------------------------------------

    def _model_for(self, request: ChatRequest) -> str:
        return self.small_model if request.small and self.small_model else self.model

    def _params(
        self, request: ChatRequest, profile: EndpointProfile, *, stream: bool = False
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self._model_for(request),
            "messages": [dict(m) for m in request.messages],
            "temperature": self.temperature if request.temperature is None else request.temperature,
            profile.max_tokens_field: self._max_tokens(request),
        }
        response_format = profile.response_format(request)
        if response_format is not None:
            params["response_format"] = response_format
        if profile.grammar and request.grammar and response_format is None:
            params["extra_body"] = {"grammar": request.grammar}
        if stream:
            params["stream"] = True
            if profile.stream_usage:
                params["stream_options"] = {"include_usage": True}
        return params

    def _max_tokens(self, request: ChatRequest) -> int:
        """The request's own cap (sized to its prompt and input), never above the client's maximum."""
        if request.max_tokens is None:
            return self.max_tokens
        return max(1, min(request.max_tokens, self.max_tokens))

    async def _create(
        self, request: ChatRequest, profile: EndpointProfile, slot: Slot, *, stream: bool
    ) -> Any:
        """One SDK call; its answer's rate-limit headers go to the limiter (``slot.observe``), success or
        not; a 400 on a capability the request used raises ``_Fallback`` (weaker profile)."""
        params = self._params(request, profile, stream=stream)
        try:
            raw = await self._sdk.chat.completions.with_raw_response.create(**params)
        except openai.APIStatusError as exc:
            slot.observe(exc.response.headers)
            if isinstance(exc, openai.BadRequestError):
                self._fallback_for(exc, request, profile, stream=stream)
            raise
        slot.observe(raw.headers)
        return raw.parse()

    def _fallback_for(
        self, exc: openai.BadRequestError, request: ChatRequest, profile: EndpointProfile, *, stream: bool
    ) -> None:
        """Raise ``_Fallback`` when the 400 names a capability the request used; else return."""
        text = error_text(exc.body, exc.message)
        weaker: EndpointProfile | None = None
        if stream and profile.stream_usage and mentions_stream_options(text):
            weaker = profile.without_stream_usage()
        elif profile.grammar and request.grammar and "grammar" in text.lower():
            weaker = replace(profile, grammar=False)
        elif profile.response_format(request) is not None and mentions_response_format(text):
            weaker = profile.weaker_format_for(request)
        if weaker is None:
            return
        detail = f"HTTP 400 on a capability, retrying with {weaker.describe(request)}: {self._redact(text)}"
        raise _Fallback(weaker, detail[:DETAIL_LIMIT]) from None

    def _adopt(self, used: EndpointProfile) -> None:
        """Remember a weaker profile that just worked, so later calls skip the rejected capability."""
        if used != self._profile:
            self._profile = replace(
                self._profile.weakest_with(used), grammar=self._profile.grammar and used.grammar
            )

    async def _estimate_tokens(self, request: ChatRequest) -> int:
        """What a tokens-per-minute window charges the request: its input, as the larger of the local BPE
        count and its characters / 4 (OpenAI's limiter estimates from the characters, which for English
        prompts is about a tenth more than the BPE count), plus its output cap. Counted even without a
        configured window: the provider's headers may teach one."""
        await aload_encoding()
        characters = sum(len(m.get("content") or "") for m in request.messages)
        prompt = max(count_message_tokens(request.messages), -(-characters // 4))
        return prompt + self._max_tokens(request)

    async def _usage(self, raw: Any, request: ChatRequest, output_text: str) -> Usage:
        """The server's usage, or a local BPE count (``estimated=True``) when it sent none."""
        prompt = getattr(raw, "prompt_tokens", None) or 0
        completion = getattr(raw, "completion_tokens", None) or 0
        if raw is not None and (prompt or completion):
            return Usage(int(prompt), int(completion), cached_input_tokens=_cached_tokens(raw))
        await aload_encoding()
        return estimate_usage(request.messages, output_text)

    def _what(self, request: ChatRequest) -> str:
        name = f" {request.prompt_name!r}" if request.prompt_name else ""
        return f"LLM call{name} (model {self._model_for(request)!r} at {public_url(self.base_url)})"

    def _redact(self, text: str) -> str:
        return redact(text, self._secret)

    def _classify(self, exc: Exception) -> Failure:
        if isinstance(exc, _Fallback):
            return Failure("fallback", str(exc))
        return classify_openai_error(exc, secret=self._secret, timeout=self.timeout)


def _cached_tokens(usage: Any) -> int:
    """Prompt tokens the server took from its cache, when its usage block says so (OpenAI's
    ``prompt_tokens_details.cached_tokens``; llama.cpp reports it there too)."""
    details = getattr(usage, "prompt_tokens_details", None)
    if isinstance(details, dict):
        cached = details.get("cached_tokens")
    else:
        cached = getattr(details, "cached_tokens", None)
    return int(cached) if isinstance(cached, int | float) else 0


def _message_text(response: Any) -> str:
    if not response.choices:
        return ""
    return response.choices[0].message.content or ""
