"""The prompt runtime: render a prompt, call the model, parse the reply by response type.

- ``text``: the reply as-is in ``result.value``.
- ``json``: think blocks, fences and surrounding prose are stripped, the first JSON value is parsed and
  validated into ``result.value``. On failure (not JSON, schema violation, or a reply cut by the token
  limit) the runtime re-asks ONCE, appending the model's reply and the reason; a second failure raises
  :class:`~epigraph.errors.StructuredOutputError` carrying the last raw reply and the usage of both calls.
- ``jsonl``: each line is validated on its own into ``result.items``; bad lines are dropped and listed
  in ``result.dropped``; a truncated or wholly invalid reply yields what was valid (never raises on
  content). ``result.truncated`` says the reply was cut short.

Bounds on runaway output: each call's output cap comes from the prompt's :class:`~.base.OutputShape`
and its input (the client's configured maximum stays the ceiling), and a ``jsonl`` prompt also carries
a grammar allowing only lines of its per-line schema, up to the shape's line bound (sent to endpoints
that accept one). A streamed ``jsonl`` reply is stopped (the stream closed, so the server stops
generating) when it repeats lines (``REPEAT_STOP`` repeated lines or objects), when one line grows past
any honest line's size, or when it runs past its token budget in characters (a server that ignores the
cap): the valid lines before stand, ``result.stopped`` says why, ``result.truncated`` is set and the
repeated or cut lines are in ``result.dropped``.

:func:`stream` runs a ``jsonl`` prompt over ``llm.stream`` and yields each item as soon as its line is
complete. A stream that fails part-way does NOT raise during iteration: the items already yielded stand,
the incomplete final line is dropped, and the error is kept on ``result.error`` (call
``result.raise_for_error()`` to turn it into an exception). Partial output stays usable, and the caller
decides whether partial is acceptable, exactly as with truncation. Errors raised before any reply (bad
input, template errors) are raised at once.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python

from ..errors import InputError, LLMError, StructuredOutputError, UsageError
from ..tokens import aload_encoding, estimate_usage
from .base import LineFormat, Prompt
from .grammar import jsonl_grammar
from .parsing import (
    DroppedLine,
    JsonlParser,
    LinesParser,
    ReplyError,
    parse_json_reply,
    parse_jsonl_reply,
    parse_lines_reply,
)
from .protocol import LLM, ChatRequest, Completion, Usage
from .render import output_adapter, output_schema, render

OutT = TypeVar("OutT")

_TRUNCATED = "truncated"
REPEAT_STOP = 1
"""Repeated lines after which a streamed jsonl or lines reply is stopped: a line a reply already holds
adds nothing, and a small model that repeats one has begun a loop that runs to its cap; the lines
before it stand."""
INVALID_STOP = 2
"""Unreadable lines after which a streamed ``lines`` reply is stopped (one may be a slip of a model
that takes no grammar; a model held by the grammar writes none)."""
_CHARS_PER_TOKEN_MAX = 6
"""A generous characters-per-token bound: a reply longer than its cap times this ignored the cap."""
_LINE_CHARS_PER_TOKEN = 12
_MIN_LINE_CHARS = 400


@dataclass(frozen=True)
class PromptResult(Generic[OutT]):
    """Everything one prompt run produced, including what went wrong short of an exception."""

    prompt_name: str
    value: Any = None
    """json: the validated Output; text: the reply str; jsonl: None (see ``items``)."""
    items: list[OutT] = field(default_factory=list)
    """jsonl: the valid items in reply order."""
    dropped: list[DroppedLine] = field(default_factory=list)
    truncated: bool = False
    """The (last) reply was cut short: by the token limit (``finish_reason == "length"``), or stopped by
    the runtime as a runaway (``stopped`` says why)."""
    usage: Usage = field(default_factory=Usage)
    """Summed over every call of this run (a json re-ask is a second call)."""
    calls: int = 0
    """Requests the runtime sent to the LLM (2 when a json reply was re-asked)."""
    attempts: int = 0
    """Transport attempts over those calls, as reported by the client (includes its retries)."""
    latency_s: float = 0.0
    raw: str = ""
    """The last reply text, unparsed."""
    finish_reason: str | None = None
    error: Exception | None = None
    """stream() only: the error that ended the stream early; ``items`` holds what came before it."""
    stopped: str | None = None
    """stream() only: why the runtime stopped reading a runaway reply (repeated lines, an overlong
    line, past the token budget); None when the reply ended by itself."""

    @property
    def complete(self) -> bool:
        """True when the reply ended normally: no stream error and no truncation."""
        return self.error is None and not self.truncated

    def raise_for_error(self) -> None:
        if self.error is not None:
            raise self.error


def _check_input(prompt: Prompt[Any, Any], data: Any) -> BaseModel:
    model: type[BaseModel] = prompt.input_model
    if isinstance(data, model):
        return data
    if isinstance(data, dict):
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise InputError(f"prompt {prompt.name!r}: invalid input: {exc}") from None
    raise UsageError(
        f"prompt {prompt.name!r} expects {prompt.input_model.__name__}, got {type(data).__name__}"
    )


def every_field(model: BaseModel) -> dict[str, Any]:
    """Every field of an input as plain data, those left out of the template (``exclude=True``)
    included: what accounting and scripted models read, while the template shows the rendered form."""
    return {
        **{name: to_jsonable_python(getattr(model, name)) for name in type(model).model_fields},
        **model.model_dump(mode="json"),
    }


def build_request(prompt: Prompt[Any, Any], data: Any) -> ChatRequest:
    """The request for one prompt call: rendered messages plus the metadata the client and fakes use."""
    model = _check_input(prompt, data)
    schema = output_schema(prompt)
    shape = prompt.shape
    grammar = None
    if prompt.response_type == "jsonl" and schema is not None:
        omit = prompt.grammar_omit(model) if prompt.grammar_omit else frozenset()
        grammar = jsonl_grammar(schema, shape.max_items(model) if shape else None, omit=omit)
    elif prompt.response_type == "lines":
        grammar = _line_format(prompt).grammar(model, shape.max_items(model) if shape else 64)
    return ChatRequest(
        messages=render(prompt, model),
        prompt_name=prompt.name,
        variables=every_field(model),
        response_type=prompt.response_type,
        json_schema=schema,
        max_tokens=shape.max_tokens(model) if shape else prompt.max_tokens,
        grammar=grammar,
        small=prompt.small,
    )


async def run(llm: LLM, prompt: Prompt[Any, OutT], data: Any) -> PromptResult[OutT]:
    """Run one prompt to completion. ``data`` is an ``Input`` instance (or a dict validated into one).

    Raises the client's ``LLMError`` when the call fails, :class:`StructuredOutputError` when a json
    reply stays invalid after the re-ask, and a ``UsageError`` for bad input or templates.
    """
    started = time.perf_counter()
    request = build_request(prompt, data)
    if prompt.response_type == "json":
        return await _run_json(llm, prompt, request, started)
    completion = await llm.complete(request)
    common = _common(prompt, [completion], started)
    if prompt.response_type == "text":
        return PromptResult(value=completion.text, **common)
    cut = _TRUNCATED if completion.truncated else None
    if prompt.response_type == "lines":
        decode = _decoder(prompt, _check_input(prompt, data))
        items, dropped = parse_lines_reply(completion.text, decode, cut_reason=cut)
    else:
        items, dropped = parse_jsonl_reply(completion.text, output_adapter(prompt), cut_reason=cut)
    return PromptResult(items=items, dropped=dropped, **common)


def _line_format(prompt: Prompt[Any, Any]) -> LineFormat:
    if prompt.lines is None:
        raise UsageError(f"prompt {prompt.name!r} (lines) declares no line format")
    return prompt.lines


def _decoder(prompt: Prompt[Any, Any], data: BaseModel) -> Callable[[str], list[Any]]:
    """The line decoder of a ``lines`` prompt, bound to the call's validated input."""
    line_format = _line_format(prompt)
    return lambda line: line_format.decode(line, data)


