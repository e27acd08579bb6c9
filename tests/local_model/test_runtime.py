"""A llama.cpp build for this CPU: which options, where it goes, when the server uses it (no compiler run)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from epigraph.cli.model import state_dict
from epigraph.config import Settings
from epigraph.errors import LocalModelError
from epigraph.local_model import LocalModel, runtime
from epigraph.local_model.server import Launch, read_state, start

AVX2 = frozenset("fpu sse4_2 avx avx2 fma f16c bmi2".split())
AVX512 = "avx_vnni avx512f avx512cd avx512vl avx512dq avx512bw avx512vbmi avx512_vnni avx512_bf16"
SAPPHIRE = AVX2 | frozenset(f"{AVX512} amx_int8 amx_tile".split())
PARTIAL_AVX512 = AVX2 | frozenset("avx512f avx512cd avx512vl avx512dq".split())  # no avx512bw


def test_the_cpu_flags_are_read_from_cpuinfo() -> None:
    text = "processor\t: 0\nflags\t\t: fpu avx2 avx512f\nbugs\t\t: spectre\nprocessor\t: 1\nflags\t\t: fpu\n"
    assert runtime.cpu_flags(text) == {"fpu", "avx2", "avx512f"}
    assert runtime.cpu_flags("processor\t: 0\n") == frozenset()


def test_a_build_uses_what_the_cpu_has_and_never_amx() -> None:
    args = runtime.cmake_args(SAPPHIRE)
    for on in ("GGML_AVX512", "GGML_AVX512_VNNI", "GGML_AVX512_BF16", "GGML_AVX_VNNI", "GGML_AVX2"):
        assert f"-D{on}=ON" in args.split()
    for off in ("GGML_NATIVE", "GGML_AMX_INT8", "GGML_AMX_TILE", "LLAMA_LLGUIDANCE", "LLAMA_BUILD_BORINGSSL"):
        assert f"-D{off}=OFF" in args.split()
    assert runtime.gains(SAPPHIRE) == [
        "GGML_AVX_VNNI", "GGML_AVX512", "GGML_AVX512_VBMI", "GGML_AVX512_VNNI", "GGML_AVX512_BF16"
    ]  # fmt: skip
    # AVX-512 needs all five of its base sets: a CPU missing one gets the option off
    assert "-DGGML_AVX512=OFF" in runtime.cmake_args(PARTIAL_AVX512).split()
    assert runtime.gains(AVX2) == [] and runtime.gains(PARTIAL_AVX512) == []


def test_a_cpu_with_nothing_beyond_the_wheel_gets_no_build(tmp_path: Path) -> None:
    calls: list[Sequence[str]] = []
    with pytest.raises(LocalModelError, match="nothing to build"):
        runtime.build(tmp_path, flags=AVX2, version="1.0", runner=_pip(calls))
    assert calls == [] and runtime.builds(tmp_path) == []


def _pip(calls: list[Sequence[str]], *, code: int = 0, package: bool = True):  # type: ignore[no-untyped-def]
    """Stands in for pip: records the command and, like it, fills ``--target`` (unless told not to)."""

    def run(command: Sequence[str], env: Mapping[str, str], log: Path) -> int:
        calls.append(command)
        log.write_text(f"CMAKE_ARGS={env['CMAKE_ARGS']}\n")
        target = Path(command[command.index("--target") + 1])
        if package:
            (target / "xllamacpp").mkdir(parents=True)
            (target / "xllamacpp" / "__init__.py").write_text("")
        return code

    return run


def test_a_build_is_recorded_and_found_for_this_cpu_only(tmp_path: Path) -> None:
    calls: list[Sequence[str]] = []
    made = runtime.build(tmp_path, flags=SAPPHIRE, version="1.0", runner=_pip(calls))
    command = calls[0]
    assert command[:3] == [sys.executable, "-m", "pip"] and "xllamacpp==1.0" in command
    assert command[command.index("--no-binary") + 1] == "xllamacpp"
    assert made.path.name.startswith("xllamacpp-1.0-") and (made.path / "xllamacpp").is_dir()
    assert "avx512_vnni" in made.flags and "amx_int8" not in made.flags
    assert "-DGGML_AVX512_VNNI=ON" in (tmp_path / "runtime" / "build.log").read_text()
    assert not list((tmp_path / "runtime").glob("*.partial"))
    assert runtime.find(tmp_path, SAPPHIRE, "1.0") == made
    assert runtime.find(tmp_path, SAPPHIRE, "2.0") is None, "built for another xllamacpp version"
    assert runtime.find(tmp_path, PARTIAL_AVX512, "1.0") is None, "this CPU lacks what it was built for"
    (tmp_path / "runtime" / "broken").mkdir()
    (tmp_path / "runtime" / "broken" / "build.json").write_text("{not json")
    assert runtime.find(tmp_path, SAPPHIRE, "1.0") == made


def test_a_failed_build_leaves_nothing_to_be_found(tmp_path: Path) -> None:
    for runner in (_pip([], code=1), _pip([], package=False)):
        with pytest.raises(LocalModelError, match=r"failed \(exit code .*build.log"):
            runtime.build(tmp_path, flags=SAPPHIRE, version="1.0", runner=runner)
        assert runtime.builds(tmp_path) == [] and list((tmp_path / "runtime").iterdir()) == [
            tmp_path / "runtime" / "build.log"
        ]


def test_the_server_environment_puts_the_build_first(tmp_path: Path) -> None:
    made = runtime.build(tmp_path, flags=SAPPHIRE, version="1.0", runner=_pip([]))
    assert (
        runtime.server_environment(made, {"PYTHONPATH": "/x"})["PYTHONPATH"] == f"{made.path}{os.pathsep}/x"
    )
    assert runtime.server_environment(made, {})["PYTHONPATH"] == str(made.path)
    assert runtime.server_environment(None, {"A": "1"}) == {"A": "1"}


def test_the_server_imports_the_build_instead_of_the_wheel(tmp_path: Path) -> None:
    """A build whose xllamacpp refuses to serve: the server's log shows that it was the one imported."""
    made = runtime.build(tmp_path, flags=SAPPHIRE, version="1.0", runner=_pip([]))
    (made.path / "xllamacpp" / "__init__.py").write_text(
        "def get_system_info():\n    return 'CPU : AVX512 = 1'\n"
        "import sys\n"
        "def CommonParams():\n    raise SystemExit('the build for this CPU: ' + ' '.join(sys.argv))\n"
        "Server = CommonParams\n"
    )
    with pytest.raises(LocalModelError, match="exited with code"):
        start(tmp_path, Launch(tmp_path / "m.gguf", "m", 512, 1, runtime=made, timeout=60))
    log = (tmp_path / "server.log").read_text()
    assert f"llama.cpp from {made.path}" in log and "AVX512 = 1" in log and "the build for this CPU" in log
    assert "--plain-weights" in log, "a build serves the weights unrepacked"
    assert read_state(tmp_path) is None


