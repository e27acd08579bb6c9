"""Scale-out ingestion through Apache Kafka (extra ``kafka``: aiokafka).

Producers publish episodes to a topic keyed by group id (one group stays on one partition, so in order);
``epigraph worker`` processes (:mod:`epigraph.scale.worker`) form a consumer group, ingest their
partitions' episodes one at a time per partition into the shared store (Neo4j), and commit an offset only
once its episode is written. Nothing here is imported by ``epigraph`` itself: importing a submodule needs
aiokafka.
"""
