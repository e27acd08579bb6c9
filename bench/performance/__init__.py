"""Benches of speed and cost: the stores, ingestion, search, import, the view, the server, Kafka workers,
communities, the local model's server."""
