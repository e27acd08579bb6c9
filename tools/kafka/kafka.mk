# Single-node Apache Kafka 3.9 (KRaft) for dev/CI (see tools/kafka/README.md). Include from the main Makefile:
#   include tools/kafka/kafka.mk
# Tests that need the server: `$(KAFKA_CTL) run -- <test command>` (starts, sets EPIGRAPH_KAFKA_BOOTSTRAP, stops).
KAFKA_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
KAFKA_CTL = $(or $(PYTHON),python3) $(KAFKA_DIR)/kafkactl.py

.PHONY: kafka-build kafka-start kafka-stop kafka-status

kafka-build:  ## fetch the Kafka jars from Maven Central and compile the launcher
	$(KAFKA_CTL) build

kafka-start:  ## start a background server (prints its bootstrap 127.0.0.1:PORT; also in tools/kafka/run/bootstrap)
	$(KAFKA_CTL) start

kafka-stop:  ## stop the background server
	$(KAFKA_CTL) stop

kafka-status:
	$(KAFKA_CTL) status
