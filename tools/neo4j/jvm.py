"""Which Java runs the dev server, and Lucene's SIMD vector code on it (README.md "Performance").

Lucene 9.11 (inside Neo4j 5.26) computes the HNSW indexes' vector similarities with Java's incubating
Vector API when the JVM has the ``jdk.incubator.vector`` module (``--add-modules``, which Neo4j's docs
recommend for vector indexes) and a feature version from 20 to 22; anywhere else it uses scalar loops,
which made a bulk write here ~2x slower. This machine has Java 17 (too old) and Temurin 25 (newer than
Lucene 9.11's upper bound). Lucene 9.12 made that bound a system property
(``org.apache.lucene.vectorization.upperJavaFeatureVersion``), but Neo4j 5.26 cannot run on Lucene 9.12
(its ``Lucene99Codec`` left lucene-core). So for Java 23+ this module backports the knob: a copy of
Lucene 9.11.1's ``VectorizationProvider.class`` whose upper bound (the operand of one ``bipush 22``) is
the JVM's version, put ahead of lucene-core on the classpath. The patch is checked byte for byte; if the
jar differs, the server runs without SIMD and says so.

Choice: ``NEO4J_JAVA`` if set; else the first of: a JDK 20-22 with the module (Lucene's own range), the
newest JDK 23+ with it (with the patch), ``java`` on PATH. JDKs are looked for on PATH, in JAVA_HOME and
in /usr/lib/jvm. Standard library only.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

VECTOR_MODULE = "jdk.incubator.vector"
LUCENE_RANGE = range(20, 23)  # feature versions Lucene 9.11 enables the Vector API on by itself
GATE_CLASS = "org/apache/lucene/internal/vectorization/VectorizationProvider.class"
# In VectorizationProvider.lookup: `iload_1; bipush 22; if_icmpgt` (runtime version > 22: no SIMD).
GATE_CODE = bytes([0x1B, 0x10, 22, 0xA3])


@dataclass(frozen=True)
class Java:
    path: str
    major: int
    has_vector_module: bool

    @property
    def simd(self) -> bool:
        return self.has_vector_module and self.major >= LUCENE_RANGE.start


@functools.cache
def probe(path: str) -> Java | None:
    """The Java at ``path`` (``None`` if it does not run)."""
    try:
        out = subprocess.run(
            [path, "-XshowSettings:properties", "-version"], capture_output=True, text=True, timeout=30
        ).stderr
        modules = subprocess.run([path, "--list-modules"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"java\.specification\.version = (\d+)", out)
    if not m:
        return None
    return Java(path, int(m.group(1)), f"{VECTOR_MODULE}@" in modules)


def installed() -> list[Java]:
    paths = [shutil.which("java"), os.environ.get("JAVA_HOME") and f"{os.environ['JAVA_HOME']}/bin/java"]
    paths += sorted(str(p) for p in Path("/usr/lib/jvm").glob("*/bin/java"))
    seen, found = set(), []
    for path in filter(None, paths):
        real = os.path.realpath(path)
        if real not in seen and (java := probe(path)) is not None:
            seen.add(real)
            found.append(java)
    return found


def choose() -> Java:
    """The Java to run the server with (see the module docstring)."""
    if forced := os.environ.get("NEO4J_JAVA"):
        java = probe(forced)
        if java is None:
            raise RuntimeError(f"NEO4J_JAVA={forced} does not run")
        return java
    javas = installed()
    if not javas:
        raise RuntimeError("no Java found (PATH, JAVA_HOME, /usr/lib/jvm); set NEO4J_JAVA")
    native = [j for j in javas if j.simd and j.major in LUCENE_RANGE]
    newer = sorted((j for j in javas if j.simd and j.major > LUCENE_RANGE[-1]), key=lambda j: -j.major)
    on_path = [j for j in javas if shutil.which("java") and j.path == shutil.which("java")]
    return (native or newer or on_path or javas)[0]


def patched_gate(lib: Path, major: int, dest: Path) -> Path | None:
    """A classpath directory holding Lucene's VectorizationProvider with its upper bound set to ``major``
    (``None`` if lucene-core in ``lib`` does not hold the exact bytes this patch expects)."""
    jars = sorted(lib.glob("lucene-core-9.11.*.jar"))
    if len(jars) != 1:
        return None
    with zipfile.ZipFile(jars[0]) as jar:
        code = bytearray(jar.read(GATE_CLASS))
    at = code.find(GATE_CODE)
    if at < 0 or code.find(GATE_CODE, at + 1) >= 0:
        return None
    code[at + 2] = min(major, 127)  # bipush takes a signed byte
    target = dest / GATE_CLASS
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(bytes(code))
    return dest


def simd_setup(java: Java, lib: Path, work: Path) -> tuple[list[str], list[str], str]:
    """(JVM flags, classpath entries to put first, a one-line description) for Lucene SIMD on ``java``."""
    if not java.simd:
        return [], [], f"Java {java.major}: Lucene vector code scalar (no {VECTOR_MODULE} on Java 20+)"
    flags = [f"--add-modules={VECTOR_MODULE}"]
    if java.major in LUCENE_RANGE:
        return flags, [], f"Java {java.major}: Lucene vector code SIMD"
    gate = patched_gate(lib, java.major, work / f"lucene-gate-{java.major}")
    if gate is None:
        return [], [], f"Java {java.major}: Lucene vector code scalar (unexpected lucene-core, not patched)"
    described = f"Java {java.major}: Lucene vector code SIMD (upper bound raised to {java.major})"
    return flags, [str(gate)], described
