"""The one dependency direction of ARCHITECTURE.md ("Layers"), checked by reading every module's imports.

Each module of ``epigraph`` belongs to a layer (the longest prefix in :data:`LAYERS` wins); a module may
import its own layer and the layers below, never one above. A few sharper rules come on top: the stores
are wired only by ``client``, ingestion and the ask agent do not know each other, the service never
imports the command line, and only ``cli.app`` calls ``asyncio.run``. Imports under ``TYPE_CHECKING`` count
too: a type that must come from above is a sign it lives in the wrong place.

Two rules hold whatever the layers: no import circle between modules (every import counts: at the top,
inside a function or under ``TYPE_CHECKING``; importing ``a.b.c`` also runs the ``__init__`` of each
package on the way that the importer is not itself inside), and no private name (a leading underscore,
a module's or a package's) taken from another package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import epigraph

PACKAGE = Path(epigraph.__file__).parent

LAYERS: dict[str, int] = {
    # One entry a top-level folder or module: a package is one layer, whatever its modules do inside.
    # 0: leaves, any layer may import them
    "epigraph.version": 0,  # the version string, its one source of truth
    "epigraph.errors": 0,
    "epigraph.config": 0,
    "epigraph.usage": 0,  # the tokens of a model call: tokens and prompts.protocol both use it
    "epigraph.language": 0,  # words, stop words, stems: the one place of language mechanics
    "epigraph.tracing": 0,  # OpenTelemetry spans, off by default (imports OpenTelemetry only when on)
    "epigraph.concurrency": 0,  # the one helper that runs steps concurrently (the first error raised as is)
    # 1: the graph: its records and time rules, the store's role Protocols, the two stores
    "epigraph.graph": 1,
    # 2: talking to models; their doubles; showing records; the vocabulary of an episode's road
    "epigraph.tokens": 2,
    "epigraph.llm": 2,
    "epigraph.embed": 2,
    "epigraph.prompts": 2,
    "epigraph.local_model": 2,
    "epigraph.testing": 2,
    "epigraph.present": 2,  # tables, JSON records, frames, drawings, listings: below search, which uses them
    # what goes in (an episode's input), what comes out (results, progress events, report arithmetic):
    # below the algorithm that speaks it, the queue that runs it, the importers and publisher that make it
    "epigraph.episodes": 2,
    # 3: reading the graph
    "epigraph.search": 3,
    # 4: building the graph; asking it
    "epigraph.pipeline": 4,  # the per-episode algorithm (no queue module, no importer)
    "epigraph.importers": 4,  # raw datasets -> EpisodeInput (their only touch of an episode's road)
    "epigraph.edit": 4,  # corrections by hand: builds on the pipeline's summaries
    "epigraph.transfer": 4,  # export and load: a group as a JSON Lines dump, through the Protocol
    "epigraph.ask": 4,
    "epigraph.explore": 4,  # the interactive view: reads through search
    "epigraph.overview": 4,  # communities and conversation summaries (beside pipeline)
    "epigraph.webhooks": 4,  # episode.done / episode.failed posted, signed, retried (the queue's results)
    "epigraph.forget": 4,  # forgetting a subject or old episodes: preview, apply, rebuild (over both)
    "epigraph.privacy": 4,  # personal data replaced at the queue's door (its vault through the store)
    "epigraph.publish": 4,  # the Kafka message of an episode input and its producer (KnowledgeGraph.enqueue)
    # 5: the ingestion queue, which runs the algorithm; its package's __init__ imports nothing
    "epigraph.ingestion": 5,
    # 6: wiring, and the package surface
    "epigraph.client": 6,
    "epigraph.facade": 6,  # a group's handle and its namespaces (client imports them; KnowledgeGraph is one)
    "epigraph": 6,  # the root __init__ only
    # 7: the ways in
    "epigraph.cli": 7,
    "epigraph.serve": 7,
    "epigraph.scale": 7,  # Kafka ingestion workers (`epigraph worker`)
    "epigraph.integrations": 7,  # agent frameworks (LangChain, LangGraph, ...): each over KnowledgeGraph
    "epigraph.__main__": 7,
}

FORBIDDEN: list[tuple[str, str, str]] = [
    # (importer prefix, imported prefix, why)
    ("epigraph.search", "epigraph.graph.embedded", "search reads through the GraphStore Protocol"),
    ("epigraph.search", "epigraph.graph.neo4j", "search reads through the GraphStore Protocol"),
    ("epigraph.pipeline", "epigraph.graph.embedded", "the pipeline writes through the GraphStore Protocol"),
    ("epigraph.pipeline", "epigraph.graph.neo4j", "the pipeline writes through the GraphStore Protocol"),
    ("epigraph.ingestion", "epigraph.graph.embedded", "the queue stores through the GraphStore Protocol"),
    ("epigraph.ingestion", "epigraph.graph.neo4j", "the queue stores through the GraphStore Protocol"),
    ("epigraph.importers", "epigraph.graph.store", "importers make episode inputs, they do not store them"),
    ("epigraph.importers", "epigraph.pipeline", "importers touch ingestion only through EpisodeInput"),
    ("epigraph.ask", "epigraph.graph.embedded", "ask reads through the GraphStore Protocol"),
    ("epigraph.ask", "epigraph.graph.neo4j", "ask reads through the GraphStore Protocol"),
    ("epigraph.overview", "epigraph.graph.embedded", "communities are built through the GraphStore Protocol"),
    ("epigraph.overview", "epigraph.graph.neo4j", "communities are built through the GraphStore Protocol"),
    ("epigraph.edit", "epigraph.graph.embedded", "corrections go through the GraphStore Protocol"),
    ("epigraph.edit", "epigraph.graph.neo4j", "corrections go through the GraphStore Protocol"),
    ("epigraph.transfer", "epigraph.graph.embedded", "dumps go through the GraphStore Protocol"),
    ("epigraph.transfer", "epigraph.graph.neo4j", "dumps go through the GraphStore Protocol"),
    ("epigraph.graph.embedded", "epigraph.graph.neo4j", "the two stores are independent"),
    ("epigraph.graph.neo4j", "epigraph.graph.embedded", "the two stores are independent"),
    ("epigraph.pipeline", "epigraph.ask", "ingestion and the ask agent are independent"),
    ("epigraph.ask", "epigraph.pipeline", "ingestion and the ask agent are independent"),
    ("epigraph.ingestion", "epigraph.ask", "ingestion and the ask agent are independent"),
    ("epigraph.ask", "epigraph.ingestion", "ingestion and the ask agent are independent"),
    ("epigraph.serve", "epigraph.cli", "the service is beside the command line, not on it"),
    ("epigraph.pipeline", "epigraph.ingestion", "the algorithm speaks episodes, not the queue"),
    ("epigraph.present", "epigraph.search", "present draws records; search draws through it"),
    ("epigraph.pipeline.names", "epigraph.pipeline.facts", "facts build on names, not back"),
]


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    path: Path


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int | None:
    """The layer of the longest prefix of ``module`` in LAYERS (``epigraph`` itself is only the root)."""
    prefixes = (p for p in LAYERS if module == p or (p != "epigraph" and module.startswith(p + ".")))
    best = max(prefixes, key=len, default=None)
    return None if best is None else LAYERS[best]


def imports_of(path: Path, module: str | None = None) -> list[Import]:
    """The ``epigraph`` imports of the file at ``path``, read as the module ``module`` (default: its own)."""
    module = module or module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
                if node.module is None:  # `from . import x`: x may be a submodule
                    found += [Import(module, f"{target}.{a.name}", node.lineno, path) for a in node.names]
                    continue
            else:
                target = node.module or ""
            found.append(Import(module, target, node.lineno, path))
        elif isinstance(node, ast.Import):
            found += [Import(module, a.name, node.lineno, path) for a in node.names]
    return [i for i in found if i.imported == "epigraph" or i.imported.startswith("epigraph.")]


def all_imports() -> list[Import]:
    return [i for path in sorted(PACKAGE.rglob("*.py")) for i in imports_of(path)]


def test_every_module_has_a_layer() -> None:
    modules = {module_name(p) for p in PACKAGE.rglob("*.py")}
    unplaced = sorted(m for m in modules if layer_of(m) is None)
    assert modules and not unplaced, (
        f"modules with no layer: {unplaced}; place them in LAYERS (tests/test_layers.py) and in "
        "ARCHITECTURE.md's layer diagram"
    )


def upward(imports: list[Import]) -> list[str]:
    found = []
    for imp in imports:
        mine, theirs = layer_of(imp.importer), layer_of(imp.imported)
        if mine is not None and theirs is not None and theirs > mine:
            found.append(f"{imp.path.name}:{imp.line}: {imp.importer} (layer {mine}) imports {imp.imported} "
                         f"(layer {theirs})")  # fmt: skip
    return found


def test_no_module_imports_a_layer_above_its_own() -> None:
    found = upward(all_imports())
    assert not found, "imports against the dependency direction:\n" + "\n".join(found)


def test_sharper_rules() -> None:
    def under(module: str, prefix: str) -> bool:
        return module == prefix or module.startswith(prefix + ".")

    broken = [
        f"{imp.path.relative_to(PACKAGE.parent)}:{imp.line}: {imp.importer} imports {imp.imported}: {why}"
        for imp in all_imports()
        for importer, imported, why in FORBIDDEN
        if under(imp.importer, importer) and under(imp.imported, imported)
    ]
    assert not broken, "\n".join(broken)


def test_only_client_wires_the_stores() -> None:
    wiring = {
        imp.importer
        for imp in all_imports()
        if imp.imported.startswith(("epigraph.graph.embedded", "epigraph.graph.neo4j"))
        and not imp.importer.startswith(("epigraph.graph.embedded", "epigraph.graph.neo4j"))
    }
    assert wiring == {"epigraph.client"}


def test_only_the_command_line_calls_asyncio_run() -> None:
    callers = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "run"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "asyncio"
            ):
                callers.add(module_name(path))
    assert callers == {"epigraph.cli.app"}


def test_the_checker_sees_upward_imports(tmp_path: Path) -> None:
    """Relative imports are resolved from the module's own package, so a slip in the graph is caught."""
    source = tmp_path / "temporal.py"
    source.write_text(
        "from .model import Fact\nfrom .store import TimeFilter\nfrom .. import search\n"
        "from ..cli import main\nimport epigraph.errors\nimport json\n"
    )
    imports = imports_of(source, "epigraph.graph.temporal")
    assert [i.imported for i in imports] == [
        "epigraph.graph.model",
        "epigraph.graph.store",
        "epigraph.search",
        "epigraph.cli",
        "epigraph.errors",
    ]
    assert [line.split(" imports ")[1] for line in upward(imports)] == [
        "epigraph.search (layer 3)",
        "epigraph.cli (layer 7)",
    ]


