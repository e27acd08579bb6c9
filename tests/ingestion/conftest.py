"""The queue's tests share the pipeline tests' fixtures and scripted world (``tests/pipeline/conftest.py``,
``tests/pipeline/world.py``; tests/ is on sys.path), imported rather than written twice."""

from __future__ import annotations

from pipeline.conftest import T0, embedder, store

__all__ = ["T0", "embedder", "store"]
