"""``epigraph mcp --transport http``: streamable HTTP with the key in each request's headers (the
SDK's own client), as a real subprocess on a free loopback port."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from bench.shared.serve_harness import LLMThread, World, free_port, server_env


def _wait_listening(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, "epigraph mcp exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError("epigraph mcp did not listen")


async def _search(url: str, key: str | None, group: str) -> tuple[bool, str]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool("search", {"group_id": group, "query": "Alice"})
        return not result.is_error, "".join(getattr(b, "text", "") for b in result.content)


async def _checks(url: str) -> None:
    assert (await _search(url, "k-alpha", "alpha"))[0]
    ok, text = await _search(url, "k-alpha", "beta")
    assert not ok and "403: this API key may not use this group" in text
    for key in (None, "k-wrong"):
        ok, text = await _search(url, key, "alpha")
        assert not ok and "401: " in text


def test_the_mcp_server_over_streamable_http_checks_each_requests_key(tmp_path: Path) -> None:
    port = free_port()
    with LLMThread(World()) as llm:
        env = server_env(tmp_path / "graph.db", llm.url, EPIGRAPH_API_KEYS="k-alpha=alpha")
        cmd = [sys.executable, "-m", "epigraph", "mcp", "--transport", "http", "--port", str(port)]
        with (tmp_path / "mcp.log").open("wb") as log:
            proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_listening(port, proc)
            asyncio.run(_checks(f"http://127.0.0.1:{port}/mcp"))
        finally:
            proc.terminate()
            proc.wait(15)