def test_one_layer_a_folder() -> None:
    """Each entry of LAYERS is a top-level module or package of ``epigraph`` (a layer is never split inside
    a folder, so a folder holds one layer), and every one of them has an entry."""
    tops = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    tops |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    entries = {name.removeprefix("epigraph.") for name in LAYERS if name != "epigraph"}
    assert not [e for e in entries if "." in e], "a layer inside a folder: move the module to a package"
    assert entries == tops, f"LAYERS and the top-level modules differ: {sorted(entries ^ tops)}"


def test_only_config_reads_the_environment() -> None:
    """``config.py`` is the only reader of ``EPIGRAPH_*``: no other module touches ``os.environ``."""
    readers = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in {"environ", "getenv", "environb"}
                and isinstance(node.value, ast.Name)
                and node.value.id == "os"
            ) or (
                isinstance(node, ast.ImportFrom)
                and node.module == "os"
                and any(a.name in {"environ", "getenv", "environb"} for a in node.names)
            ):
                readers.add(module_name(path))
    assert readers == {"epigraph.config"}


def _absolute_imports() -> Iterator[tuple[str, list[str]]]:
    """Each module of the package, with the top-level names of every absolute import in it (``import
    a.b`` and ``from a.b import c``: ``a``), wherever it stands."""
    for path in PACKAGE.rglob("*.py"):
        names = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names += [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names.append(node.module.split(".")[0])
        yield module_name(path), names


def test_drivers_stay_behind_their_layers() -> None:
    """SQL and Cypher drivers live in their store; the pipeline, search and ask see no driver and no HTTP."""
    homes = {"sqlite3": "epigraph.graph.embedded", "neo4j": "epigraph.graph.neo4j"}
    blind = (
        "epigraph.pipeline",
        "epigraph.ingestion",
        "epigraph.search",
        "epigraph.ask",
        "epigraph.graph.model",
    )
    broken = []
    for module, names in _absolute_imports():
        for name in names:
            home = homes.get(name)
            if home and not (module == home or module.startswith(home + ".")):
                broken.append(f"{module} imports {name} (only {home} may)")
            if name in (*homes, "httpx", "openai") and module.startswith(blind):
                broken.append(f"{module} imports {name}")
    assert not broken, "\n".join(broken)


FRAMEWORKS = {
    "langchain_core": "epigraph.integrations.langchain",
    "langgraph": "epigraph.integrations.langgraph",
    "agents": "epigraph.integrations.openai_agents",
    "pydantic_ai": "epigraph.integrations.pydantic_ai",
}


def test_each_agent_framework_is_imported_only_by_its_adapter() -> None:
    """An optional extra's framework is imported by its own module of ``integrations`` and nowhere else,
    so the package (and every other adapter) imports without it."""
    broken = []
    for module, names in _absolute_imports():
        for name in names:
            if name in FRAMEWORKS and module != FRAMEWORKS[name]:
                broken.append(f"{module} imports {name} (only {FRAMEWORKS[name]} may)")
    assert not broken, "\n".join(broken)


def test_three_rooms_of_ingestion() -> None:
    """The queue (``ingestion``), the per-episode algorithm (``pipeline``) and the importers are three
    packages over one vocabulary (``episodes``): the algorithm and the importers import nothing of the
    queue, the importers of the vocabulary only ``EpisodeInput``'s module, and neither package of the
    queue and its vocabulary runs anything on import."""
    broken = []
    for imp in all_imports():
        into_queue = imp.imported == "epigraph.ingestion" or imp.imported.startswith("epigraph.ingestion.")
        if imp.importer.startswith(("epigraph.pipeline", "epigraph.importers")) and into_queue:
            broken.append(f"{imp.importer} imports {imp.imported}")
        if imp.importer.startswith("epigraph.importers") and imp.imported.startswith("epigraph.episodes"):
            if imp.imported != "epigraph.episodes.inputs":
                broken.append(f"{imp.importer} imports {imp.imported}")
    assert not broken, "\n".join(broken)
    for package in ("ingestion", "episodes", "pipeline", "pipeline/names", "pipeline/facts"):
        assert not imports_of(PACKAGE / package / "__init__.py"), package
    queue = {"ingestor", "runner", "background", "batch_end", "retry", "claims", "pacing"}
    queue |= {"inputs", "events", "reports", "outcome"}
    assert not {p.stem for p in (PACKAGE / "pipeline").rglob("*.py")} & queue
    assert not (PACKAGE / "pipeline" / "importers").exists()


def _calls(path: Path) -> list[str]:
    """The names called in the module at ``path`` (``f(...)``: f; ``x.f(...)``: f)."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            names.append(func.id if isinstance(func, ast.Name) else getattr(func, "attr", ""))
    return names


def test_one_ingestion_queue() -> None:
    """The road of an episode (ARCHITECTURE.md): every door connects to ``KnowledgeGraph.ingestor``, the one
    queue, which ``client`` alone builds; an episode is written only by the queue (``pending``: accepted,
    set pending again; ``runner``: done by the run's one write, failed; ``batch_end``: a summary refresh
    re-upserting a done episode)."""
    status_writers = {f"epigraph.ingestion.{m}" for m in ("pending", "runner", "batch_end")}
    stores = ("epigraph.graph.embedded", "epigraph.graph.neo4j")
    writes = {"save_episode", "write_episode", "write_episodes"}
    builders, writers = set(), set()
    for path in PACKAGE.rglob("*.py"):
        module, called = module_name(path), set(_calls(path))
        if "Ingestor" in called:
            builders.add(module)
        if writes & called and not module.startswith(stores):
            writers.add(module)
    assert builders == {"epigraph.client"}, "only KnowledgeGraph builds the ingestion queue"
    assert writers == status_writers, f"stored off the queue's road: {sorted(writers ^ status_writers)}"


def test_the_queue_is_built_once() -> None:
    """Nothing sets a part of the ingestion queue after it is built (``kg.ingestor.llm = ...``): it holds
    one store and one model, paced or not as given, and its after-batch work, from construction."""
    broken = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else []
            targets += [node.target] if isinstance(node, ast.AnnAssign | ast.AugAssign) else []
            for target in targets:
                owner = target.value if isinstance(target, ast.Attribute) else None
                name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
                if name in {"ingestor", "_ingestor", "queue"}:
                    broken.append(f"{module_name(path)}:{node.lineno}")
    assert not broken, "a part of the ingestion queue set after it was built: " + ", ".join(broken)


def test_one_after_batch_step() -> None:
    """What runs after a batch (conversations, communities: ``overview.Upkeep``) is built once, by
    ``client`` as the queue's ``after_batch``; the queue ends every batch with one call
    (``run_batch_end``: the summaries its groups owe, then that work), from its doors that run now and its
    background passes; the Kafka worker, whose lanes alone know where a batch of deliveries ends, is the
    only door that ends one from outside (``finish_batch``); summaries are refreshed only there."""
    names = ("Upkeep", "run_batch_end", "finish_batch", "refresh_summaries", "_pay_summaries", "_after_batch")
    callers: dict[str, set[str]] = {name: set() for name in names}
    for path in PACKAGE.rglob("*.py"):
        module, called = module_name(path), set(_calls(path))
        for name, found in callers.items():
            if name in called:
                found.add(module)
    assert callers["Upkeep"] == {"epigraph.client"}
    assert callers["run_batch_end"] == {"epigraph.ingestion.ingestor", "epigraph.ingestion.background"}
    assert callers["finish_batch"] == {"epigraph.scale.worker"}
    assert callers["refresh_summaries"] == callers["_pay_summaries"] == {"epigraph.ingestion.batch_end"}
    assert callers["_after_batch"] == {"epigraph.ingestion.batch_end"}


STORE_WRITES = frozenset(
    {"save_episode", "write_episode", "write_episodes", "delete_episode", "claim_episode", "release_episode"}
    | {"replace_communities", "save_conversation_summary", "apply_correction", "load_group", "delete_group"}
    | {"setup", "close"}
)
"""The store's methods that change what it holds (``graph/store.py``'s, ``store_roles.py``'s Protocols)."""


def _status_settings(tree: ast.AST) -> list[int]:
    """The lines of ``tree`` that set an episode's status: a ``status=`` argument, a ``"status"`` key of a
    dict (``model_copy(update={"status": ...})``), an assignment to ``.status``, or ``EpisodeStatus``
    used anywhere but in a comparison (``stored.status == EpisodeStatus.DONE`` reads it)."""
    compared = {
        id(n) for node in ast.walk(tree) if isinstance(node, ast.Compare) for n in ast.walk(node)
    }
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "status":
            lines.append(node.value.lineno)
        elif isinstance(node, ast.Dict) and any(
            isinstance(k, ast.Constant) and k.value == "status" for k in node.keys
        ):
            lines.append(node.lineno)
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Attribute) and t.attr == "status" for t in targets):
                lines.append(node.lineno)
        elif isinstance(node, ast.Name) and node.id == "EpisodeStatus" and id(node) not in compared:
            lines.append(node.lineno)
    return lines


