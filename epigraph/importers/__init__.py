"""Raw chat and document datasets -> episodes, through validated field mappings (DESIGN.md section 7).

The API the CLI uses::

    plan = await plan_import(path, mapping="auto" | "m.json", llm=llm_or_None, group_id="g")
    print(render_plan(plan))                                  # --show-mapping
    print(render_dry_run(dry_run(plan, show=5, limit=N)))     # --dry-run
    for item in iter_inputs(plan, limit=N, skip_invalid=flag):
        ...                              # EpisodeInput for Ingestor.ingest, or an InvalidRecord to report

``plan_without_llm`` is the synchronous variant for given mappings and known shapes. The mapping format
is documented in :mod:`.mapping`, the path syntax in :mod:`.paths`, the known shapes in :mod:`.detect`.
"""

from .convert import Converter, ConvertStats, to_episode
from .detect import Detection, detect
from .mapping import (
    Mapping,
    MessagesMapping,
    MessageSpec,
    Meta,
    PathRef,
    TextMapping,
    Value,
    load_mapping,
    mapping_json,
    parse_mapping,
    save_mapping,
)
from .plan import ImportPlan, iter_episodes, iter_inputs, plan_import, plan_without_llm
from .preview import DryRun, dry_run, render_dry_run, render_episodes, render_plan
from .readers import InvalidRecord, RawRecord, read_records, sample_records
from .validate import IrrelevantDataset, MappingError, compile_mapping

__all__ = [
    "ConvertStats",
    "Converter",
    "Detection",
    "DryRun",
    "ImportPlan",
    "InvalidRecord",
    "IrrelevantDataset",
    "Mapping",
    "MappingError",
    "MessageSpec",
    "MessagesMapping",
    "Meta",
    "PathRef",
    "RawRecord",
    "TextMapping",
    "Value",
    "compile_mapping",
    "detect",
    "dry_run",
    "iter_episodes",
    "iter_inputs",
    "load_mapping",
    "mapping_json",
    "parse_mapping",
    "plan_import",
    "plan_without_llm",
    "read_records",
    "render_dry_run",
    "render_episodes",
    "render_plan",
    "sample_records",
    "save_mapping",
    "to_episode",
]
