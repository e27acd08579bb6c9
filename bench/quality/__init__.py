"""Benches of what the graph gets right: a live model against the gold sets, question answering on
LoCoMo, the one-call context, the gold sets' own checks."""
