"""The ingestion queue: episodes in (``inputs.EpisodeInput``), stored pending, claimed, run through the
per-episode algorithm (``epigraph.pipeline``) in each group's order, results and progress out
(``events``).

``ingestor.Ingestor`` is the one queue every door uses; ``KnowledgeGraph`` builds it. Nothing is imported
here: the queue's vocabulary (``inputs``, ``events``, ``reports``) sits below the algorithm that speaks it
(``tests/test_layers.py``), and importing it must not run the queue.
"""
