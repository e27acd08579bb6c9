"""Tables: one row model rendered as a terminal table (``rich``) or a self-contained HTML table.

Result types describe themselves as ``Table(title, columns, rows)`` of plain strings (formatted with
:func:`fmt_time`, :func:`fmt_interval`, :func:`fmt_score`, :func:`shorten`); this module draws that in
the terminal and in notebooks (:class:`TableView`: ``__rich__`` and ``_repr_html_``). No I/O.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from rich.console import Group, RenderableType
from rich.table import Table as RichTable
from rich.text import Text

from ..graph.model import Fact
from ..graph.temporal import start_unknown

_CSS = (
    "<style>.epigraph-table{border-collapse:collapse;font-family:sans-serif;font-size:13px;margin:4px 0 12px}"
    ".epigraph-table caption{text-align:left;font-weight:bold;padding:4px 0}"
    ".epigraph-table th,.epigraph-table td{border:1px solid #ddd;padding:3px 8px;text-align:left;"
    "vertical-align:top}.epigraph-table th{background:#f3f3f3}.epigraph-table td.num{text-align:right}"
    ".epigraph-table tr.retired td{color:#888}.epigraph-table tr.failed td{color:#c00}"
    ".epigraph-table tr.pending td{color:#a60}.epigraph-head{font-size:15px;margin:4px 0}"
    ".epigraph-summary{margin:2px 0 8px;max-width:60em;font-family:sans-serif;font-size:13px}</style>"
)


@dataclass(frozen=True, slots=True)
class Table:
    """A titled table of display strings; ``dim_rows`` marks rows to show muted (retired facts),
    ``marks`` other rows by what they are (one of :data:`MARKS`: a colour in the terminal, a class in
    HTML)."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: frozenset[str] = frozenset()
    dim_rows: frozenset[int] = frozenset()
    empty: str = "(none)"
    marks: Mapping[int, str] = field(default_factory=dict, hash=False)

    def mark(self, row: int) -> str | None:
        return "retired" if row in self.dim_rows else self.marks.get(row)


MARKS = {"retired": "dim", "failed": "red", "pending": "yellow"}
"""Row marks and their terminal styles (HTML: ``<tr class="failed">``)."""


def fmt_time(value: datetime | None, missing: str = "") -> str:
    """A compact UTC timestamp: date only at midnight, else minutes."""
    if value is None:
        return missing
    if (value.hour, value.minute, value.second, value.microsecond) == (0, 0, 0, 0):
        return value.strftime("%Y-%m-%d")
    return value.strftime("%Y-%m-%d %H:%M")


def fmt_interval(
    valid_at: datetime | None, invalid_at: datetime | None, *, unknown_start: bool = False
) -> str:
    """``start → end``. ``unknown_start``: the statement gave no start; ``valid_at`` is then when it was
    first stated (the start time travel uses, if any), shown as ``? (stated DATE)``."""
    if not unknown_start and valid_at is None and invalid_at is None:
        return ""
    return f"{_start(valid_at, unknown_start)} → {fmt_time(invalid_at, 'now')}"


def _start(valid_at: datetime | None, unknown: bool) -> str:
    if not unknown:
        return fmt_time(valid_at, "…")
    return "?" + (f" (stated {fmt_time(valid_at)})" if valid_at is not None else "")


def fmt_start(fact: Fact) -> str:
    """When a fact started to hold; an unknown start is ``?``, with when it was first stated."""
    unknown = start_unknown(fact)
    return _start(fact.stated_at if unknown else fact.valid_at, unknown)


def fmt_validity(fact: Fact) -> str:
    """A fact's event-time interval (``graph.temporal.interval``), an unknown start marked as such."""
    unknown = start_unknown(fact)
    return fmt_interval(fact.stated_at if unknown else fact.valid_at, fact.invalid_at, unknown_start=unknown)


def fmt_score(value: float) -> str:
    return f"{value:.3f}"


def shorten(text: str, width: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def rich_table(table: Table) -> RenderableType:
    if not table.rows:
        return Text(f"{table.title}: {table.empty}", style="dim")
    out = RichTable(title=table.title, title_justify="left", show_lines=False, expand=False)
    for col in table.columns:
        out.add_column(col, justify="right" if col in table.numeric else "left", overflow="fold")
    for i, row in enumerate(table.rows):
        mark = table.mark(i)
        out.add_row(*row, style=MARKS[mark] if mark else None)
    return out


def rich_group(tables: Sequence[Table]) -> RenderableType:
    return Group(*(rich_table(t) for t in tables))


def html_table(table: Table) -> str:
    caption = f"<caption>{html.escape(table.title)}</caption>"
    if not table.rows:
        return f'<table class="epigraph-table">{caption}<tr><td>{html.escape(table.empty)}</td></tr></table>'
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = []
    for i, row in enumerate(table.rows):
        cells = "".join(
            f'<td class="num">{html.escape(v)}</td>' if c in table.numeric else f"<td>{html.escape(v)}</td>"
            for c, v in zip(table.columns, row, strict=True)
        )
        mark = table.mark(i)
        cls = f' class="{mark}"' if mark else ""
        body.append(f"<tr{cls}>{cells}</tr>")
    rows = "".join(body)
    return (
        f'<table class="epigraph-table">{caption}<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
    )


def html_tables(tables: Sequence[Table], header: str = "") -> str:
    """The tables under a header: its first line a heading, the lines after it a paragraph each (an
    entity's name stays apart from its summary)."""
    first, *rest = header.split("\n") if header else [""]
    top = f'<div class="epigraph-head"><b>{html.escape(first)}</b></div>' if first else ""
    top += "".join(f'<p class="epigraph-summary">{html.escape(line)}</p>' for line in rest if line.strip())
    return _CSS + top + "".join(html_table(t) for t in tables)


class TableView:
    """Mixin for results that have a ``_header()`` line and ``tables()``: they render as rich tables in
    the terminal and as HTML tables in notebooks."""

    __slots__ = ()

    def __rich__(self) -> RenderableType:
        first, _, rest = self._header().partition("\n")  # type: ignore[attr-defined]
        head = Text()
        head.append(first, style="bold")  # the heading alone is bold; the summary under it is plain
        if rest:
            head.append("\n" + rest)
        return Group(head, rich_group(self.tables()))  # type: ignore[attr-defined]

    def render_table(self) -> RenderableType:
        return self.__rich__()

    def _repr_html_(self) -> str:
        return html_tables(self.tables(), header=self._header())  # type: ignore[attr-defined]
