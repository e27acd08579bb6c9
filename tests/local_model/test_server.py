"""The local model's settings, state file and commands, without the real weights."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from epigraph.cli import main
from epigraph.config import Settings
from epigraph.errors import ConfigError, LocalModelError
from epigraph.llm.profiles import EndpointProfile
from epigraph.local_model import LocalModel, leases
from epigraph.local_model.server import STATE_FILE, Launch, ServerState, read_state, running, start, stop


def test_epigraph_llm_local_turns_it_on_and_picks_its_profile(tmp_path: Path) -> None:
    settings = Settings.from_env({"EPIGRAPH_LLM": "local", "EPIGRAPH_LOCAL_MODEL_DIR": str(tmp_path)})
    assert settings.llm_local and settings.local_model_cache == tmp_path
    profile = EndpointProfile.from_settings(settings)
    assert profile.structured == "json_schema" and profile.context_tokens == 8192
    assert EndpointProfile.from_settings(Settings()).context_tokens is None
    assert Settings.from_env({}).local_model_cache == Path.home() / ".cache" / "epigraph" / "models"
    with pytest.raises(ConfigError, match="EPIGRAPH_LLM: 'local' or unset"):
        Settings.from_env({"EPIGRAPH_LLM": "remote"})


def test_settings_for_a_server_keep_what_the_user_chose(tmp_path: Path) -> None:
    state = _state(os.getpid(), 5555)
    fitted = LocalModel(Settings(llm_local=True, local_model_dir=str(tmp_path))).settings_for(state)
    assert fitted.llm_base_url == "http://127.0.0.1:5555/v1" and fitted.llm_configured
    assert (fitted.llm_timeout, fitted.llm_max_in_flight) == (900.0, 1)
    chosen = Settings(llm_local=True, local_model_dir=str(tmp_path), llm_timeout=30, llm_max_in_flight=3)
    kept = LocalModel(chosen).settings_for(state)
    assert (kept.llm_timeout, kept.llm_max_in_flight) == (30.0, 3)


def test_a_recorded_pid_that_is_not_our_server_is_never_signalled(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_text(json.dumps(asdict(_state(os.getpid(), 1))))
    assert read_state(tmp_path) is not None
    assert running(tmp_path) is None  # this test process is alive, but it is not our serve module
    assert stop(tmp_path) is None  # and it is still alive to assert this
    assert read_state(tmp_path) is None


def test_status_and_stop_when_nothing_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = {"EPIGRAPH_LOCAL_MODEL_DIR": str(tmp_path)}
    assert main(["model", "status"], environ=env) == 1
    assert "no local model running (weights not assembled yet" in capsys.readouterr().out
    assert main(["--json", "model", "status"], environ=env) == 1
    assert json.loads(capsys.readouterr().out)["running"] is False
    assert main(["model", "stop"], environ=env) == 0
    assert "no local model was running" in capsys.readouterr().out


@pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is None, reason="xllamacpp not installed")
def test_a_server_that_cannot_load_its_model_fails_with_its_log(tmp_path: Path) -> None:
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"GGUF but not really")
    with pytest.raises(LocalModelError, match="exited with code") as error:
        start(tmp_path, Launch(bogus, "m", 512, 1, timeout=60))
    assert "server.log" in str(error.value)
    assert read_state(tmp_path) is None


def _state(pid: int, port: int) -> ServerState:
    return ServerState(
        pid=pid, port=port, model_path="/m.gguf", model_name="m", context_tokens=8192, threads=2,
        started_at="2026-01-01T00:00:00+00:00", log_path="/dev/null",
    )  # fmt: skip


def _stand_in(tmp_path: Path, *, detached: bool) -> subprocess.Popen[bytes]:
    """A process that passes for our server (its command line names the serve module), recorded."""
    process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", "epigraph.local_model.serve"]
    )
    cmdline = Path(f"/proc/{process.pid}/cmdline")
    while b"epigraph.local_model.serve" not in cmdline.read_bytes():  # empty until exec has finished
        time.sleep(0.01)
    state = replace(_state(process.pid, 1), detached=detached)
    (tmp_path / STATE_FILE).write_text(json.dumps(asdict(state)))
    return process


def _gone(process: subprocess.Popen[bytes]) -> bool:
    process.wait(timeout=30)  # stop() may have reaped it already
    return not Path(f"/proc/{process.pid}").exists()


def test_the_last_lease_stops_a_library_started_server(tmp_path: Path) -> None:
    local = LocalModel(Settings(llm_local=True, local_model_dir=str(tmp_path)))
    process = _stand_in(tmp_path, detached=False)
    first, second = leases.take(tmp_path), leases.take(tmp_path)
    (tmp_path / leases.USERS / "999999999-dead").touch()  # a crashed user's lease does not count
    assert local.release(first) is None and process.poll() is None  # another user still holds it
    assert leases.held(tmp_path) == [second]
    stopped = local.release(second)
    assert stopped is not None and stopped.pid == process.pid
    assert _gone(process) and read_state(tmp_path) is None


def test_a_server_from_model_start_outlives_its_leases(tmp_path: Path) -> None:
    local = LocalModel(Settings(llm_local=True, local_model_dir=str(tmp_path)))
    process = _stand_in(tmp_path, detached=True)
    try:
        assert local.release(leases.take(tmp_path)) is None and process.poll() is None
        assert local.stop() is not None and _gone(process)
    finally:
        process.kill()
        process.wait()


def test_the_settings_point_at_the_servers_slots(tmp_path: Path) -> None:
    """Calls beyond the server's slots queue in the client: the in-flight limit is its slot count (a
    state file from before slots existed reads as one)."""
    local = LocalModel(Settings(llm_local=True, local_model_dir=str(tmp_path), local_model_slots=2))
    assert local.slots == 2
    assert local.settings_for(replace(_state(1, 1), slots=2)).llm_max_in_flight == 2
    old = {k: v for k, v in asdict(_state(1, 1)).items() if k != "slots"}
    (tmp_path / STATE_FILE).write_text(json.dumps(old))
    assert read_state(tmp_path) is not None and read_state(tmp_path).slots == 1  # type: ignore[union-attr]
    chosen = LocalModel(Settings(llm_local=True, local_model_dir=str(tmp_path), llm_max_in_flight=5))
    assert chosen.settings_for(replace(_state(1, 1), slots=2)).llm_max_in_flight == 5, "the caller's choice"


@pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is None, reason="xllamacpp not installed")
def test_the_serve_command_takes_slots_and_polling() -> None:
    from epigraph.local_model.serve import params

    parsed = argparse.Namespace(
        model="/m.gguf", alias="m", port=1, ctx=4096, threads=1, slots=4, poll=0, plain_weights=False
    )
    built = params(parsed)
    assert built.no_extra_bufts is False, "the wheel keeps its repacked weights"
    plain = argparse.Namespace(**{**vars(parsed), "plain_weights": True})
    assert params(plain).no_extra_bufts is True
    assert (built.n_parallel, built.kv_unified, built.cpuparams.poll, built.cpuparams_batch.poll) == (
        4,
        True,
        0,
        0,
    )
