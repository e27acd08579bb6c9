"""``python -m bench NAME [ARGS...]``: run one bench with its own arguments (``--help`` for them);
``python -m bench`` lists the benches, one line each (the first line of each one's docstring).

A bench is a module of ``bench/performance/``, ``bench/quality/`` or ``bench/robustness/`` named in
:data:`BENCHES` and run as if by ``python -m`` (its ``if __name__ == "__main__":`` part); a new one is
``bench/<kind>/<name>.py`` and a line here (``bench/README.md``)."""

from __future__ import annotations

import ast
import runpy
import sys
from collections.abc import Sequence
from importlib.util import find_spec

BENCHES = {
    "store": "bench.performance.store",
    "ingest": "bench.performance.ingest",
    "search": "bench.performance.search",
    "import": "bench.performance.import_",
    "view": "bench.performance.view",
    "serve": "bench.performance.serve",
    "scale": "bench.performance.scale",
    "communities": "bench.performance.communities",
    "local_server": "bench.performance.local_server",
    "observe": "bench.performance.observe",
    "forget": "bench.performance.forget",
    "hosted": "bench.performance.hosted",
    "window": "bench.performance.window",
    "vector_index": "bench.performance.vector_index",
    "live": "bench.quality.live",
    "locomo_qa": "bench.quality.locomo_qa",
    "qa_context": "bench.quality.qa_context",
    "check_gold": "bench.quality.check_gold",
    "fault": "bench.robustness.fault",
    "fuzz": "bench.robustness.fuzz",
    "privacy": "bench.robustness.privacy",
}
"""Every bench by the name it is run by; ``import_`` because ``import`` is a keyword."""


def summary(module: str) -> str:
    """The first line of ``module``'s docstring, read without importing it (a bench imports a lot)."""
    spec = find_spec(module)
    if spec is None or spec.origin is None:
        raise LookupError(f"{module}: no such module")
    with open(spec.origin, encoding="utf-8") as source:
        doc = ast.get_docstring(ast.parse(source.read(), spec.origin)) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def listing() -> str:
    width = max(map(len, BENCHES))
    kinds: dict[str, list[str]] = {}
    for name, module in BENCHES.items():
        kinds.setdefault(module.split(".")[1], []).append(f"  {name:{width}}  {summary(module)}")
    lines = ["usage: python -m bench NAME [ARGS...]   (python -m bench NAME --help: its arguments)"]
    for kind, rows in kinds.items():
        lines += ["", f"{kind}:", *rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bench ``argv[0]`` with the rest of ``argv`` as its arguments; its exit is this one's."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(listing())
        return 0
    name, rest = args[0], args[1:]
    if name not in BENCHES:
        print(f"python -m bench: no bench named {name!r}\n\n{listing()}", file=sys.stderr)
        return 2
    called = sys.argv
    sys.argv = [name, *rest]  # runpy puts the module's file first, as python -m does
    try:
        runpy.run_module(BENCHES[name], run_name="__main__", alter_sys=True)
    finally:
        sys.argv = called
    return 0


if __name__ == "__main__":
    sys.exit(main())
