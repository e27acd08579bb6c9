"""The wire side of :mod:`epigraph.testing.server`: a minimal HTTP/1.1 (keep-alive, chunked bodies,
server-sent events) and the OpenAI embedding body. Pure stdlib; nothing here knows about faults."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import random
import struct
from collections.abc import Mapping, Sequence
from http import HTTPStatus
from typing import Any


class HTTPRequest:
    """One parsed request; header names are lower-cased."""

    def __init__(self, method: str, path: str, headers: dict[str, str], body: bytes) -> None:
        self.method, self.path, self.headers, self.body = method, path, headers, body


def unit_vector(text: str, dim: int) -> list[float]:
    """A deterministic pseudo-random unit vector for ``text`` (same text, same vector, any process)."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    rng = random.Random(seed)
    values = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def approx_tokens(text: str) -> int:
    return (len(text) + 3) // 4 if text else 0


def embeddings_body(
    inputs: Sequence[str],
    *,
    dim: int,
    as_base64: bool,
    model: str,
    vectors: Sequence[Sequence[float]] | None = None,
) -> dict[str, Any]:
    """An OpenAI ``/v1/embeddings`` response with ``vectors`` (default: :func:`unit_vector` of each
    input), as floats or base64."""
    if vectors is not None and len(vectors) != len(inputs):
        raise ValueError(f"{len(vectors)} vectors for {len(inputs)} inputs")
    data = []
    for index, item in enumerate(inputs):
        vector = [float(v) for v in vectors[index]] if vectors is not None else unit_vector(item, dim)
        packed = struct.pack(f"<{len(vector)}f", *vector)
        encoded: Any = base64.b64encode(packed).decode() if as_base64 else vector
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    tokens = sum(approx_tokens(item) for item in inputs)
    return {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def response_head(status: int, headers: Mapping[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def send_event(writer: asyncio.StreamWriter, payload: Any) -> None:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    event = f"data: {data}\n\n".encode()
    writer.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
    await writer.drain()


async def read_request(reader: asyncio.StreamReader) -> HTTPRequest | None:
    """One HTTP/1.1 request, or None when the client closed the connection between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, path, _version = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = await read_chunked(reader)
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0")))
    return HTTPRequest(method, path, headers, body)


async def read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)
