# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: -all
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Exploring a temporal knowledge graph
#
# A three-session chat in which facts change: Alice starts a job at Acme in Paris, then moves to Berlin
# and joins Globex; Bob changes schools. We turn it into a graph and then look at it the way an analyst
# would: what holds **now**, what held **at a past date**, the **history** of one entity (which facts
# were retired, when, and by what), and the same data as a **pandas** table, a **networkx** graph and a
# **picture**.
#
# The notebook runs offline: the LLM's answers are the ones recorded for the quickstart demo
# (`examples/recorded/quickstart.json`), replayed through a `ScriptedLLM`, and embeddings come from
# the model-free `HashEmbedder`. To run it against a real model, build the graph with
# `KnowledgeGraph(Settings.from_env(db_path=":memory:"))` and set `EPIGRAPH_LLM_BASE_URL`,
# `EPIGRAPH_LLM_API_KEY` and `EPIGRAPH_LLM_MODEL`.
#
# Notebooks allow top-level `await`, so the async API is used directly.

# %%
import json
import tempfile
from pathlib import Path

# The conversation and the replay of its recorded answers come from the quickstart demo, next to this file.
from quickstart import GROUP, RECORDED, Replay, conversation

from epigraph.client import KnowledgeGraph
from epigraph.config import Settings
from epigraph.testing import HashEmbedder, ScriptedLLM

llm = ScriptedLLM(Replay(json.loads(RECORDED.read_text(encoding="utf-8"))))
kg = KnowledgeGraph(Settings(db_path=":memory:"), llm=llm, embedder=HashEmbedder(), group_id=GROUP)
await kg.open()
print(f"group {kg.group_id!r} in {kg.store!r}, embedder {kg.embedder.name!r}")

# %% [markdown]
# ## Ingest the conversation
#
# Each turn is an episode with its reference time. `add_episodes` runs them in order (one group) and
# returns, per episode, what it wrote and what it cost.

# %%
results = await kg.add_episodes(conversation())
for r in results:
    retired = f", retired {len(r.invalidated)}" if r.invalidated else ""
    print(f"{r.episode.content[:62]:<62} {len(r.facts)} facts{retired} ({r.report.llm_calls} LLM calls)")
print(f"\n{sum(r.report.llm_calls for r in results)} LLM calls for {len(results)} episodes")

# %% [markdown]
# ## Search: what holds now
#
# By default a search returns only facts that are valid **now**: Alice lives in Berlin and works at
# Globex; the Paris and Acme facts were retired by later statements.

# %%
now = await kg.search("Where does Alice live and work?")
print("current:", sorted(f.text for f in now.facts if f.source_name == "Alice"))
now

# %% [markdown]
# ## Time travel: what held at a past date
#
# `as_of` asks about event time (what was true in the world then); `known_at` would ask about system
# time (what the graph knew then). In June 2023 Alice still lived in Paris and worked at Acme.

# %%
then = await kg.search("Where does Alice live and work?", as_of="2023-06-01")
print("as of 2023-06-01:", sorted(f.text for f in then.facts if f.source_name == "Alice"))
then

# %% [markdown]
# ## One entity and its history
#
# `kg.entity` gives the summary, aliases, current facts, the retired facts with when and why, and the
# episodes that mention it.

# %%
alice = await kg.entity("Alice")
for item in alice.history:
    by = item.by_fact.text if item.by_fact else "?"
    print(f"retired: {item.fact.text!r} (true until {item.ended_at:%Y-%m-%d}), retired by {by!r}")
alice

# %% [markdown]
# ## As a pandas table
#
# Every result exports to pandas: the facts of a search, or all of an entity's facts with a `current`
# column.

# %%
facts = alice.to_pandas()
facts[["current", "source_name", "relation", "target_name", "text", "valid_at", "invalid_at"]]

# %% [markdown]
# ## As a networkx graph
#
# Entities are nodes, facts are edges (keyed by fact uuid) carrying their relation, text, intervals
# and a `retired` flag, ready for any graph algorithm.

# %%
graph = alice.to_networkx()
print(f"{graph.number_of_nodes()} nodes, {graph.number_of_edges()} edges")
for u, v, data in sorted(graph.edges(data=True), key=lambda e: e[2]["text"]):
    state = "retired" if data["retired"] else "current"
    print(f"  {graph.nodes[u]['name']} -{data['relation']}-> {graph.nodes[v]['name']} ({state})")

# %% [markdown]
# ## A picture that moves through time
#
# `kg.subgraph` returns an interactive view of an entity's neighbourhood (`kg.explore("...")` does the
# same for a search). Pan and zoom; hover an entity for its summary, or a fact for its sentence and
# validity window; click an entity for its view (facts then, history, episodes) and "expand neighbours";
# move the **time** slider back to watch Alice move from Berlin to Paris ("as known then" rewinds system
# time too). Retired facts are dashed, and a checkbox hides them. The graph library is inlined and
# nothing is fetched, so the cell works offline, in JupyterLab and in an exported notebook, and
# `.save("alice.html")` writes the same page (`.save("alice.svg")`: a static picture).

# %%
view = await kg.subgraph("Alice", include_retired=True)
page = view.save(Path(tempfile.mkdtemp()) / "alice.html")
print(f"saved {page.name} ({page.stat().st_size // 1024} kB): {len(view.shown)} facts drawn, "
      f"{len(view.facts) - len(view.shown)} more embedded for 'expand'")  # fmt: skip
view

# %%
await kg.close()
