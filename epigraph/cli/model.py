"""``epigraph model start|stop|status``: the local model (``epigraph[local-model]``) from the shell.

``start`` assembles and verifies the weights once (1.1 GB; about 10 s), starts llama.cpp's server on a
free 127.0.0.1 port in the background and prints the settings that point epigraph (or any
OpenAI-compatible client) at it; ``status`` says whether it runs (exit code 1 when not); ``stop`` stops it.
``build`` compiles llama.cpp for this CPU (:mod:`epigraph.local_model.runtime`: minutes, once; about twice
as fast reading prompts on a CPU with AVX-512); servers started after it run that build.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from rich.table import Table

from ..config import Settings
from ..local_model import LOCAL_TIMEOUT, LocalModel, ServerState, environment, runtime
from .context import AddCommand, Cli
from .output import Output


def register(command: AddCommand) -> None:
    p = command("model", cmd_model, "the local model (epigraph[local-model]): start, stop or status")
    p.add_argument("action", choices=("start", "stop", "status", "build"), help="start it (assembling the "
                   "weights once), stop it, say whether it runs (exit code 1 when not), or build llama.cpp "
                   "for this CPU (minutes, once; servers started after it run that build)")  # fmt: skip


async def cmd_model(cli: Cli, args: argparse.Namespace) -> int:
    return await model_command(cli, cli.settings, args)


def state_dict(state: ServerState) -> dict[str, Any]:
    return {
        "running": True,
        "pid": state.pid,
        "url": state.url,
        "base_url": state.base_url,
        "model": state.model_name,
        "model_path": state.model_path,
        "context_tokens": state.context_tokens,
        "threads": state.threads,
        "slots": state.slots,
        "runtime": state.runtime,
        "started_at": state.started_at,
        "log": state.log_path,
        "detached": state.detached,
    }


def state_table(state: ServerState, title: str) -> Table:
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    for key, value in state_dict(state).items():
        if key != "running":
            table.add_row(key.replace("_", " "), str(value))
    return table


def settings_lines(state: ServerState) -> list[str]:
    """Shell lines that point epigraph at the server (and what the timeouts should be on a CPU)."""
    tuned = {"EPIGRAPH_LLM_TIMEOUT": f"{LOCAL_TIMEOUT:.0f}", "EPIGRAPH_LLM_MAX_IN_FLIGHT": str(state.slots)}
    lines = [f"export {name}={value}" for name, value in {**environment(state), **tuned}.items()]
    return [*lines, "# or just EPIGRAPH_LLM=local: epigraph then reuses this server"]


async def model_command(out: Output, settings: Settings, args: argparse.Namespace) -> int:
    local = LocalModel(settings)
    if args.action == "status":
        state = await asyncio.to_thread(local.status)
        if state is None:
            _not_running(out, local)
            return 1
        _show(out, state, "local model running", {})
        return 0
    if args.action == "stop":
        state = await asyncio.to_thread(local.stop)
        if out.as_json:
            out.print_json({"stopped": state is not None, **({"pid": state.pid} if state else {})})
        else:
            out.write(f"stopped the local model (pid {state.pid})" if state else "no local model was running")
        return 0
    if args.action == "build":
        return await _build(out, local)
    return await _start(out, local)


async def _build(out: Output, local: LocalModel) -> int:
    flags = runtime.cpu_flags()
    if added := runtime.gains(flags):
        out.note(f"building llama.cpp for this CPU ({', '.join(added)}): 8-12 minutes on 2 cores ...")
    made = await asyncio.to_thread(local.build_runtime)
    record = {
        "path": str(made.path),
        "version": made.version,
        "options": list(made.options),
        "seconds": made.seconds,
    }
    if out.as_json:
        out.print_json(record)
        return 0
    out.write(f"built xllamacpp {made.version} for this CPU in {made.seconds:.0f} s: {made.path}")
    out.write(f"options: {', '.join(made.options)}")
    if local.status() is not None:
        out.write("the running server still runs the earlier build: epigraph model stop, then start")
    return 0


async def _start(out: Output, local: LocalModel) -> int:
    began = time.monotonic()
    if not local.weights_ready():
        out.note(f"assembling the local model's weights into {local.weights_path} (1.1 GB, done once) ...")
    await asyncio.to_thread(local.ensure_weights)
    weights_s = time.monotonic() - began
    state, started = await asyncio.to_thread(local.ensure_running, detach=True)
    server_s = time.monotonic() - began - weights_s
    timing = {
        "started": started,
        "weights_seconds": round(weights_s, 2),
        "server_seconds": round(server_s, 2),
    }
    title = f"local model started in {weights_s + server_s:.1f} s"
    if not started:
        owner = "" if state.detached else " (started by a program: it stops when that program ends)"
        title = f"local model already running{owner}"
    _show(out, state, title, {**timing, "environment": environment(state)})
    if not out.as_json:
        lines = ["", "use it with:", *settings_lines(state), "stop it with: epigraph model stop"]
        out.write("\n".join(lines))
    return 0


def _show(out: Output, state: ServerState, title: str, extra: dict[str, Any]) -> None:
    if out.as_json:
        out.print_json({**state_dict(state), **extra})
    else:
        out.out.print(state_table(state, title))


def _not_running(out: Output, local: LocalModel) -> None:
    weights = "verified" if local.weights_ready() else "not assembled yet"
    if out.as_json:
        out.print_json({"running": False, "model_path": str(local.weights_path), "weights": weights})
    else:
        out.write(f"no local model running (weights {weights}: {local.weights_path}); epigraph model start")
