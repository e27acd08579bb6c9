"""Start, find and stop the local model's server (a child process running :mod:`.serve`).

The server listens on a free 127.0.0.1 port. Its pid, port and model are written to ``server.json``
in the cache directory, so ``epigraph model status|stop`` and a later ``KnowledgeGraph`` find it; its
output goes to ``server.log`` beside it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx

from ..errors import LocalModelError
from .files import read_json, write_json
from .runtime import Build, server_environment

STATE_FILE = "server.json"
LOG_FILE = "server.log"
SERVE_MODULE = "epigraph.local_model.serve"


@dataclass(frozen=True, slots=True)
class ServerState:
    """A running server: where it listens and what it serves."""

    pid: int
    port: int
    model_path: str
    model_name: str
    context_tokens: int
    threads: int
    started_at: str
    log_path: str
    detached: bool = False
    """Started by ``epigraph model start``: runs until ``epigraph model stop``, whoever uses it."""
    slots: int = 1
    """Calls it runs side by side (llama.cpp's ``n_parallel``); older state files had one."""
    runtime: str = "wheel"
    """The llama.cpp it runs: ``wheel`` (xllamacpp from PyPI) or the directory of a build for this CPU
    (older state files: the wheel)."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (``EPIGRAPH_LLM_BASE_URL``)."""
        return f"{self.url}/v1"


@dataclass(frozen=True, slots=True)
class Launch:
    """What to serve and how."""

    model_path: Path
    model_name: str
    context_tokens: int
    threads: int
    slots: int = 1
    runtime: Build | None = None
    """A build for this CPU (:mod:`.runtime`) to import instead of the wheel."""
    detach: bool = False
    """Own session: the server outlives this process (``epigraph model start``)."""
    timeout: float = 300.0


def read_state(cache_dir: Path) -> ServerState | None:
    data = read_json(cache_dir / STATE_FILE)
    if data is None:
        return None
    try:
        return ServerState(**data)
    except TypeError:
        return None


def running(cache_dir: Path) -> ServerState | None:
    """The server recorded in the cache directory when it is alive and answering; else None."""
    state = read_state(cache_dir)
    if state is None or not _is_our_process(state.pid) or not healthy(state.url):
        return None
    return state


def start(cache_dir: Path, launch: Launch) -> ServerState:
    """Start a server, wait until it answers, record it. The caller holds the directory's lock."""
    port = free_port()
    log_path = cache_dir / LOG_FILE
    command = [
        sys.executable, "-m", SERVE_MODULE, "--model", str(launch.model_path), "--port", str(port),
        "--ctx", str(launch.context_tokens), "--threads", str(launch.threads), "--alias", launch.model_name,
        "--slots", str(launch.slots),
    ]  # fmt: skip
    if not launch.detach:
        command += ["--parent", str(os.getpid())]
    if launch.runtime is not None:
        command.append("--plain-weights")  # see runtime.py: the AVX-512 kernels read faster without repacking
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=launch.detach, env=server_environment(launch.runtime),
        )  # fmt: skip
    state = ServerState(
        pid=process.pid,
        port=port,
        model_path=str(launch.model_path),
        model_name=launch.model_name,
        context_tokens=launch.context_tokens,
        threads=launch.threads,
        slots=launch.slots,
        runtime=str(launch.runtime.path) if launch.runtime else "wheel",
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        log_path=str(log_path),
        detached=launch.detach,
    )
    _wait_until_healthy(process, state, launch.timeout)
    write_json(cache_dir / STATE_FILE, asdict(state))
    return state


def stop(cache_dir: Path, timeout: float = 20.0) -> ServerState | None:
    """Stop the recorded server (SIGTERM, then SIGKILL after ``timeout``); the state it had, or None."""
    state = read_state(cache_dir)
    (cache_dir / STATE_FILE).unlink(missing_ok=True)
    if state is None or not _is_our_process(state.pid):
        return None
    _terminate(state.pid, timeout)
    return state


def healthy(url: str, timeout: float = 2.0) -> bool:
    try:
        response = httpx.get(f"{url}/health", timeout=timeout)
    except httpx.HTTPError:
        return False
    return response.status_code == 200


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_healthy(process: subprocess.Popen[bytes], state: ServerState, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = process.poll()
        if code is not None:
            raise LocalModelError(
                f"the local model's server exited with code {code} before answering; "
                f"its log ({state.log_path}) ends with:\n{_tail(Path(state.log_path))}"
            )
        if healthy(state.url, timeout=1.0):
            return
        time.sleep(0.25)
    _terminate(process.pid, 5.0)
    process.wait()
    raise LocalModelError(
        f"the local model's server did not answer within {timeout:.0f} s; log: {state.log_path}"
    )


def _terminate(pid: int, timeout: float) -> None:
    _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return
        time.sleep(0.1)
    _signal(pid, signal.SIGKILL)
    while _alive(pid):
        time.sleep(0.05)


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie child of ours is reaped and counts as gone)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:  # not our child: ask the kernel
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] == "Z"


def _is_our_process(pid: int) -> bool:
    """Whether ``pid`` runs our serve module (not a stranger that reused a dead server's pid)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return _alive(pid)  # no /proc (macOS): the pid's existence is all we can check
    return SERVE_MODULE.encode() in cmdline and not _is_zombie(pid)


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])
