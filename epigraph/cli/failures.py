"""How the ``epigraph`` command ends when something fails: its exit code, and its JSON form under ``--json``.

Exit codes: ``0`` ok; ``1`` a failure (an episode failed, something was not found, the LLM, the store
or the queue failed); ``2`` a usage error (bad arguments, bad input, missing configuration: nothing was
ingested); ``130`` interrupted. Without ``--json`` a failure is one line on stderr. With ``--json`` it is
also one JSON object on stdout, so a script reads every outcome from stdout::

    {"error": {"kind": "InputError", "message": "...", "where": {"file": "x.jsonl", "line": 3,
     "field": "content"}, "exit_code": 2}}

``kind`` is the exception's class name (``StoreNotFound``, ``EntityNotFound``, ``ConfigError``,
``LLMUnavailable``, ... see :mod:`epigraph.errors`; ``UsageError`` for a bad argument, ``Interrupted``,
``OSError``); ``where`` (``file``, ``line``, ``field``: what is known) or ``null``. Some kinds add their
own keys: ``closest`` (names, for ``EntityNotFound``), ``candidates`` (ids, for ``AmbiguousName``),
``problems`` (each invalid input line, for a rejected input file).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from ..errors import AmbiguousName, EntityNotFound, EpigraphError, InputError, UsageError

OK, FAILURE, USAGE, INTERRUPTED = 0, 1, 2, 130

EXIT_CODES = (
    "exit codes: 0 ok, 1 failure, 2 usage error (nothing ingested), 130 interrupted; with --json a\n"
    'failure is also one JSON object on stdout: {"error": {"kind", "message", "where", "exit_code"}}'
)
"""What ``epigraph --help`` says about exit codes (the epilog's last lines)."""


@dataclass(frozen=True, slots=True)
class Failed:
    """One failure of a command: what kind, what happened, where, and the exit code it ends with."""

    kind: str
    message: str
    exit_code: int
    where: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        error = {"kind": self.kind, "message": self.message, "where": self.where, **self.extra}
        return {"error": {**error, "exit_code": self.exit_code}}

    def report(self, *, as_json: bool, stdout: IO[str], stderr: IO[str]) -> int:
        """The message on stderr (and the JSON form on stdout with ``as_json``); returns the exit code."""
        print(f"epigraph: {self.message}", file=stderr)
        if as_json:
            stdout.write(json.dumps(self.to_dict(), ensure_ascii=False) + "\n")
            stdout.flush()
        return self.exit_code


def where(error: InputError) -> dict[str, Any] | None:
    found = {"file": error.file, "line": error.line, "field": error.field}
    return {k: v for k, v in found.items() if v is not None} or None


def from_error(error: EpigraphError) -> Failed:
    """The failure an epigraph error ends a command with (usage errors: 2, the others: 1)."""
    code = USAGE if isinstance(error, UsageError) else FAILURE
    extra: dict[str, Any] = {}
    if isinstance(error, EntityNotFound):
        extra["closest"] = list(error.closest)
    if isinstance(error, AmbiguousName):
        extra["candidates"] = list(error.candidates)
    located = where(error) if isinstance(error, InputError) else None
    return Failed(type(error).__name__, str(error), code, located, extra)


def bad_argument(message: str) -> Failed:
    """An argument the parser refused (argparse's own message)."""
    return Failed("UsageError", message, USAGE)


def rejected_input(errors: Sequence[InputError], count: int, message: str) -> Failed:
    """An input file refused as a whole (``count`` invalid lines or records, ``errors`` the first ones)."""
    problems = [{"message": e.reason, "where": where(e)} for e in errors]
    return Failed("InputError", message, USAGE, None, {"invalid": count, "problems": problems})