def _common(prompt: Prompt[Any, Any], completions: list[Completion], started: float) -> dict[str, Any]:
    last = completions[-1]
    return {
        "prompt_name": prompt.name,
        "truncated": last.truncated,
        "usage": sum((c.usage for c in completions), Usage()),
        "calls": len(completions),
        "attempts": sum(c.attempts for c in completions),
        "latency_s": time.perf_counter() - started,
        "raw": last.text,
        "finish_reason": last.finish_reason,
    }


async def _run_json(
    llm: LLM, prompt: Prompt[Any, OutT], request: ChatRequest, started: float
) -> PromptResult[OutT]:
    adapter = output_adapter(prompt)
    completions: list[Completion] = []
    for attempt in (1, 2):
        completion = await llm.complete(request)
        completions.append(completion)
        try:
            value = _parse_json_completion(completion, adapter)
        except ReplyError as exc:
            reason = str(exc)
            if attempt == 2:
                usage = sum((c.usage for c in completions), Usage())
                raise StructuredOutputError(
                    f"prompt {prompt.name!r}: reply unusable after a re-ask: {reason}",
                    raw=completion.text,
                    usage=usage,
                    attempts=len(completions),
                ) from None
            followup = _reask_messages(completion, reason)
            request = replace(request, messages=[*request.messages, *followup], reask=True)
            continue
        return PromptResult(value=value, **_common(prompt, completions, started))
    raise AssertionError("unreachable")  # pragma: no cover


