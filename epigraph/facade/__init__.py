"""The method groups of :class:`~epigraph.client.KnowledgeGraph`, each in a module of its own: the
facade's class is assembled from them in ``client``, which alone wires concrete backends."""
