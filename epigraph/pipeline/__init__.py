"""The per-episode algorithm: extract, ground, resolve, date, retire, summarize (DESIGN.md §5); it
computes the one write an episode wants and writes nothing (``episodes.outcome``).

``episode.ingest_episode`` runs one episode, ``bulk.extract_window`` extracts a window of them at once;
the rules about names are the names room (``names/``), the rules about facts the facts room
(``facts/``), each with one entry point and its gates in a stated order; ``options`` holds every knob,
grouped by room. The queue that calls the algorithm is ``epigraph.ingestion``. Nothing is imported
here, so importing a module of the algorithm runs only what it needs.
"""
