"""Weights assembly and verification on small synthetic parts (the real 1.1 GB file is never needed)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from epigraph.errors import ConfigError, LocalModelError
from epigraph.local_model.weights import WeightsSpec, ensure_weights, is_trusted, package_parts


class Parts:
    """Three part files on disk; counts how often the assembler asked for them."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir()
        self.blobs = [os.urandom(3000), os.urandom(5000), os.urandom(17)]
        self.paths = []
        for number, blob in enumerate(self.blobs, start=1):
            path = directory / f"part{number:02d}.bin"
            path.write_bytes(blob)
            self.paths.append(path)
        self.asked = 0

    def __call__(self) -> Sequence[Path]:
        self.asked += 1
        return self.paths

    @property
    def whole(self) -> bytes:
        return b"".join(self.blobs)

    def spec(self, *, sha256: str | None = None, size: int | None = None) -> WeightsSpec:
        whole = self.whole
        return WeightsSpec(
            file_name="model.gguf",
            size=len(whole) if size is None else size,
            sha256=sha256 or hashlib.sha256(whole).hexdigest(),
            parts=self,
        )


@pytest.fixture
def parts(tmp_path: Path) -> Parts:
    return Parts(tmp_path / "parts")


def test_assembles_in_order_once_then_trusts_the_stamp(parts: Parts, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    spec = parts.spec()
    seen: list[tuple[int, int]] = []
    path = ensure_weights(spec, cache, lambda done, total: seen.append((done, total)))
    assert path == cache / "model.gguf"
    assert path.read_bytes() == parts.whole
    assert seen == [(3000, 8017), (8000, 8017), (8017, 8017)]  # once per part, never per chunk
    assert is_trusted(spec, path)
    again = ensure_weights(spec, cache)
    assert again == path and parts.asked == 1  # the stamp spared the parts and the hash
    assert sorted(p.name for p in cache.iterdir()) == [".lock", "model.gguf", "model.gguf.verified.json"]


def test_wrong_hash_is_a_clear_error_and_leaves_no_file(parts: Parts, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    expected = "0" * 64
    with pytest.raises(LocalModelError) as error:
        ensure_weights(parts.spec(sha256=expected), cache)
    message = str(error.value)
    assert expected in message and hashlib.sha256(parts.whole).hexdigest() in message
    assert "deleted" in message and "epigraph[local-model]" in message
    assert [p.name for p in cache.iterdir()] == [".lock"]  # no model, no stamp, no temp file


def test_wrong_size_is_refused_even_when_parts_hash_to_their_own_digest(parts: Parts, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with pytest.raises(LocalModelError, match="expected 9,000 bytes"):
        ensure_weights(parts.spec(size=9000), cache)
    assert not (cache / "model.gguf").exists()


def test_a_changed_file_is_hashed_again_and_rebuilt(parts: Parts, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    spec = parts.spec()
    path = ensure_weights(spec, cache)
    path.write_bytes(b"tampered" + parts.whole[8:])  # same size, new mtime, wrong bytes
    assert not is_trusted(spec, path)
    assert ensure_weights(spec, cache).read_bytes() == parts.whole
    assert parts.asked == 2 and is_trusted(spec, path)


def test_a_right_file_without_stamp_is_verified_in_place(parts: Parts, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "model.gguf").write_bytes(parts.whole)
    spec = parts.spec()
    assert not is_trusted(spec, cache / "model.gguf")
    ensure_weights(spec, cache)
    assert parts.asked == 0 and is_trusted(spec, cache / "model.gguf")


def test_missing_part_package_names_the_extra() -> None:
    with pytest.raises(ConfigError) as error:
        package_parts(count=2, module="epigraph_test_no_such_part_{}")
    assert "epigraph-test-no-such-part-1 is not installed" in str(error.value)
    assert "pip install 'epigraph[local-model]'" in str(error.value)


def test_part_package_without_its_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "site" / "epigraph_test_part_1"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "import os\n"
        "def get_part_path():\n"
        "    return os.path.join(os.path.dirname(__file__), 'data', 'part01.bin')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(LocalModelError, match=r"part 1 of the local model is missing: .*part01\.bin"):
        package_parts(count=1, module="epigraph_test_part_{}")
    (package / "data").mkdir()
    (package / "data" / "part01.bin").write_bytes(b"x")
    assert package_parts(count=1, module="epigraph_test_part_{}") == [package / "data" / "part01.bin"]