@pytest.mark.skipif(runtime.installed_version() is None, reason="xllamacpp not installed")
def test_the_settings_choose_the_build_or_the_wheel(tmp_path: Path) -> None:
    record = {"version": runtime.installed_version(), "flags": [], "options": ["GGML_AVX512"],
              "built_at": "2026-01-01T00:00:00+00:00", "seconds": 1.0}  # fmt: skip
    (tmp_path / "runtime" / "any-cpu").mkdir(parents=True)
    (tmp_path / "runtime" / "any-cpu" / "build.json").write_text(json.dumps(record))
    auto = LocalModel(Settings(llm_local=True, local_model_dir=str(tmp_path)))
    chosen = auto.chosen_build()
    assert chosen is not None and chosen.path == tmp_path / "runtime" / "any-cpu"
    env = {"EPIGRAPH_LOCAL_MODEL_DIR": str(tmp_path), "EPIGRAPH_LOCAL_MODEL_RUNTIME": "wheel"}
    assert LocalModel(Settings.from_env(env)).chosen_build() is None


def test_status_names_the_runtime(tmp_path: Path) -> None:
    state = {"pid": 1, "port": 1, "model_path": "/m", "model_name": "m", "context_tokens": 1, "threads": 1,
             "started_at": "2026-01-01T00:00:00+00:00", "log_path": "/dev/null"}  # fmt: skip
    (tmp_path / "server.json").write_text(json.dumps(state))
    recorded = read_state(tmp_path)
    assert recorded is not None and state_dict(recorded)["runtime"] == "wheel", (
        "a state file from before runtimes"
    )
    built = replace(recorded, runtime="/cache/runtime/xllamacpp-1.0-abc")
    assert state_dict(built)["runtime"] == "/cache/runtime/xllamacpp-1.0-abc"
