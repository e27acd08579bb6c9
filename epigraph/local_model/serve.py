"""The server process: ``python -m epigraph.local_model.serve --model PATH --port N ...``.

It builds xllamacpp's ``CommonParams``, starts llama.cpp's own HTTP server in this process
(``xllamacpp.Server``: OpenAI-compatible ``/v1/chat/completions``, ``/health``, ``/v1/models``) and
serves until SIGTERM or SIGINT, or, with ``--parent PID``, until that process is gone (a program that
started it for itself and was killed leaves no 2 GB server behind). :mod:`epigraph.local_model.server`
runs it as a child process, so a later command can find it (state file) and stop it.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any

CACHE_REUSE_TOKENS = 256
"""Smallest chunk of a cached prompt llama.cpp shifts and reuses (``--cache-reuse``)."""
PROMPT_CACHE_MIB = 1024
"""Host memory for llama.cpp's cache of earlier prompts (``--cache-ram``; its default is 8 GiB)."""
POLL = 50
"""How long llama.cpp's idle threads spin for work before they sleep (0-100; llama.cpp's default 50)."""


def params(args: argparse.Namespace) -> Any:
    import xllamacpp as xlc

    p = xlc.CommonParams()
    p.model.path = args.model
    p.model_alias = {args.alias}
    p.hostnames = ["127.0.0.1"]
    p.port = args.port
    p.n_ctx = args.ctx
    p.n_parallel = args.slots  # calls run side by side; each slot reuses its last prompt's cache
    p.kv_unified = True  # the slots share one KV cache: a long prompt is not cut to ctx / slots
    p.cpuparams.n_threads = args.threads
    p.cpuparams_batch.n_threads = args.threads
    p.cpuparams.poll = p.cpuparams_batch.poll = args.poll
    p.use_jinja = True  # the chat template stored in the GGUF (Qwen's ChatML)
    p.cache_prompt = True
    p.n_cache_reuse = CACHE_REUSE_TOKENS
    p.cache_ram_mib = PROMPT_CACHE_MIB
    p.no_extra_bufts = args.plain_weights
    return p


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m epigraph.local_model.serve")
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--slots", type=int, default=1, help="calls run side by side (n_parallel)")
    parser.add_argument(
        "--poll", type=int, default=POLL, help="0-100: how long idle threads spin before they sleep"
    )
    parser.add_argument(
        "--plain-weights", action="store_true",
        help="no repacked weight copies (llama.cpp's --no-extra-bufts): faster with an AVX-512 build",
    )  # fmt: skip
    parser.add_argument("--alias", default="local")
    parser.add_argument("--parent", type=int, default=0, help="stop when this process is gone")
    args = parser.parse_args(argv)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    try:
        import xllamacpp as xlc
    except ImportError:
        print("epigraph: xllamacpp is not installed: pip install 'epigraph[local-model]'", file=sys.stderr)
        return 3
    print(f"epigraph: llama.cpp from {xlc.__file__}: {xlc.get_system_info().strip()}", flush=True)
    server = xlc.Server(params(args))
    print(f"epigraph: serving {args.model} at {server.listening_address}", flush=True)
    while signal.sigtimedwait({signal.SIGTERM, signal.SIGINT}, 1.0) is None:
        if args.parent and os.getppid() != args.parent:
            print(f"epigraph: process {args.parent} is gone", flush=True)
            break
    print("epigraph: stopping", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
