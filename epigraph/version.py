"""The package's version, its one source of truth: ``pyproject.toml`` reads it (setuptools' dynamic
``version``), and ``epigraph.__version__``, ``epigraph --version``, the MCP server's ``serverInfo`` and the
HTTP API's OpenAPI ``info.version`` show it. ``CHANGELOG.md`` says what each version changed."""

__version__ = "0.2.0.dev0"
