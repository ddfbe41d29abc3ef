# bloomindex: everything a fresh machine needs is fetched by these rules on first use.
#   make test    every Scala and Python test, and the cluster tests not marked slow
#   make test-cluster   every cluster test (local-cluster, spark-submit, executor killed)
#   make demo    the main job on a local Spark session
#   make bench-sbbf   JVM filter benchmark against parquet-java
#   make bench-algorithms   the three filter designs: false positive rates and speed

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SBT_VERSION := $(shell sed -n 's/^sbt.version=//p' project/build.properties)
SBT_JAR := .tools/sbt-launch-$(SBT_VERSION).jar
JAR := python/bloomindex/jars/bloomindex.jar
# Test classes (the in-memory KMS of the encryption tests): on the Python tests' class path only.
TEST_JAR := target/bloomindex-tests.jar
JVM_TEST_SOURCES := $(shell find jvm/src/test -type f)
JVM_SOURCES := $(shell find jvm/src/main -type f) build.sbt
# The sbt JVM itself loads the compiled Vector API classes (zinc reads their API), hence the flag.
SBT = BLOOMINDEX_SPARK_JARS="$$($(PY) -c 'import os,pyspark;print(os.path.join(os.path.dirname(pyspark.__file__),"jars"))')" \
	java -Xmx3g -Xss4m --add-modules jdk.incubator.vector \
	-Dsbt.repository.config=project/repositories -Dsbt.override.build.repos=true \
	-Dsbt.log.noformat=true -Dsbt.server.forcestart=false -Dsbt.supershell=false \
	-jar $(SBT_JAR)
PYTEST_ARGS ?=
# tests/cluster runs in a pytest process of its own (one SparkContext per process).
PYTEST_CLUSTER = $(PY) -m pytest tests/cluster

.PHONY: all jar test test-nightly test-scala test-python test-cluster demo bench-sbbf bench-algorithms bench-build bench-query bench-join bench-delta bench-scale bench-cold clean

all: jar

# Python environment: the package (editable) with its pinned PySpark and the test tools.
$(VENV)/.installed: python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e 'python[test]'
	touch $@

# The sbt launcher, from Maven Central through Maven, cached in .tools/.
$(SBT_JAR):
	mkdir -p .tools
	mvn -q dependency:copy -Dartifact=org.scala-sbt:sbt-launch:$(SBT_VERSION) -DoutputDirectory=.tools

$(JAR): $(VENV)/.installed $(SBT_JAR) $(JVM_SOURCES)
	$(SBT) stageJars

jar: $(JAR)

$(TEST_JAR): $(JAR) $(JVM_TEST_SOURCES)
	$(SBT) stageTestJar

# Nightly: the differential pruning suite with 20,000 queries and the decoding-context suite with
# 3,000 cases (CI runs 1,000 and 300).
test-nightly: PYTEST_ARGS += -k "pruning or decoding_context"
test-nightly: export BLOOMINDEX_DIFF_QUERIES = 20000
test-nightly: export BLOOMINDEX_CONTEXT_CASES = 3000
test-nightly: test-python

test: $(VENV)/.installed $(SBT_JAR)
	$(SBT) stageJars stageTestJar test
	$(PY) -m pytest tests $(PYTEST_ARGS)
	$(PYTEST_CLUSTER) -m "not slow"

test-scala: $(VENV)/.installed $(SBT_JAR)
	$(SBT) test

test-python: $(JAR) $(TEST_JAR)
	$(PY) -m pytest tests $(PYTEST_ARGS)

test-cluster: $(JAR) $(TEST_JAR)
	$(PYTEST_CLUSTER) $(PYTEST_ARGS)

demo: $(JAR)
	$(PY) -m bloomindex.demo

bench-sbbf: $(VENV)/.installed $(SBT_JAR)
	$(SBT) "Test/runMain bloomindex.bench.SbbfBench"
	$(PY) bench/python_sbbf.py

# bench/algorithms.json (JVM measurements), then bench/algorithms.md and .png from it.
bench-algorithms: $(VENV)/.installed $(SBT_JAR)
	$(SBT) "Test/runMain bloomindex.bench.AlgorithmsBench bench/algorithms.json"
	$(PY) bench/plot_algorithms.py bench/algorithms.json

clean:
	rm -rf target project/target python/bloomindex/jars spark-warehouse

bench-build: $(JAR)
	$(PY) bench/bench_build.py

bench-join: $(JAR)
	$(PY) bench/bench_join.py

# BENCH_SCALE_FILES / BENCH_SCALE_ROWS / BENCH_SCALE_BIG scale it down (defaults 100000 / 20 / 100000000).
bench-scale: $(JAR)
	$(PY) bench/bench_scale.py

# The first query on a fresh driver and after a REFRESH: 1,000 files (BENCH_COLD_FILES, BENCH_COLD_ROWS)
# and bench-scale's 100,000-file table (BENCH_SCALE_FILES; BENCH_COLD_SCALE=0 skips it).
bench-cold: $(JAR)
	$(PY) bench/bench_cold.py

# Delta Lake: Spark resolves Delta's jars from Maven Central at session start (configure(delta=True)).
bench-delta: $(JAR)
	$(PY) bench/bench_delta.py

bench-query: $(JAR)
	$(SBT) "Test/runMain bloomindex.bench.ProbeBench"
	$(PY) bench/bench_query.py
