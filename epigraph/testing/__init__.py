"""Test doubles that ship with the library: use them in your own tests and notebooks.

- ``doubles``: :class:`ScriptedLLM` (the ``LLM`` protocol from a script) and :class:`HashEmbedder` (the
  ``Embedder`` protocol without a model), re-exported here;
- ``server``: :class:`~epigraph.testing.server.FakeOpenAIServer`, a local OpenAI-compatible HTTP server
  with scriptable faults (``replies``: what it answers, ``Reply`` and the handlers; ``http``: its wire
  side).
"""

from .doubles import HashEmbedder, RecordedCall, ScriptedLLM, ScriptedReply, ScriptError

__all__ = ["HashEmbedder", "RecordedCall", "ScriptError", "ScriptedLLM", "ScriptedReply"]
