"""The names room: every rule about the names an episode's extraction writes, from a reply's line to an
entity of the graph. Its entry point is :class:`~.resolver.EntityResolver` (one per episode), which the
episode's lines reach through :class:`~.reply.Reply`; in this order:

1. **repaired** as each line arrives (``reply``, for entity names and fact ends alike): ``title`` (a
   quoted title, ``repair``), ``possessor`` (a bare possessive of a name, ``repair``), ``owned`` (the
   speaker's "my X", ``speaker``);
2. **admitted** (``gates``, ``EntityResolver.add``): ``not_an_entity`` and ``grounded`` (the hallucination
   check, ``grounding`` with ``policy``'s word lists), ``thing`` (noun phrases of the message,
   ``things`` and ``tagging``), then ``unowned`` and ``kin`` (bare names given their owner, ``bare``);
3. **resolved** against the graph (``EntityResolver.finish``): an exact name or alias (the speaker's own
   for a bare name); the one entity a bare noun heads (``bare``); the same thing named twice in a
   reply; else the candidates of ``matching`` (lexical rules, ``NameOptions.never_same`` vetoes, name
   vectors): none, a new entity; some, a question for the episode's one resolve call, whose answers
   :meth:`~.resolver.EntityResolver.settle` applies (called by the facts room, which makes that call).

The refusals and changes of steps 1 and 2 come back as verdicts (``EntityResolver.verdicts``); the
outcome of step 3 is each ``EntityResolved`` event's. The options are ``NameOptions``. Nothing is
imported here, so importing one module of the room runs only what it needs.
"""
