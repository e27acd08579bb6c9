"""Where a command's output goes: tables and results on stdout, notes and problems on stderr (plain
text, JSON). No policy: what to print is the commands' (and :mod:`.outcome`'s) business."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rich.console import Console


@dataclass
class Output:
    """Where a command's output goes: tables and results on ``out``, notes and problems on ``err``."""

    out: Console
    err: Console
    as_json: bool

    def write(self, text: str, *, error: bool = False) -> None:
        """Plain text, no markup or wrapping (stdout, or stderr with ``error``)."""
        stream = self.err.file if error else self.out.file
        stream.write(text + "\n")
        stream.flush()

    def note(self, text: str) -> None:
        self.write(f"epigraph: {text}", error=True)

    def print_json(self, data: Any) -> None:
        self.write(json.dumps(data, indent=2, ensure_ascii=False, default=str))

    def show(self, shown: object, data: Any) -> None:
        """A command's result: ``data`` as JSON under ``--json``, else ``shown`` (a table, a view: what
        rich prints)."""
        if self.as_json:
            self.print_json(data)
        else:
            self.out.print(shown)
