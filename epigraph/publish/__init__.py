"""Publishing episodes to Apache Kafka (extra ``kafka``: aiokafka, imported only when a producer starts).

:mod:`.envelope` is the episodes topic's message (one validated episode input, keyed by group);
:mod:`.producer` publishes them (``KnowledgeGraph.enqueue``, ``--to-kafka``). This is the side below
:mod:`epigraph.client`; the workers that consume the topic (:mod:`epigraph.scale`) sit above it and read
the same envelope, so the two packages never import each other both ways.
"""
