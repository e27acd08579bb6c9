"""The facts room: every rule about an episode's fact lines, from a line of the reply to the graph's
facts as the episode leaves them. Its one entry point is :func:`~.settle.settle_facts`, which runs, in
this order (its module docstring names each step):

1. **drafts** (``drafts``): each line mapped onto the episode's entities (the names room's), its
   relation normalized (``wording``), checked against the declared types and dated from its own words
   (``epigraph.pipeline.dating``), through the gates ``grounded``, ``endpoints``, ``two_ends``,
   ``relation``, ``types``, ``stated_dates``, ``repeat``;
2. **said again** in the episode (``restatements``, by meaning: ``restated_in_episode``);
3. **candidates** (``candidates``): the believed facts it is compared with, scoped by structure, ranked
   by meaning;
4. **decided** (``resolution``): repeated word for word or by meaning, new without candidates, or by
   the episode's ONE resolve call (``resolve_call``), whose retirements are checked (``retirements``:
   a restatement is no retirement, ``retire_all_guard``; ``FactOptions.retire``);
5. **applied** (``resolution.apply``): provenance extended, contradictions retired (``graph.temporal``).

Every refusal or change comes back as a verdict (``SettledFacts.verdicts``), every draft's decision
with what decided it (``Decision.by``). The options are ``FactOptions``. The room builds on the names
room (a fact's ends are its entities), never the other way. Nothing is imported here.
"""