def _parse_json_completion(completion: Completion, adapter: TypeAdapter[Any]) -> Any:
    if completion.truncated:
        raise ReplyError("the reply was cut off at the token limit before it was complete")
    return parse_json_reply(completion.text, adapter)


def _reask_messages(completion: Completion, reason: str) -> list[dict[str, str]]:
    if completion.truncated:
        ask = (
            "Your reply was cut off at the length limit. Reply again with a shorter answer: only the "
            "JSON value matching the schema, no reasoning, no prose, no fences."
        )
    else:
        ask = (
            f"Your reply could not be used: {reason}. Reply again with only the corrected JSON value "
            "matching the schema: no prose, no fences."
        )
    return [{"role": "assistant", "content": completion.text}, {"role": "user", "content": ask}]


class PromptStream(Generic[OutT]):
    """Async iterator over a prompt's items as they complete; ``.result`` once iteration ended.

    Iterate it once (``async for item in stream(llm, prompt, data)``). For ``jsonl`` prompts each
    validated line is yielded as soon as its newline arrives; for ``json`` and ``text`` prompts the run
    completes first and the single value is yielded once.
    """

    def __init__(self, llm: LLM, prompt: Prompt[Any, OutT], data: Any) -> None:
        self._llm, self._prompt = llm, prompt
        self._request = build_request(prompt, data)  # input and template errors surface here, at once
        self._data = data
        self._result: PromptResult[OutT] | None = None
        self._started = False

    @property
    def result(self) -> PromptResult[OutT]:
        if self._result is None:
            raise UsageError("PromptStream.result is available only after the stream was fully iterated")
        return self._result

    @property
    def done(self) -> bool:
        return self._result is not None

    def __aiter__(self) -> AsyncIterator[Any]:
        if self._started:
            raise UsageError("a PromptStream can be iterated only once")
        self._started = True
        if self._prompt.response_type in ("jsonl", "lines"):
            return self._jsonl()
        return self._once()

    async def _once(self) -> AsyncIterator[Any]:
        started = time.perf_counter()
        if self._prompt.response_type == "json":
            self._result = await _run_json(self._llm, self._prompt, self._request, started)
        else:
            completion = await self._llm.complete(self._request)
            self._result = PromptResult(value=completion.text, **_common(self._prompt, [completion], started))
        yield self._result.value

    async def _jsonl(self) -> AsyncIterator[OutT]:
        started = time.perf_counter()
        parser: JsonlParser[OutT] = (
            LinesParser(_decoder(self._prompt, _check_input(self._prompt, self._data)))
            if self._prompt.response_type == "lines"
            else JsonlParser(output_adapter(self._prompt))
        )
        guard = _RunawayGuard(self._prompt, self._request)
        raw: list[str] = []
        usage, finish_reason, error, attempts = Usage(), None, None, 1
        ended, stopped = False, None
        chunks = self._llm.stream(self._request)
        async with _closing(chunks):  # leaving early closes the stream: the server stops generating
            async for chunk in chunks:
                if chunk.text:
                    raw.append(chunk.text)
                    for item in parser.feed(chunk.text):
                        yield item
                    stopped = guard.check(parser, chunk.text)
                    if stopped is not None:
                        break
                if chunk.error is not None or chunk.done:
                    usage = chunk.usage or usage
                    finish_reason, error, attempts = chunk.finish_reason, chunk.error, chunk.attempts
                    ended = True
                    break
        if stopped is not None:  # no final chunk, so no usage from the server: count it here
            finish_reason, attempts = "stopped", 1
            await aload_encoding()
            usage = estimate_usage(self._request.messages, "".join(raw))
        elif not ended:
            error = LLMError(f"prompt {self._prompt.name!r}: the stream ended without a final chunk")
        truncated = finish_reason in ("length", "stopped")
        cut = _TRUNCATED if truncated else ("stream error" if error is not None else None)
        for item in parser.finish(cut_reason=cut):
            yield item
        self._result = PromptResult(
            prompt_name=self._prompt.name,
            items=parser.items,
            dropped=parser.dropped,
            truncated=truncated,
            usage=usage,
            calls=1,
            attempts=attempts,
            latency_s=time.perf_counter() - started,
            raw="".join(raw),
            finish_reason=finish_reason,
            error=error,
            stopped=stopped,
        )