def test_the_pipeline_computes_and_the_queue_writes() -> None:
    """No module under ``epigraph/pipeline/`` calls a method of the store that writes, or sets an episode's
    status: the algorithm returns the write it wants (``episodes.outcome.EpisodeOutcome``, a refresh's
    ``Refresh.write``), and the queue stamps the status and performs it (``ingestion.runner``,
    ``ingestion.batch_end``)."""
    from epigraph.graph import store, store_roles

    declared = [v for module in (store, store_roles) for v in vars(module).values()]
    protocols = [v for v in declared if isinstance(v, type) and getattr(v, "_is_protocol", False)]
    methods = {name for p in protocols for name in vars(p) if not name.startswith("_")}
    assert STORE_WRITES <= methods, f"not the store's methods: {sorted(STORE_WRITES - methods)}"
    broken = []
    for path in sorted((PACKAGE / "pipeline").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(PACKAGE.parent)
        broken += [f"{where}: calls {name}" for name in sorted(set(_calls(path)) & STORE_WRITES)]
        broken += [f"{where}:{line}: sets an episode status" for line in _status_settings(tree)]
    assert not broken, "\n".join(broken)


def test_the_checker_sees_writes_and_statuses(tmp_path: Path) -> None:
    source = tmp_path / "episode.py"
    source.write_text(
        "done = episode.model_copy(update={'status': EpisodeStatus.DONE})\n"
        "failed = Episode(status=s)\n"
        "episode.status = x\n"
        "state = EpisodeStatus.FAILED\n"
        "if stored.status == EpisodeStatus.DONE:\n"
        "    await store.write_episode(write)\n"
    )
    assert sorted(set(_status_settings(ast.parse(source.read_text())))) == [1, 2, 3, 4]
    assert set(_calls(source)) & STORE_WRITES == {"write_episode"}


def modules_of(root: Path) -> dict[str, Path]:
    """Every module of the package at ``root`` by dotted name (a package by its ``__init__``)."""

    def name(path: Path) -> str:
        parts = path.relative_to(root.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    return {name(path): path for path in sorted(root.rglob("*.py"))}


def _from_imports(path: Path, module: str) -> Iterator[tuple[ast.ImportFrom | ast.Import, str, list[str]]]:
    """Each import statement of the file: the node, its absolute target and the names it takes."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            yield node, target, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name, []


def _package(module: str, modules: dict[str, Path]) -> str:
    return module if modules[module].name == "__init__.py" else module.rpartition(".")[0]


def module_graph(root: Path) -> dict[str, set[str]]:
    """Which modules each module of the package at ``root`` makes Python run, by importing them."""
    modules = modules_of(root)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        mine = module.split(".")
        for _, target, names in _from_imports(path, module):
            wanted = [f"{target}.{n}" for n in names if f"{target}.{n}" in modules] + [target]
            for name in wanted:
                parts = name.split(".")
                for end in range(1, len(parts) + 1):  # each package on the way, then the module
                    run = ".".join(parts[:end])
                    if run in modules and run != module and parts[:end] != mine[:end]:
                        graph[module].add(run)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: its strongly connected parts of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                part.append(top)
                if top == node:
                    break
            if len(part) > 1 or node in graph.get(node, ()):
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def private_imports(root: Path) -> list[str]:
    """Private names (``_x``: a function, class, constant, module or package) taken across packages."""
    modules = modules_of(root)
    found = []
    for module, path in modules.items():
        mine = _package(module, modules)
        for node, target, names in _from_imports(path, module):
            if not target.startswith(root.name):
                continue
            for full in [f"{target}.{n}" for n in names] or [target]:
                parts = full.split(".")
                for end, part in enumerate(parts):
                    if not part.startswith("_") or part.startswith("__"):
                        continue
                    holder = ".".join(parts[:end])  # the module or package the private name is in
                    owner = _package(holder, modules) if holder in modules else holder
                    if owner != mine:
                        found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {module} takes {full}")
                    break
    return found


def test_no_import_circles() -> None:
    found = circles(module_graph(PACKAGE))
    assert not found, "import circles (each works only by import order):\n" + "\n".join(map(str, found))


def test_no_private_name_is_taken_across_packages() -> None:
    found = private_imports(PACKAGE)
    assert not found, "make the name public where it lives, or move it:\n" + "\n".join(found)


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def test_the_checker_sees_circles(tmp_path: Path) -> None:
    """The two circles issue 29 found: one through a package's ``__init__`` (tokens -> prompts.protocol
    runs prompts/__init__, which imports runtime, which imports tokens), one through an import inside a
    function (app's factory imports the routes, which import app); a plain import and a module's own
    package (a submodule importing a sibling while the package runs) are no circle."""
    root = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/tokens.py": "from .prompts.protocol import Usage\n",
            "pkg/prompts/__init__.py": "from .protocol import Usage\nfrom .runtime import run\n",
            "pkg/prompts/protocol.py": "class Usage: ...\n",
            "pkg/prompts/runtime.py": "from ..tokens import count\nfrom . import protocol\n",
            "pkg/serve/__init__.py": "",
            "pkg/serve/app.py": "def create_app():\n    from . import routes\n",
            "pkg/serve/routes.py": "import typing\nif typing.TYPE_CHECKING:\n    from .app import Group\n",
            "pkg/leaf.py": "import pkg.prompts.protocol\n",
        },
    )
    graph = module_graph(root)
    assert graph["pkg.tokens"] == {"pkg.prompts", "pkg.prompts.protocol"}
    assert graph["pkg.prompts.runtime"] == {"pkg.tokens", "pkg.prompts.protocol"}
    assert circles(graph) == [
        ["pkg.prompts", "pkg.prompts.runtime", "pkg.tokens"],
        ["pkg.serve.app", "pkg.serve.routes"],
    ]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert circles({"a": {"a"}}) == [["a"]]


def test_the_checker_sees_private_names_across_packages(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/search/__init__.py": "",
            "pkg/search/entity.py": "async def _pick(): ...\n",
            "pkg/search/_tasks.py": "async def gather(): ...\n",
            "pkg/search/engine.py": "from ._tasks import gather\nfrom .entity import _pick\n",
            "pkg/explore/__init__.py": "",
            "pkg/explore/gather.py": (
                "from ..search._tasks import gather\nfrom ..search.entity import _pick, __doc__\n"
                "import pkg.search._tasks\nfrom ..search import _tasks\n"
            ),
        },
    )
    assert [line.split(": ", 1)[1] for line in private_imports(root)] == [
        "pkg.explore.gather takes pkg.search._tasks.gather",
        "pkg.explore.gather takes pkg.search.entity._pick",
        "pkg.explore.gather takes pkg.search._tasks",
        "pkg.explore.gather takes pkg.search._tasks",
    ]
