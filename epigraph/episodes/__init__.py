"""The vocabulary of an episode's road, spoken by the queue and the per-episode algorithm alike.

- :mod:`.inputs` — ``EpisodeInput`` (what goes in: content, speaker, reference time, group, ...) and the
  parser of JSON Lines episode files;
- :mod:`.events` — what comes out: ``EpisodeResult`` and the typed progress events (``EpisodeDone``,
  ``EntityResolved``, ``FactInvalidated``, ...);
- :mod:`.outcome` — what the algorithm hands the queue: ``EpisodeOutcome``, the one write an episode
  wants (the queue stamps its status and performs it) and its result;
- :mod:`.reports` — the arithmetic of ingest reports (``merge_reports``);
- :mod:`.verdicts` — ``Verdict``: what one gate of the algorithm refused or changed, and why.

It sits below both the pipeline (``epigraph.pipeline``), which speaks it, and the queue
(``epigraph.ingestion``), which runs the pipeline, and below the importers and the publisher, which make
episode inputs (``tests/test_layers.py``). Nothing is imported here, so importing one module runs no other.
"""
