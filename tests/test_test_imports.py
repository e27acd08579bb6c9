"""How the tests reach what they share: through ``tests/support/`` (modules that are not tests), the
fixtures of ``conftest.py`` files, and ``bench.shared`` for the bench's harnesses, with the repository's
root on the path (pytest's ``pythonpath``), never by editing ``sys.path``. So no test module imports
another test module or a conftest (each would run twice, under two names, and a test would depend on
another's file), and the bench never imports the tests.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
SUPPORT = "tests.support"


def modules(folder: Path) -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(folder.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def is_sys_path(node: ast.AST) -> bool:
    """``sys.path`` (or ``sys.path[...]``)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def path_edits(tree: ast.Module) -> list[int]:
    """Lines that change ``sys.path``: a call of one of its methods, or an assignment to it."""
    lines = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and is_sys_path(node.func.value)
        ):
            lines.append(node.lineno)
        targets = node.targets if isinstance(node, ast.Assign) else []
        targets += [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else []
        lines += [node.lineno for t in targets if is_sys_path(t)]
    return lines


def imported(tree: ast.Module, path: Path) -> Iterator[tuple[int, str]]:
    """Every module the file imports, absolute (a relative import resolved against its package)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                yield node.lineno, ".".join([*base, *([node.module] if node.module else [])])
            else:
                yield node.lineno, node.module or ""
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)


def test_no_test_module_edits_sys_path() -> None:
    found = [f"{p.relative_to(ROOT)}:{n}" for p, tree in modules(TESTS) for n in path_edits(tree)]
    assert not found, (
        "sys.path changed in the tests (use tests/support and conftest fixtures):\n" + "\n".join(found)
    )


def path_only_names() -> set[str]:
    """Top-level names a folder on the path would answer: the modules and folders under tests/ (a
    ``pipeline.world``), and the modules of bench/, examples/, docs/ and tools/ (``quickstart``; the
    bench's old ``_serve_harness``), which a test reaches through their package or not at all."""
    under_tests = {p.stem for p in TESTS.rglob("*.py")} | {p.name for p in TESTS.rglob("*") if p.is_dir()}
    elsewhere = {
        p.stem for folder in ("bench", "examples", "docs", "tools") for p in (ROOT / folder).rglob("*.py")
    }
    return under_tests | elsewhere


def found_outside_tests(top: str) -> bool:
    """Whether ``top`` is importable with the path as it is, and not from inside tests/."""
    spec = importlib.util.find_spec(top)
    if spec is None:
        return False
    origin = Path(spec.origin or next(iter(spec.submodule_search_locations or []), ""))
    return TESTS not in origin.resolve().parents


def test_tests_import_only_the_support_package_of_the_tests() -> None:
    """Inside tests/, the only tests modules imported are those of ``tests.support`` (no conftest, no
    test module); a bare name only a folder put on the path would answer is not imported."""
    path_only = path_only_names()
    broken = []
    for path, tree in modules(TESTS):
        for line, module in imported(tree, path):
            top, last = module.split(".")[0], module.rpartition(".")[2]
            a_test = last == "conftest" or last.startswith("test_")
            if module.startswith("tests.") and (not module.startswith(SUPPORT + ".") or a_test):
                broken.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
            elif (
                top != "tests" and (top in path_only or top.startswith("_")) and not found_outside_tests(top)
            ):
                broken.append(
                    f"{path.relative_to(ROOT)}:{line} imports {module} (only a path insert finds it)"
                )
    assert not broken, "\n".join(broken)
    assert str(TESTS) not in sys.path, "tests/ itself is not on the path: the tests are the package `tests`"


def test_the_support_package_holds_no_test() -> None:
    support = TESTS / "support"
    assert not sorted(support.rglob("test_*.py")) and not (support / "conftest.py").exists()


def test_the_bench_never_imports_the_tests() -> None:
    broken = [
        f"{p.relative_to(ROOT)}:{line} imports {module}"
        for p, tree in modules(ROOT / "bench")
        for line, module in imported(tree, p)
        if module.split(".")[0] == "tests"
    ]
    assert not broken, "\n".join(broken)
