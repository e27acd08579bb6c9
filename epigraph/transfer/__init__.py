"""Export and load: a graph's groups as a versioned, documented JSON Lines dump (``format``;
docs/dump-format.md), written from any store and loaded into any store (``moves``)."""

from __future__ import annotations

from .format import VERSION, Dump, read
from .moves import LoadReport, export_lines, load

__all__ = ["VERSION", "Dump", "LoadReport", "export_lines", "load", "read"]
