# bloomindex: everything a fresh machine needs is fetched by these rules on first use.
#   make test    CI: every Scala test, the Python tests not in tests/nightly.txt, the cluster tests
#                not marked slow, the Connect tests and test-connect-server
#   make test-cluster   every cluster test (local-cluster, spark-submit, executor killed)
#   make test-connect-server   the Spark Connect example of docs/connect.md: a Connect server process and
#                a client environment with only pyspark-client and the package (make test runs it)
#   make test-s3   indexes on s3a:// against a moto S3 server (nightly)
#   make test-gcs  indexes on gs:// against a fake-gcs-server (nightly)
#   make test-nightly   the tests of tests/nightly.txt, the randomized suites at full size, S3, GCS,
#                Iceberg, every cluster test, the race
#   make test-kryo   the Python tests under Kryo, failing on a class of bloomindex's Kryo sends unregistered (nightly)
#   make test-race   two writer processes appending to one folder whose index refreshes on write (nightly)
#   make test-flips  every bit of every index file flipped, 0 wrong answers (the whole run; CI runs a sample)
#   make test-nightly-text   the text search suite with 20,000 random predicates (nightly)
#   make bench-text  text search on 20 M generated log lines, index on vs off (bench/bench_text.py)
#   make demo    the main job on a local Spark session
#   make bench-sbbf   JVM filter benchmark against parquet-java
#   make bench-algorithms   the three filter designs: false positive rates and speed
#   make bench-fresh   what checking skipped files against storage costs (local disk, S3)
#   make bench-history   what recording the workload history costs a point lookup's planning (on vs off)
#   make bench-advisor   RECOMMEND BLOOM INDEXES vs an exhaustive search, WHATIF vs the built index
#   make bench-s3-latency   the first query against an index on S3 with 20 ms per request
#   make dist    the wheel (jars inside) and the Maven artifacts (dist/maven), see README
#   make test-iceberg   Apache Iceberg tables (tests/iceberg), on PySpark 4.1 in .venvs/iceberg
#   make bench-iceberg  point lookups on a 2,000-file Iceberg table (bench/bench_iceberg.py)
#   make test-spark-versions   the jar on the other supported Spark versions (4.1, 4.3): compile
#                check, link check and smoke tests, each in a venv of its own (.venvs/spark-X.Y)

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Spark versions: the jar is compiled against SPARK_BUILD (spark-sql from Maven, `provided`, at the
# version the .venv's PySpark is pinned to) and runs on every version
# of bloomindex.compat.SparkVersions' range; make test-spark-versions checks SPARK_OTHERS, each in
# .venvs/spark-X.Y. The pins of each: tests/spark_versions/spark-X.Y.txt.
SPARK_BUILD := 4.2
SPARK_OTHERS := 4.1 4.3
VENVS := .venvs
SBT_VERSION := $(shell sed -n 's/^sbt.version=//p' project/build.properties)
SBT_JAR := .tools/sbt-launch-$(SBT_VERSION).jar
JAR := python/bloomindex/jars/bloomindex.jar
# Test classes (the in-memory KMS of the encryption tests): on the Python tests' class path only.
TEST_JAR := target/bloomindex-tests.jar
JVM_TEST_SOURCES := $(shell find jvm/src/test -type f)
JVM_SOURCES := $(shell find jvm/src/main -type f) build.sbt
# The sbt JVM itself loads the compiled Vector API classes (zinc reads their API), hence the flag.
SBT = java -Xmx3g -Xss4m --add-modules jdk.incubator.vector \
	-Dsbt.repository.config=project/repositories -Dsbt.override.build.repos=true \
	-Dsbt.log.noformat=true -Dsbt.server.forcestart=false -Dsbt.supershell=false \
	-jar $(SBT_JAR)
PYTEST_ARGS ?=
# `make test` and `make test-python` run tests/ on this many pytest-xdist workers (0: in one
# process), a SparkSession each, whole files to a worker (`--dist loadfile`: a module's fixtures
# are built once). Two on two cores: a test spends much of its time on one thread (the driver's
# planning, Python), so two workers keep both cores busy.
PYTEST_WORKERS ?= 2
PYTEST_XDIST = -n $(PYTEST_WORKERS) --dist loadfile
# The version, written once in python/bloomindex/_version.py (build.sbt and pyproject read it).
VERSION := $(shell sed -n 's/^__version__ = "\(.*\)"$$/\1/p' python/bloomindex/_version.py)
WHEEL := dist/bloomindex-$(VERSION)-py3-none-any.whl
MAVEN_POM := dist/maven/io/github/bloomindex/bloomindex_2.13/$(VERSION)/bloomindex_2.13-$(VERSION).pom
# The wheel from python/ with the staged jars (python/setup.py refuses to build it without them).
BUILD_WHEEL = rm -rf python/build dist/bloomindex-*.whl && $(PY) -m pip wheel -q --no-deps -w dist ./python
# tests/cluster runs in a pytest process of its own (one SparkContext per process).
PYTEST_CLUSTER = $(PY) -m pytest tests/cluster
# The S3 client of tests/s3: hadoop-aws of Spark's Hadoop version and its runtime dependencies
# (the AWS SDK v2 bundle, ~690 MB), copied from Maven Central by Maven into .tools/s3.
S3_JARS := .tools/s3/.copied
# The GCS client of tests/gcs: the GCS connector's shaded jar (~37 MB), copied by Maven into .tools/gcs.
GCS_JARS := .tools/gcs/.copied
# tests/connect too: the API's tests on a Spark Connect session (a local server in the process).
PYTEST_CONNECT = $(PY) -m pytest tests/connect
# A Spark Connect client's environment: the built package and pyspark-client only (no JVM side).
CLIENT_VENV := .venv-client
PYTHON_SOURCES := $(shell find python/bloomindex -name '*.py') python/pyproject.toml

.PHONY: all jar dist test test-flips test-spark-versions test-iceberg bench-iceberg test-nightly test-nightly-queries test-nightly-text test-race test-kryo test-scala test-python test-cluster test-connect test-connect-server test-s3 test-gcs demo bench-sbbf bench-algorithms bench-build bench-query bench-join bench-delta bench-write bench-scale bench-cold bench-fresh bench-column-job bench-history bench-s3-latency bench-text bench-advisor bench-fpp-auto clean

all: jar

# Python environment: the package (editable) with the build's PySpark and the test tools.
$(VENV)/.installed: python/pyproject.toml tests/spark_versions/spark-$(SPARK_BUILD).txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -r tests/spark_versions/spark-$(SPARK_BUILD).txt -e 'python[test]'
	touch $@

# The other Spark versions' environments: the package (editable, the jar staged by `make jar`),
# that version's PySpark and the test tools; no Delta Lake.
$(VENVS)/spark-%/.installed: python/pyproject.toml tests/spark_versions/spark-%.txt
	rm -rf $(VENVS)/spark-$*
	$(PYTHON) -m venv $(VENVS)/spark-$*
	$(VENVS)/spark-$*/bin/python -m pip install -q --upgrade pip
	$(VENVS)/spark-$*/bin/python -m pip install -q -r tests/spark_versions/spark-$*.txt -e python
	touch $@

# Apache Iceberg's environment: Iceberg 1.12.0 publishes Spark runtimes up to Spark 4.1, so its
# tests and benchmark run on the PySpark pinned in tests/iceberg/requirements.txt, with the
# package (editable: the jar `make jar` stages) and nothing else. Iceberg's runtime jar itself is
# resolved by Spark at session start (bloomindex.configure(builder, iceberg=True)).
ICEBERG_VENV := .venvs/iceberg
$(ICEBERG_VENV)/.installed: python/pyproject.toml tests/iceberg/requirements.txt
	rm -rf $(ICEBERG_VENV)
	$(PYTHON) -m venv $(ICEBERG_VENV)
	$(ICEBERG_VENV)/bin/pip install -q --upgrade pip
	$(ICEBERG_VENV)/bin/pip install -q -r tests/iceberg/requirements.txt -e python
	touch $@

# tests/iceberg: a pytest process of its own (one session with Iceberg's runtime).
test-iceberg: $(JAR) $(ICEBERG_VENV)/.installed
	$(ICEBERG_VENV)/bin/python -m pytest tests/iceberg $(PYTEST_ARGS)

# BENCH_ICEBERG_FILES / BENCH_ICEBERG_ROWS scale it (defaults 2000 / 20000000); the table is
# built once under bench/out/iceberg and reused.
bench-iceberg: $(JAR) $(ICEBERG_VENV)/.installed
	$(ICEBERG_VENV)/bin/python bench/bench_iceberg.py

# The sbt launcher, from Maven Central through Maven, cached in .tools/.
$(SBT_JAR):
	mkdir -p .tools
	mvn -q dependency:copy -Dartifact=org.scala-sbt:sbt-launch:$(SBT_VERSION) -DoutputDirectory=.tools

$(JAR): $(VENV)/.installed $(SBT_JAR) $(JVM_SOURCES)
	$(SBT) stageJars

jar: $(JAR)

# `make dist`: dist/bloomindex-<version>-py3-none-any.whl and, under dist/maven, the jar, its
# sources and its pom in a Maven repository layout (sbt publish), for --packages/--repositories.
dist: $(WHEEL) $(MAVEN_POM)

$(WHEEL): $(JAR) $(PYTHON_SOURCES) python/setup.py python/README.md
	$(BUILD_WHEEL)

$(MAVEN_POM): $(JAR)
	rm -rf dist/maven
	$(SBT) publish

$(TEST_JAR): $(JAR) $(JVM_TEST_SOURCES)
	$(SBT) stageTestJar

# Nightly (not on every landing, to keep CI under 20 minutes): the randomized suites at full size
# (test-nightly-queries), the object stores (S3 through moto, GCS through fake-gcs-server, with
# their clients' ~730 MB of jars), Iceberg (its own PySpark 4.1 venv), every cluster test and
# the two-writer race (test-race).
test-nightly:
	$(MAKE) test-nightly-rest
	$(MAKE) test-nightly-queries
	$(MAKE) test-flips BLOOMINDEX_FLIPS=4000
	$(MAKE) test-nightly-text
	$(MAKE) test-s3
	$(MAKE) test-gcs
	$(MAKE) test-iceberg
	$(MAKE) test-cluster
	$(MAKE) test-race
	$(MAKE) test-kryo

# The tests `make test` leaves out for CI's 20-minute budget (tests/nightly.txt: each took 2.5 s or
# more; CI keeps one or two of each feature's long tests), in the main suite and on Spark Connect.
# The decoding-context summary asserts over all of its module's builds, one of which is CI's:
# `make test-nightly-queries` runs it with the whole module.
test-nightly-rest: $(JAR) $(TEST_JAR) $(WHEEL) $(MAVEN_POM)
	$(PY) -m pytest tests $(PYTEST_XDIST) -m nightly --durations=25 \
	  --deselect tests/test_decoding_context.py::test_summary_pruning_where_the_context_is_unchanged $(PYTEST_ARGS)
	$(PYTEST_CONNECT) -m nightly $(PYTEST_ARGS)

# Every bit of every index file flipped (tests/test_flips.py, issue 26): the whole run is all bits,
# or, as here (the two layouts' files hold more than 200,000 bits), a seeded sample of 20,000 per
# file kind and layout: hours on a shared 2-core machine (0.15 s a flip in `probes`, 0.4 s in
# `columns`). The nightly run flips 4,000 per layout (about 40 minutes); CI 80 per layout.
# First the JVM's own flip test of a probe file (ProbeFileSuite), every bit of it (about 2
# minutes; CI flips both ends of the file and 500 other bits, BLOOMINDEX_JVM_FLIPS).
test-flips: export BLOOMINDEX_FLIPS ?= all
test-flips: $(JAR) $(SBT_JAR)
	BLOOMINDEX_JVM_FLIPS=all $(SBT) "testOnly bloomindex.layout.ProbeFileSuite -- -z flipped"
	$(PY) -m pytest tests/test_flips.py $(PYTEST_ARGS)

# The differential pruning suite with 20,000 queries (1,000 more on a V2 scan), the decoding-context
# suite with 3,000 cases, the schema-mapping suite with 5,000 queries, the other filter designs' with
# 600 each and the random joins 200 (CI runs 100 (75), 300, 100, 20 and 12).
test-nightly-queries: PYTEST_ARGS += -k "pruning or decoding_context or schema_mapping or algorithms_index or random_joins"
test-nightly-queries: export BLOOMINDEX_DIFF_QUERIES = 20000
test-nightly-queries: export BLOOMINDEX_V2_QUERIES = 1000
test-nightly-queries: export BLOOMINDEX_JOIN_QUERIES = 200
test-nightly-queries: export BLOOMINDEX_ALG_QUERIES = 600
test-nightly-queries: export BLOOMINDEX_CONTEXT_CASES = 3000
test-nightly-queries: export BLOOMINDEX_MAPPING_QUERIES = 5000
test-nightly-queries: test-python

# The text search suite (issue 25) at full size: 20,000 random predicates, each planned on two indexed
# column variants, and 1,500 of them executed (CI: 1,000 planned on one variant each and 80, in `make test`).
test-nightly-text: export BLOOMINDEX_TEXT_QUERIES = 20000
test-nightly-text: export BLOOMINDEX_TEXT_EXECUTED = 1500
test-nightly-text: export BLOOMINDEX_TEXT_PLANS = 2
test-nightly-text: $(JAR) $(TEST_JAR) $(SBT_JAR)
	$(PY) -m pytest tests/test_text_search.py $(PYTEST_ARGS)
	# The JVM's soundness properties of the text predicates with 100,000 random cases each (CI: 8,000).
	BLOOMINDEX_TEXT_CASES=100000 $(SBT) "testOnly bloomindex.text.TextSoundnessSuite"

# The distribution is built in the same sbt run: tests/test_dist.py installs the wheel,
# tests/cluster/test_packages.py submits a job with --packages from dist/maven. `all test publish`
# runs the two at once: publish's Scaladoc (about 45 s) takes the CPU the Scala tests leave idle.
test: $(SBT_JAR)
	rm -rf dist/maven
	mkdir -p target
	# The Python environments are made while sbt compiles and runs the Scala tests: pip keeps
	# about one core busy, the Scala tests leave about a third of two idle (vmstat over a CI run),
	# and sbt needs nothing of them. sbt stages the jars into python/ only after its tests, long
	# after pip's editable install (which reads no jar) has ended; the Connect client's
	# environment gets its dependencies here and the package before test-connect-server. Any
	# of the three failing fails the target.
	$(MAKE) --no-print-directory $(VENV)/.installed > target/venv.log 2>&1 & venv=$$!; \
	  $(MAKE) --no-print-directory $(CLIENT_VENV)/.deps > target/client-venv.log 2>&1 & client=$$!; \
	  $(SBT) "all test publish" stageJars stageTestJar; sbt=$$?; \
	  wait $$venv; venv=$$?; wait $$client; client=$$?; cat target/venv.log target/client-venv.log; \
	  test $$sbt -eq 0 && test $$venv -eq 0 && test $$client -eq 0
	$(BUILD_WHEEL)
	$(PY) -m pytest tests $(PYTEST_XDIST) -m "not nightly" --durations=25 $(PYTEST_ARGS)
	# The cluster tests and then the Connect server's (make test-connect-server) beside the Connect
	# tests, a process each (each mostly waits on one JVM; the Connect tests take about as long
	# as the other two); their output is shown after all end, and any failing fails the target.
	mkdir -p target
	{ $(PYTEST_CLUSTER) -m "not slow" --durations=5 > target/test-cluster.log 2>&1; cluster=$$?; \
	  $(MAKE) --no-print-directory test-connect-server > target/test-connect-server.log 2>&1; server=$$?; \
	  test $$cluster -eq 0 && test $$server -eq 0; } & chain=$$!; \
	  $(PYTEST_CONNECT) -m "not nightly" --durations=5 > target/test-connect.log 2>&1; connect=$$?; \
	  wait $$chain; chain=$$?; \
	  cat target/test-cluster.log target/test-connect-server.log target/test-connect.log; \
	  test $$chain -eq 0 && test $$connect -eq 0

# The jar built once against SPARK_BUILD, on each of SPARK_OTHERS in its own venv: the sources
# compiled against that version's jars, the venv's PySpark's own (into target/spark-X.Y, the main build untouched), then
# tests/spark_versions (every reference of the jar into Spark resolves there; spark-submit of a
# Scala job) and the smoke subset (SQL lifecycle, 300 differential pruning queries, the join
# filter, the Python API). SPARK_BUILD runs tests/spark_versions too; everything else of it is
# `make test`. Not part of `make test`: about 40 minutes on a shared 2-core machine.
SMOKE_TESTS := tests/spark_versions tests/test_spark_versions.py tests/test_index_sql.py tests/test_pruning.py \
	tests/test_join_filter.py tests/test_python_api.py tests/test_index_api.py tests/test_configure.py
test-spark-versions: export BLOOMINDEX_DIFF_QUERIES = 300
# The smoke subset reads no Avro: no spark-avro to fetch (tests/conftest.py).
test-spark-versions: export BLOOMINDEX_TEST_PACKAGES =
test-spark-versions: $(JAR) $(TEST_JAR) $(foreach v,$(SPARK_OTHERS),$(VENVS)/spark-$(v)/.installed)
	set -e; for v in $(SPARK_OTHERS); do \
	  echo "== Spark $$v: compile check"; \
	  BLOOMINDEX_SPARK_VERSION=$$(sed -n 's/^pyspark==//p' tests/spark_versions/spark-$$v.txt) \
	    BLOOMINDEX_SPARK_JARS=$$($(VENVS)/spark-$$v/bin/python -c "import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), 'jars'))") \
	    BLOOMINDEX_BUILD_DIR=target/spark-$$v $(SBT) compile Test/compile; \
	  echo "== Spark $$v: smoke tests"; \
	  $(VENVS)/spark-$$v/bin/python -m pytest $(SMOKE_TESTS) $(PYTEST_ARGS); \
	done
	echo "== Spark $(SPARK_BUILD): tests/spark_versions"
	$(PY) -m pytest tests/spark_versions $(PYTEST_ARGS)

test-scala: $(VENV)/.installed $(SBT_JAR)
	$(SBT) test

test-python: $(JAR) $(TEST_JAR) $(WHEEL) $(MAVEN_POM)
	$(PY) -m pytest tests $(PYTEST_XDIST) $(PYTEST_ARGS)

# Under Kryo with a test registrator that records every class sent unregistered: the run fails
# on one of bloomindex's (tests/conftest.py). The Python suite of `make test`, once more.
test-kryo: $(JAR) $(TEST_JAR) $(WHEEL) $(MAVEN_POM)
	rm -f target/kryo-unregistered.log
	BLOOMINDEX_KRYO_LOG=$(CURDIR)/target/kryo-unregistered.log $(PY) -m pytest tests $(PYTEST_XDIST) $(PYTEST_ARGS) -m "not nightly"

test-cluster: $(JAR) $(TEST_JAR) $(MAVEN_POM)
	$(PYTEST_CLUSTER) $(PYTEST_ARGS)

# tests/race: two writer processes (a driver JVM each) append to one Parquet folder and refresh its
# on_write index at once while this process queries it. Nightly, not in `make test`: the two extra
# JVMs take about 3 minutes on a 2-core machine, too much for CI's 20-minute budget.
test-race: $(JAR)
	$(PY) -m pytest tests/race $(PYTEST_ARGS)

test-connect: $(JAR)
	$(PYTEST_CONNECT) $(PYTEST_ARGS)

# `pip install './python[connect]'`: what a Connect client installs (the extra brings pyspark-client).
# The client environment's dependencies without the package: the package's own and its
# `connect` extra's, as python/pyproject.toml lists them (`make test` makes this beside the
# Scala tests); then the package itself, built with the staged jars, without its dependencies.
$(CLIENT_VENV)/.deps: python/pyproject.toml
	rm -rf $(CLIENT_VENV)
	$(PYTHON) -m venv $(CLIENT_VENV)
	$(CLIENT_VENV)/bin/python -m pip install -q --upgrade pip
	$(CLIENT_VENV)/bin/python -m pip install -q $$($(PYTHON) -c "import tomllib; p = tomllib.load(open('python/pyproject.toml', 'rb'))['project']; print(' '.join(p['dependencies'] + p['optional-dependencies']['connect']))")
	touch $@

$(CLIENT_VENV)/.installed: $(JAR) $(PYTHON_SOURCES) $(CLIENT_VENV)/.deps
	rm -rf python/build
	$(CLIENT_VENV)/bin/python -m pip install -q --no-deps --force-reinstall './python'
	touch $@

test-connect-server: $(JAR) $(CLIENT_VENV)/.installed
	$(PY) -m pytest tests/connect_server $(PYTEST_ARGS)

$(S3_JARS): tests/s3/pom.xml
	mvn -q -f tests/s3/pom.xml dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/.tools/s3
	touch $@

# tests/s3 runs in a pytest process of its own (its session has the S3A jars on its class path).
test-s3: $(JAR) $(TEST_JAR) $(S3_JARS)
	$(PY) -m pytest tests/s3 $(PYTEST_ARGS)

$(GCS_JARS): tests/gcs/pom.xml
	mvn -q -f tests/gcs/pom.xml dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/.tools/gcs
	touch $@

# tests/gcs runs in a pytest process of its own (its session has the GCS connector on its class path).
test-gcs: $(JAR) $(TEST_JAR) $(GCS_JARS)
	$(PY) -m pytest tests/gcs $(PYTEST_ARGS)

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
	rm -rf target project/target python/bloomindex/jars python/build spark-warehouse dist $(VENVS)

bench-build: $(JAR)
	$(PY) bench/bench_build.py

bench-join: $(JAR)
	$(PY) bench/bench_join.py

# BENCH_SCALE_FILES / BENCH_SCALE_ROWS / BENCH_SCALE_BIG scale it down (defaults 100000 / 20 / 100000000).
bench-scale: $(JAR) $(TEST_JAR)
	$(PY) bench/bench_scale.py

# The first query on a fresh driver and after a REFRESH: 1,000 files (BENCH_COLD_FILES, BENCH_COLD_ROWS)
# and bench-scale's 100,000-file table (BENCH_SCALE_FILES; BENCH_COLD_SCALE=0 skips it).
bench-cold: $(JAR)
	$(PY) bench/bench_cold.py

# Checking the files a query would skip against storage (issue 30): 1,000 and 100,000 files on
# local disk and on S3 against a moto server (BENCH_FRESH_S3=0 skips S3).
bench-fresh: $(JAR) $(TEST_JAR) $(S3_JARS)
	$(PY) bench/bench_fresh.py

# The first lookup's planning on a fresh driver over a `columns`-layout index (blockMajor=false) of
# 20,000 files (BENCH_JOB_FILES), its column read by the driver and by Spark jobs (driverMaxFiles=0).
bench-column-job: $(JAR)
	$(PY) bench/bench_column_job.py

# The first query on a fresh driver against an index on S3 (moto) with 20 ms added to each
# request by tests/s3/latency_proxy.py, at 10,000 and 100,000 files (issue 26; bench/README.md).
bench-s3-latency: $(JAR) $(TEST_JAR) $(S3_JARS)
	$(PY) bench/bench_s3_latency.py

# Delta Lake: Spark resolves Delta's jars from Maven Central at session start (configure(delta=True)).
bench-delta: $(JAR)
	$(PY) bench/bench_delta.py

# What refresh = on_write costs a write (issue 29): 10 rounds of 100-file appends, Parquet and Delta.
bench-write: $(JAR)
	$(PY) bench/bench_write.py
	$(PY) bench/bench_appends.py

# What recording the workload history costs a point lookup's planning (issue 31): history on and
# off in the same run (BENCH_HISTORY_FILES / _ROUNDS / _PER_ROUND scale it).
bench-history: $(JAR) $(TEST_JAR)
	$(PY) bench/bench_history.py
# Text search (issue 25): 20 M generated log lines in 1,000 files (cached in bench/out), token and 3-gram
# indexes on the message, queries with the index and without; BLOOMINDEX_TEXT_ROWS / BLOOMINDEX_TEXT_FILES
# scale it down (e.g. BLOOMINDEX_TEXT_ROWS=2000000 for a quick try). Results: bench/out/bench_text*.json.
bench-text: $(JAR)
	$(PY) bench/bench_text.py

bench-query: $(JAR)
	$(SBT) "Test/runMain bloomindex.bench.ProbeBench"
	$(PY) bench/bench_query.py

# The advisor (issue 31): RECOMMEND BLOOM INDEXES against an exhaustive search within a budget,
# and EXPLAIN BLOOM INDEX WHATIF against the built index, on 5 generated tables and 200 queries
# (bench/bench_advisor.py; figures in bench/README.md). About 10 minutes on 2 cores.
bench-advisor: $(JAR)
	$(PY) bench/bench_advisor.py
# fpp = 'auto' (issue 31): point lookups on a 1,000-file, 20 M-row table (cached in bench/out) with a
# fixed fpp of 0.01, with 'auto', and reading only the file holding the key; BENCH_ROWS / BENCH_FILES /
# BENCH_KEYS scale it. Results: bench/out/bench_fpp_auto_<rows>_<files>.json.
bench-fpp-auto: $(JAR)
	$(PY) bench/bench_fpp_auto.py
