"""A llama.cpp runtime built for this CPU (``epigraph model build``), used by the server when present.

The xllamacpp wheel on PyPI is built for any x86-64 CPU with AVX2. Most of a local ``ask`` is the model
reading its prompt, which is arithmetic, and a CPU with AVX-512 does it much faster with a build that
uses it (the figures: docs/decisions/2026-11-25-local-model-server.md).

:func:`build` compiles the installed xllamacpp version from its PyPI source (``pip install
--no-binary``; 8-12 minutes on 2 cores; it needs a C++ compiler and CMake) with the instruction sets
this CPU has, into ``<cache>/runtime/xllamacpp-<version>-<digest>/``, and records them in
``build.json``. :func:`find` gives the build the server should import first (``PYTHONPATH``): one of
the installed version whose instruction sets this CPU still has; else None, and the wheel serves.

The server runs a build on the weights as they are (``--plain-weights``: llama.cpp's
``--no-extra-bufts``): weights repacked for the AVX-512 kernels read prompts slower. The wheel keeps
its AVX2 repacking (without it, it reads and writes slower). AMX is left out: a build with it
(llama.cpp's ``GGML_NATIVE``) exited with SIGSEGV loading this model on this host. So are llguidance
and TLS, which the server on 127.0.0.1 does not use (their build steps fetch sources from outside
PyPI).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from ..config import child_environment
from ..errors import LocalModelError
from .files import read_json, write_json

RUNTIME_DIR = "runtime"
RECORD = "build.json"
PACKAGE = "xllamacpp"

OPTIONS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("sse4_2",), "GGML_SSE42"),
    (("avx",), "GGML_AVX"),
    (("avx2",), "GGML_AVX2"),
    (("fma",), "GGML_FMA"),
    (("f16c",), "GGML_F16C"),
    (("bmi2",), "GGML_BMI2"),
    (("avx_vnni",), "GGML_AVX_VNNI"),
    (("avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw"), "GGML_AVX512"),
    (("avx512vbmi",), "GGML_AVX512_VBMI"),
    (("avx512_vnni",), "GGML_AVX512_VNNI"),
    (("avx512_bf16",), "GGML_AVX512_BF16"),
)
"""llama.cpp's CMake option for each instruction set, and the ``/proc/cpuinfo`` flags it needs."""
WHEEL_OPTIONS = frozenset({"GGML_SSE42", "GGML_AVX", "GGML_AVX2", "GGML_FMA", "GGML_F16C", "GGML_BMI2"})
"""What the PyPI wheel already uses: a CPU with nothing beyond these gains nothing from a build."""
FIXED_ARGS = (
    "-DGGML_NATIVE=OFF",
    "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF",
    "-DGGML_AMX_BF16=OFF",
    "-DLLAMA_LLGUIDANCE=OFF",
    "-DLLAMA_BUILD_BORINGSSL=OFF",
    "-DLLAMA_OPENSSL=OFF",
)

Runner = Callable[[Sequence[str], Mapping[str, str], Path], int]
"""(command, environment, log file) -> exit code: how :func:`build` runs pip."""


@dataclass(frozen=True, slots=True)
class Build:
    """A runtime built for a CPU: where it is and what it uses."""

    path: Path
    version: str
    flags: tuple[str, ...]
    """The ``/proc/cpuinfo`` flags it needs."""
    options: tuple[str, ...]
    """The llama.cpp options it was built with (``GGML_AVX512``, ...)."""
    built_at: str
    seconds: float


def cpu_flags(cpuinfo: str | None = None) -> frozenset[str]:
    """The CPU's instruction-set flags (``/proc/cpuinfo``'s first ``flags`` line); empty without one."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return frozenset()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def options_for(flags: frozenset[str]) -> list[tuple[tuple[str, ...], str]]:
    """The instruction sets (flags needed, llama.cpp option) a build for a CPU with ``flags`` uses."""
    return [(needed, option) for needed, option in OPTIONS if set(needed) <= flags]


def gains(flags: frozenset[str]) -> list[str]:
    """The options a build for this CPU would add to the wheel's: none means there is nothing to gain."""
    return [option for _, option in options_for(flags) if option not in WHEEL_OPTIONS]


def cmake_args(flags: frozenset[str]) -> str:
    """``CMAKE_ARGS`` for a build for a CPU with ``flags``: each option it has on, AMX and the rest off."""
    chosen = {option for _, option in options_for(flags)}
    switches = [f"-D{option}={'ON' if option in chosen else 'OFF'}" for _, option in OPTIONS]
    return " ".join([*FIXED_ARGS, *switches])


