# Embedded Neo4j 5.26 Community for dev/CI (see tools/neo4j/README.md). Include from the main Makefile:
#   include tools/neo4j/neo4j.mk
# Tests that need the server: `$(NEO4J_CTL) run -- <test command>` (starts, sets EPIGRAPH_NEO4J_URI, stops).
NEO4J_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
NEO4J_CTL = $(or $(PYTHON),python3) $(NEO4J_DIR)/neo4jctl.py

.PHONY: neo4j-build neo4j-start neo4j-stop neo4j-status

neo4j-build:  ## fetch the Neo4j jars from Maven Central and compile the launcher
	$(NEO4J_CTL) build

neo4j-start:  ## start a background server (prints its bolt:// URI; also in tools/neo4j/run/uri)
	$(NEO4J_CTL) start

neo4j-stop:  ## stop the background server
	$(NEO4J_CTL) stop

neo4j-status:
	$(NEO4J_CTL) status
