"""The per-episode algorithm: extract, ground, resolve, date, retire, summarize, write (DESIGN.md §5).

``episode.ingest_episode`` runs one episode, ``bulk.extract_window`` extracts a window of them at once;
the queue that calls them is ``epigraph.ingestion``. Nothing is imported here, so importing a module of
the algorithm runs only what it needs.
"""
