"""How the commands that ingest end: 0 when every episode was done (or already was), 1 when one failed
(listed, with ``epigraph retry`` to run them again), 2 for bad input without ``--skip-invalid`` (listed;
nothing ingested; with ``--json`` its failure form too). The codes and the failure form are
:mod:`.failures`'s, as for every command."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InputError
from .failures import FAILURE, OK, rejected_input
from .output import Output
from .tables import failures_text, summary_table
from .tally import Tally


def reject(out: Output, errors: Sequence[InputError], count: int, what: str) -> int:
    """Bad input without --skip-invalid: list the problems, ingest nothing; exit code 2 (with --json,
    the failure with every problem listed on stdout as well)."""
    for error in errors:
        out.note(str(error))
    more = f" (the first {len(errors)} shown)" if count > len(errors) else ""
    plural = "s" * (count != 1)
    message = f"{count} invalid {what}{plural}{more}; nothing ingested (fix them, or pass --skip-invalid)"
    failed = rejected_input(errors, count, message)
    return failed.report(as_json=out.as_json, stdout=out.out.file, stderr=out.err.file)


def skipped(out: Output, errors: Sequence[InputError], count: int, what: str) -> None:
    for error in errors:
        out.note(f"skipped: {error}")
    if count > len(errors):
        out.note(f"... and {count - len(errors)} more invalid {what}s skipped")


def finish(out: Output, tally: Tally, title: str, extra: Mapping[str, Any]) -> int:
    """The ingestion summary (table, or JSON); exit code 1 when an episode failed."""
    if out.as_json:
        out.print_json({**extra, **tally.to_dict()})
    else:
        out.out.print(summary_table(tally, title))
        for line in failures_text(tally):
            out.note(line)
    return FAILURE if tally.failed else OK
