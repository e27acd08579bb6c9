"""The ingestion queue: episodes in (``epigraph.episodes.inputs.EpisodeInput``), stored pending, claimed,
run through the per-episode algorithm (``epigraph.pipeline``) in each group's order, results and progress
out (``epigraph.episodes.events``).

``ingestor.Ingestor`` is the one queue every door uses; ``KnowledgeGraph`` builds it. The vocabulary it
speaks with the algorithm is a package of its own below both (``epigraph.episodes``:
``tests/test_layers.py``). Nothing is imported here: importing a module of the queue runs only that one.
"""
