"""Benches of what survives faults: crashes and store faults under ingestion, the HTTP API fuzzed."""
