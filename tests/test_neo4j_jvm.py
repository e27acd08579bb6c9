"""tools/neo4j/jvm.py: which Java runs the dev server, and the Lucene version-gate patch (no Java run)."""

from __future__ import annotations

import importlib.util
import sys
import zipfile
from pathlib import Path

import pytest

_PATH = Path(__file__).parents[1] / "tools/neo4j/jvm.py"
_SPEC = importlib.util.spec_from_file_location("epigraph_tools_neo4j_jvm", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
jvm = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = jvm  # dataclasses look their module up there
_SPEC.loader.exec_module(jvm)


def _lucene(lib: Path, class_bytes: bytes, name: str = "lucene-core-9.11.1.jar") -> None:
    lib.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(lib / name, "w") as jar:
        jar.writestr(jvm.GATE_CLASS, class_bytes)


def test_the_gate_patch_raises_only_the_upper_bound(tmp_path: Path) -> None:
    lower = bytes([0x1B, 0x10, 20, 0xA1])  # iload_1; bipush 20; if_icmplt: the lower bound stays
    original = b"\xca\xfe\xba\xbe" + lower + b"\x00" + jvm.GATE_CODE + b"\x00\x01"
    _lucene(tmp_path / "lib", original)
    out = jvm.patched_gate(tmp_path / "lib", 25, tmp_path / "gate")
    assert out == tmp_path / "gate"
    patched = (out / jvm.GATE_CLASS).read_bytes()
    assert patched == original.replace(jvm.GATE_CODE, bytes([0x1B, 0x10, 25, 0xA3]))
    assert lower in patched


@pytest.mark.parametrize(
    "class_bytes",
    [b"\xca\xfe\xba\xbe no gate here", b"\xca\xfe" + jvm.GATE_CODE + b"\x00" + jvm.GATE_CODE],
    ids=["missing", "ambiguous"],
)
def test_unexpected_bytes_are_not_patched(tmp_path: Path, class_bytes: bytes) -> None:
    _lucene(tmp_path / "lib", class_bytes)
    assert jvm.patched_gate(tmp_path / "lib", 25, tmp_path / "gate") is None
    assert not (tmp_path / "gate").exists()


def test_another_lucene_version_is_not_patched(tmp_path: Path) -> None:
    _lucene(tmp_path / "lib", jvm.GATE_CODE, name="lucene-core-9.12.3.jar")
    assert jvm.patched_gate(tmp_path / "lib", 25, tmp_path / "gate") is None


@pytest.mark.parametrize(
    ("major", "module", "simd_flags", "patched"),
    [(17, True, False, False), (21, True, True, False), (21, False, False, False), (25, True, True, True)],
)
def test_simd_setup_by_java_version(
    tmp_path: Path, major: int, module: bool, simd_flags: bool, patched: bool
) -> None:
    _lucene(tmp_path / "lib", b"\xca\xfe" + jvm.GATE_CODE)
    java = jvm.Java(path="/x/bin/java", major=major, has_vector_module=module)
    flags, classpath, described = jvm.simd_setup(java, tmp_path / "lib", tmp_path)
    assert (flags == ["--add-modules=jdk.incubator.vector"]) is simd_flags
    assert bool(classpath) is patched
    assert described.startswith(f"Java {major}: Lucene vector code {'SIMD' if simd_flags else 'scalar'}")
