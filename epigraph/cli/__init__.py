"""The ``epigraph`` command (``main``; ``python -m epigraph`` runs it too).

- ``app``: the parser, ``main`` and the list of command groups (``COMMANDS``);
- ``context``: what every command gets (``Cli``: output, settings, graph factory) and how a group registers;
- command groups: ``ingest`` (ingest, import, remove, retry), ``read`` (search, entity, episodes, stats),
  ``ask``, ``model`` (the local model), ``serve`` (serve, mcp);
- ``output`` (where output goes), ``outcome`` (the exit-code policy of ingestion), ``tally`` (an
  ingestion's totals and progress bar), ``tables`` (the summary and dry-run tables) and ``inputs``
  (argument values, episode files); listings come from :mod:`epigraph.present`.
"""

from .app import main

__all__ = ["main"]
