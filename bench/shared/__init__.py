"""What several benches use: results files, the machine, paths, gold sets, stores, the serve and scale
harnesses (the serve and Kafka worker tests use the harnesses too)."""
