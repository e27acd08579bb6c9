"""``python -m bench``: one entry point that lists every bench and runs each by its name with its own
arguments; the registry, the folders by kind and bench/README.md agree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.__main__ import BENCHES, main, summary
from bench.shared.paths import BENCH, child_env

KINDS = ("performance", "quality", "robustness")


def test_without_a_name_it_lists_every_bench_with_its_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench"], capture_output=True, text=True, timeout=120, env=child_env(), cwd="/"
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for name, module in BENCHES.items():
        (row,) = [line for line in lines if line.split()[:1] == [name]]
        assert summary(module) and row.endswith(summary(module)), row
    assert [line for line in lines if line.endswith(":")] == [f"{kind}:" for kind in KINDS]


@pytest.mark.parametrize("name", sorted(BENCHES))
@pytest.mark.filterwarnings("ignore:'bench.:RuntimeWarning")  # run again as __main__ after an import of it
def test_each_bench_answers_help_with_its_own_arguments(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = list(sys.argv)
    with pytest.raises(SystemExit) as exit_:
        main([name, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ") and "-h, --help" in out
    assert sys.argv == argv, "the bench's arguments do not outlive it"


def test_an_unknown_name_is_refused_with_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nope"]) == 2
    err = capsys.readouterr().err
    assert "no bench named 'nope'" in err and all(f"  {name} " in err for name in BENCHES)


def test_every_bench_is_a_module_of_its_kind_and_in_the_readme() -> None:
    readme = (BENCH / "README.md").read_text(encoding="utf-8")
    for name, module in BENCHES.items():
        _, kind, stem = module.split(".")
        assert kind in KINDS and (BENCH / kind / f"{stem}.py").is_file(), module
        assert stem.rstrip("_") == name, f"{module}: a bench's file is named as it is run"
        assert f"python -m bench {name}" in readme, f"bench/README.md does not say how to run {name}"
    scripts = {
        f"bench.{path.parent.name}.{path.stem}"
        for kind in KINDS
        for path in (BENCH / kind).glob("*.py")
        if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")
    }
    children = {  # run by their bench, not by a person
        "bench.robustness.fault_child",
        "bench.performance.hosted_provider",
        "bench.performance.hosted_graphiti_child",
    }
    assert scripts - children == set(BENCHES.values())


def test_the_results_and_the_recordings_are_apart() -> None:
    """Summaries in results/ (one JSON file a bench, a trial not kept in trials/), what a run recorded
    to read again in recorded/."""
    results = BENCH / "results"
    assert {p.name for p in results.iterdir() if p.is_dir()} <= {"trials"}
    assert all(p.suffix == ".json" for p in results.rglob("*") if p.is_file())
    assert {p.suffix for p in (BENCH / "recorded").iterdir()} <= {".jsonl"}
    assert sorted(Path(BENCH / "recorded").glob("live.replies.*.jsonl"))