class _RunawayGuard:
    """Decides when a streamed jsonl reply is a runaway worth cutting (see the module docstring)."""

    def __init__(self, prompt: Prompt[Any, Any], request: ChatRequest) -> None:
        per_item = prompt.shape.per_item if prompt.shape else None
        self.line_chars = max(_MIN_LINE_CHARS, (per_item or 0) * _LINE_CHARS_PER_TOKEN)
        cap = request.max_tokens
        self.reply_chars = cap * _CHARS_PER_TOKEN_MAX if cap else None
        self.received = 0

    def check(self, parser: JsonlParser[Any], text: str) -> str | None:
        self.received += len(text)
        if parser.repeats >= REPEAT_STOP:
            return "a repeated line" if parser.repeats == 1 else f"{parser.repeats} repeated lines"
        if isinstance(parser, LinesParser) and parser.invalid >= INVALID_STOP:
            return f"{parser.invalid} unreadable lines"
        if len(parser.pending) > self.line_chars:
            return f"a line longer than {self.line_chars} characters"
        if self.reply_chars is not None and self.received > self.reply_chars:
            return f"more than {self.reply_chars} characters, past the token cap"
        return None


@asynccontextmanager
async def _closing(chunks: AsyncIterator[Any]) -> AsyncIterator[None]:
    """Close the client's stream (and its HTTP response) even when the consumer stops early."""
    try:
        yield
    finally:
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()


def stream(llm: LLM, prompt: Prompt[Any, OutT], data: Any) -> PromptStream[OutT]:
    """Stream a prompt's items (see :class:`PromptStream`). Not a coroutine: use ``async for``."""
    return PromptStream(llm, prompt, data)
