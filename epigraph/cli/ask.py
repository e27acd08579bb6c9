"""``epigraph ask``: the answer printed as it arrives, thoughts and lookups dimmed (hidden with
``--quiet``), the citations as a table at the end; with ``--json`` one JSON chunk per line (streamed) or
the whole answer (``--no-streaming``). The printers do no I/O beyond the :class:`~epigraph.cli.output.Output`
given.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterable
from dataclasses import dataclass, field

from rich.table import Table
from rich.text import Text

from ..ask import ASK_MODES, DEFAULT_MODE, Answer, AskChunk, AskUsage, Citation
from ..ask.observations import shorten
from ..present.tables import fmt_interval, fmt_time
from .context import AddCommand, Cli, graph, require_llm
from .inputs import date_arg
from .output import Output


def register(command: AddCommand) -> None:
    p = command("ask", cmd_ask, "answer a question from the graph, citing facts and episodes (streamed)")
    p.add_argument("question", metavar="QUESTION")
    p.add_argument("--as-of", type=date_arg, metavar="DATE", help="answer as of DATE (its 'now')")
    p.add_argument("--known-at", type=date_arg, metavar="DATE", help="from what the graph knew at DATE")
    p.add_argument(
        "--mode", choices=ASK_MODES, default=None,
        help=f"context: one context, one model call; agent: planned lookups; auto: the context first, "
        f"the agent when it found nothing (default: {DEFAULT_MODE})",
    )  # fmt: skip
    p.add_argument("--no-streaming", action="store_true", help="print the whole answer once it is done")
    p.add_argument("--quiet", action="store_true", help="hide thoughts, lookups and usage")


async def cmd_ask(cli: Cli, args: argparse.Namespace) -> int:
    async with graph(cli, existing=True) as kg:
        await kg.open()  # the local model, when configured, starts here
        require_llm(kg, "ask")
        when = {"as_of": args.as_of, "known_at": args.known_at, "mode": args.mode}
        if args.no_streaming:
            answer = await kg.ask(args.question, streaming=False, **when)
            if cli.as_json:
                cli.write(answer.to_json())
                return 0 if answer.ok else 1
            printer = AskPrinter(cli, quiet=args.quiet)
            printer.answer(answer)
            return printer.exit_code
        chunks = kg.ask(args.question, **when)
        if cli.as_json:
            return await print_json_lines(cli, chunks)
        printer = AskPrinter(cli, quiet=args.quiet)
        async for chunk in chunks:
            printer.chunk(chunk)
        return printer.exit_code


def citations_table(citations: tuple[Citation, ...]) -> Table:
    table = Table(title="Citations", title_justify="left")
    for column in ("id", "kind", "text", "valid", "status"):
        table.add_column(column, overflow="fold")
    for c in citations:
        if c.kind == "fact":
            window = fmt_interval(c.valid_at, c.invalid_at, unknown_start=c.start_unknown)
            status = "ended" if c.retired else "current"
        else:
            window, status = fmt_time(c.valid_at), "episode"
        style = "dim" if c.retired else None
        table.add_row(c.id, c.kind, shorten(c.text, 90), window, status, style=style)
    return table


def usage_line(usage: AskUsage, latency_ms: float) -> str:
    estimated = " (estimated)" if usage.estimated else ""
    return (
        f"{usage.calls} model calls, {usage.lookups} lookup{'s' * (usage.lookups != 1)}, "
        f"{usage.input_tokens:,} tokens in, "
        f"{usage.output_tokens:,} out{estimated}, {usage.context_tokens:,} context tokens, "
        f"{latency_ms / 1000:.1f} s"
    )


@dataclass
class AskPrinter:
    """Prints a dialog chunk by chunk. ``exit_code`` is 1 once an error chunk was printed."""

    output: Output
    quiet: bool = False
    exit_code: int = 0
    _in_answer: bool = field(default=False, init=False)

    def dim(self, text: str) -> None:
        if not self.quiet:
            self.output.out.print(Text(text, style="dim"), highlight=False, soft_wrap=True)

    def chunk(self, chunk: AskChunk) -> None:
        if chunk.chunk_type == "answer":
            self._answer_part(chunk.content)
        elif chunk.chunk_type == "error":
            self._end_answer()
            self.output.note(f"ask failed: {chunk.content}")
            self.exit_code = 1
        elif chunk.chunk_type == "thought":
            self.dim(f"thought: {chunk.content}")
        elif chunk.chunk_type == "action":
            self.dim(f"lookup: {chunk.content}")
        else:
            self.dim(f"found: {chunk.content}")
        if chunk.end_of_dialog and chunk.chunk_type == "answer":
            self.finish(chunk.citations, chunk.dropped, chunk.usage or AskUsage(), chunk.latency_ms or 0.0)

    def _answer_part(self, text: str) -> None:
        if not text:
            return
        stream = self.output.out.file
        stream.write(text)
        stream.flush()
        self._in_answer = True

    def _end_answer(self) -> None:
        if self._in_answer:
            self.output.write("")
            self._in_answer = False

    def finish(
        self, citations: tuple[Citation, ...], dropped: tuple[str, ...], usage: AskUsage, latency_ms: float
    ) -> None:
        self._end_answer()
        if citations:
            self.output.out.print(citations_table(citations))
        if dropped:
            self.output.note(f"the answer cited ids no lookup returned (left out): {', '.join(dropped)}")
        self.dim(usage_line(usage, latency_ms))

    def answer(self, answer: Answer) -> None:
        """A whole (non-streamed) answer: its thoughts and lookups, then the text and citations."""
        for thought, action in zip(answer.thoughts, [*answer.actions, None], strict=False):
            self.dim(f"thought: {thought}")
            if action is not None:
                self.dim(f"lookup: {action['tool']}({_args(action.get('args', {}))})")
        if answer.error is not None:
            self.output.note(f"ask failed: {answer.error}")
            self.exit_code = 1
            return
        self._answer_part(answer.text)
        self.finish(answer.citations, answer.dropped, answer.usage, answer.latency_ms)


def _args(args: dict[str, str]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


async def print_json_lines(output: Output, chunks: AsyncIterable[AskChunk]) -> int:
    """``--json`` streamed: one JSON chunk per line, flushed as it comes; 1 if the dialog failed."""
    code = 0
    async for chunk in chunks:
        output.write(chunk.to_json())
        code = 1 if chunk.chunk_type == "error" else code
    return code