def installed_version() -> str | None:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return None


def build_name(version: str, options: Sequence[str]) -> str:
    digest = hashlib.sha256(" ".join(sorted(options)).encode()).hexdigest()[:10]
    return f"{PACKAGE}-{version}-{digest}"


def builds(cache_dir: Path) -> list[Build]:
    """Every recorded build in the cache directory (a directory without a readable record is ignored)."""
    found = []
    for record in sorted((cache_dir / RUNTIME_DIR).glob(f"*/{RECORD}")):
        data = read_json(record)
        if data is None:
            continue
        try:
            found.append(
                Build(
                    path=record.parent,
                    version=str(data["version"]),
                    flags=tuple(data["flags"]),
                    options=tuple(data["options"]),
                    built_at=str(data["built_at"]),
                    seconds=float(data["seconds"]),
                )
            )
        except (ValueError, KeyError, TypeError):  # a field missing or mangled
            continue
    return found


def find(cache_dir: Path, flags: frozenset[str] | None = None, version: str | None = None) -> Build | None:
    """The build the server should use: of the installed version, needing only flags this CPU has
    (the one with the most options when several do); None when there is none."""
    flags = cpu_flags() if flags is None else flags
    version = installed_version() if version is None else version
    usable = [b for b in builds(cache_dir) if b.version == version and set(b.flags) <= flags]
    return max(usable, key=lambda b: len(b.options), default=None)


def run_logged(command: Sequence[str], env: Mapping[str, str], log: Path) -> int:
    with open(log, "wb") as out:
        return subprocess.run(list(command), env=dict(env), stdout=out, stderr=subprocess.STDOUT).returncode


def build(
    cache_dir: Path,
    *,
    flags: frozenset[str] | None = None,
    version: str | None = None,
    runner: Runner = run_logged,
) -> Build:
    """Compile xllamacpp ``version`` (the installed one) for a CPU with ``flags`` (this one) and record
    it. Raises :class:`LocalModelError` when xllamacpp is not installed, when the CPU has nothing beyond
    what the wheel uses, or when the build fails (with its log; nothing half-built is left to be found)."""
    flags = cpu_flags() if flags is None else flags
    version = installed_version() if version is None else version
    if version is None:
        raise LocalModelError("xllamacpp is not installed: pip install 'epigraph[local-model]' first")
    if not gains(flags):
        raise LocalModelError(
            "nothing to build: this CPU has no instruction set beyond what the xllamacpp wheel already uses "
            "(AVX2, FMA, F16C); the wheel serves as fast as a build would"
        )
    chosen = options_for(flags)
    needed = sorted({flag for needs, _ in chosen for flag in needs})
    options = [option for _, option in chosen]
    root = cache_dir / RUNTIME_DIR
    root.mkdir(parents=True, exist_ok=True)
    final = root / build_name(version, options)
    partial = final.with_name(final.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    log = root / "build.log"
    env = child_environment(CMAKE_ARGS=cmake_args(flags), NPROC=str(os.cpu_count() or 1))
    command = [
        sys.executable, "-m", "pip", "install", "--no-deps", "--no-binary", PACKAGE, "--no-cache-dir",
        "--target", str(partial), f"{PACKAGE}=={version}",
    ]  # fmt: skip
    began = time.monotonic()
    code = runner(command, env, log)
    if code != 0 or not (partial / PACKAGE).is_dir():
        shutil.rmtree(partial, ignore_errors=True)
        raise LocalModelError(f"building {PACKAGE} {version} failed (exit code {code}); its log: {log}")
    made = Build(
        path=final,
        version=version,
        flags=tuple(needed),
        options=tuple(options),
        built_at=datetime.now(UTC).isoformat(timespec="seconds"),
        seconds=round(time.monotonic() - began, 1),
    )
    write_json(partial / RECORD, {k: v for k, v in asdict(made).items() if k != "path"})
    shutil.rmtree(final, ignore_errors=True)
    partial.rename(final)
    return made


def server_environment(build: Build | None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The server process's environment: ``build``'s directory first on ``PYTHONPATH`` (so its xllamacpp
    is the one imported), or ``base`` unchanged."""
    env = child_environment() if base is None else dict(base)
    if build is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(build.path), env.get("PYTHONPATH", "")) if p)
    return env
