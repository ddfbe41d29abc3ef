"""configure() sets up a builder, and the test session it made runs the JVM side."""

from __future__ import annotations

import os

import pytest
from pyspark.sql import SparkSession

import bloomindex
from bloomindex.session import EXTENSIONS_CLASS, KRYO_REGISTRATOR_CLASS, VECTOR_MODULE_FLAG
from index_helpers import native_kernel


class _Builder:
    """Records .config() like SparkSession.Builder does, without starting a JVM."""

    def __init__(self, **options):
        self._options = dict(options)

    def config(self, key, value):
        self._options[key] = value
        return self


def test_configure_sets_jars_extensions_and_vector_module():
    b = bloomindex.configure(_Builder())
    opts = b._options
    jars = opts["spark.jars"].split(",")
    assert any(j.endswith("bloomindex.jar") for j in jars)
    assert any("zero-allocation-hashing" in j for j in jars)
    assert opts["spark.sql.extensions"] == EXTENSIONS_CLASS
    assert VECTOR_MODULE_FLAG in opts["spark.driver.extraJavaOptions"]
    assert VECTOR_MODULE_FLAG in opts["spark.executor.extraJavaOptions"]


def test_configure_keeps_what_was_set_and_is_idempotent():
    b = _Builder(**{"spark.jars": "/x/other.jar", "spark.sql.extensions": "a.B",
                    "spark.executor.extraJavaOptions": "-Xss4m"})
    bloomindex.configure(bloomindex.configure(b), kernel="scalar")
    opts = b._options
    assert opts["spark.jars"].startswith("/x/other.jar,") and opts["spark.jars"].count("bloomindex.jar") == 1
    assert opts["spark.sql.extensions"] == f"a.B,{EXTENSIONS_CLASS}"
    assert opts["spark.executor.extraJavaOptions"].startswith("-Xss4m ")
    assert opts["spark.executor.extraJavaOptions"].count(VECTOR_MODULE_FLAG) == 1
    with pytest.raises(ValueError, match="kernel"):
        bloomindex.configure(_Builder(), kernel="gpu")


def test_configure_adds_the_kryo_registrator_only_where_kryo_requires_registration(monkeypatch, tmp_path):
    """Kryo with ``spark.kryo.registrationRequired=true`` refuses bloomindex's classes unless its
    registrator is listed: configure() appends it to the builder's registrators, keeps those Spark
    would read at launch (a builder value replaces them: PYSPARK_SUBMIT_ARGS's --conf, else the
    properties file), and sets nothing otherwise."""
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "pyspark-shell")  # restored after the test
    assert "spark.kryo.registrator" not in bloomindex.configure(_Builder())._options
    assert "spark.kryo.registrator" not in bloomindex.configure(
        _Builder(**{"spark.serializer": "org.apache.spark.serializer.KryoSerializer"}))._options
    required = {"spark.kryo.registrationRequired": "true"}
    assert bloomindex.configure(_Builder(**required))._options["spark.kryo.registrator"] == KRYO_REGISTRATOR_CLASS
    b = bloomindex.configure(bloomindex.configure(_Builder(**{"spark.kryo.registrator": "com.acme.R"})))
    assert b._options["spark.kryo.registrator"] == f"com.acme.R,{KRYO_REGISTRATOR_CLASS}"
    (tmp_path / "spark-defaults.conf").write_text(
        "# a comment\nspark.serializer  org.apache.spark.serializer.KryoSerializer\n"
        "spark.kryo.registrator=com.acme.Defaults,\\\n   com.acme.More\n")
    assert bloomindex.configure(_Builder(**required))._options["spark.kryo.registrator"] == \
        f"com.acme.Defaults,com.acme.More,{KRYO_REGISTRATOR_CLASS}"
    other = tmp_path / "other.conf"
    other.write_text("spark.kryo.registrator: com.acme.Other\n")
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", f"--properties-file {other} pyspark-shell")
    assert bloomindex.configure(_Builder(**required))._options["spark.kryo.registrator"] == \
        f"com.acme.Other,{KRYO_REGISTRATOR_CLASS}"
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", f"--properties-file {other} --conf spark.kryo.registrator=com.acme.Args pyspark-shell")
    assert bloomindex.configure(_Builder(**required))._options["spark.kryo.registrator"] == \
        f"com.acme.Args,{KRYO_REGISTRATOR_CLASS}"
    other.write_bytes(b"spark.kryo.registrator \xff\xfe\n")  # not UTF-8: read as no setting
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", f"--properties-file {other} pyspark-shell")
    assert bloomindex.configure(_Builder(**required))._options["spark.kryo.registrator"] == KRYO_REGISTRATOR_CLASS


def test_configure_warns_when_a_context_without_the_extension_runs(spark, monkeypatch):
    """getOrCreate() returns a session on the SparkContext already running (a notebook's), whose
    extensions cannot change: configure() says so, naming the fix. The test session has the
    extension, so configure() is silent there; a context without it is stood in for."""
    import warnings

    from pyspark import SparkContext

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bloomindex.configure(_Builder())

    class _Conf:
        def get(self, key, default=None):
            return "other.Extensions" if key == "spark.sql.extensions" else default

    class _Context:
        def getConf(self):
            return _Conf()

    monkeypatch.setattr(SparkContext, "_active_spark_context", _Context())
    with pytest.warns(UserWarning, match=r"already running in this process.*spark\.stop\(\)"):
        bloomindex.configure(_Builder())


def test_configure_on_a_local_connect_builder_sets_the_jvm_launch_not_the_builder(monkeypatch):
    import shlex

    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--conf spark.driver.memory=3g pyspark-shell")
    b = bloomindex.configure(_Builder(**{"spark.remote": "local[2]"}), kernel="scalar")
    assert b._options == {"spark.remote": "local[2]"}  # nothing a Connect session would refuse
    args = shlex.split(os.environ["PYSPARK_SUBMIT_ARGS"])
    assert args[-3:] == ["--conf", "spark.driver.memory=3g", "pyspark-shell"]  # the user's, after ours
    confs = dict(a.split("=", 1) for a in args[1::2] if "=" in a)
    assert confs["spark.sql.extensions"] == EXTENSIONS_CLASS
    assert all(j in confs["spark.jars"].split(",") for j in bloomindex.jar_paths())
    assert confs["spark.driver.extraJavaOptions"] == f"{VECTOR_MODULE_FLAG} -Dbloomindex.kernel=scalar"
    before = os.environ["PYSPARK_SUBMIT_ARGS"]
    bloomindex.configure(_Builder(**{"spark.remote": "local[2]"}), kernel="scalar")
    assert os.environ["PYSPARK_SUBMIT_ARGS"] == before
    # Spark 4's Connect mode on a master starts a local server too.
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS")
    b = bloomindex.configure(_Builder(**{"spark.api.mode": "connect", "spark.master": "local[1]"}))
    assert "spark.jars" not in b._options and EXTENSIONS_CLASS in os.environ["PYSPARK_SUBMIT_ARGS"]


def test_configure_called_again_on_a_local_connect_builder_takes_the_new_settings(monkeypatch):
    """A second configure() with more (a kernel) puts its settings before the first call's in
    PYSPARK_SUBMIT_ARGS, where spark-submit keeps a key's last --conf: the first call's, which the
    second's now hold whole, are dropped; the user's own stay after them."""
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--conf spark.driver.memory=3g pyspark-shell")
    b = _Builder(**{"spark.remote": "local[2]"})
    bloomindex.configure(b)
    bloomindex.configure(b, kernel="scalar")
    confs = _submit_confs()  # a key's last --conf, as spark-submit takes it
    assert confs["spark.sql.extensions"] == EXTENSIONS_CLASS
    assert confs["spark.driver.extraJavaOptions"] == f"{VECTOR_MODULE_FLAG} -Dbloomindex.kernel=scalar"
    assert confs["spark.executor.extraJavaOptions"] == f"{VECTOR_MODULE_FLAG} -Dbloomindex.kernel=scalar"
    assert confs["spark.driver.memory"] == "3g"
    assert os.environ["PYSPARK_SUBMIT_ARGS"].count("spark.sql.extensions=") == 1
    # A value of the user's that bloomindex's does not hold whole stays, after it (it wins).
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--conf spark.sql.extensions=a.B pyspark-shell")
    bloomindex.configure(_Builder(**{"spark.remote": "local[2]"}))
    assert _submit_confs()["spark.sql.extensions"] == "a.B"


_BUILDER_VALUES = {"spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension", "spark.jars": "/x/udf.jar",
                   "spark.jars.packages": "org.example:udf_2.13:1.0", "spark.jars.excludes": "org.example:old",
                   "spark.driver.extraJavaOptions": "-Xss4m", "spark.executor.extraJavaOptions": "-Xss8m"}


def _submit_confs() -> dict[str, str]:
    import shlex

    args = shlex.split(os.environ["PYSPARK_SUBMIT_ARGS"])
    return dict(args[i + 1].split("=", 1) for i in range(len(args) - 1) if args[i] == "--conf")


def test_configure_on_a_local_connect_builder_appends_to_what_the_builder_holds(monkeypatch):
    """PySpark starts the local server with PYSPARK_SUBMIT_ARGS and then the builder's options
    over them: a key the builder holds gets the classic path's value (the builder's first, then
    bloomindex's) in both, or the builder's value alone would replace bloomindex's."""
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "pyspark-shell")  # restored after the test
    b = bloomindex.configure(_Builder(**{"spark.remote": "local[2]"}, **_BUILDER_VALUES), kernel="scalar")
    opts = b._options
    assert opts["spark.sql.extensions"] == f"io.delta.sql.DeltaSparkSessionExtension,{EXTENSIONS_CLASS}"
    assert opts["spark.jars"] == ",".join(["/x/udf.jar", *bloomindex.jar_paths()])
    assert opts["spark.driver.extraJavaOptions"] == f"-Xss4m {VECTOR_MODULE_FLAG} -Dbloomindex.kernel=scalar"
    assert opts["spark.executor.extraJavaOptions"] == f"-Xss8m {VECTOR_MODULE_FLAG} -Dbloomindex.kernel=scalar"
    # Without delta=True bloomindex adds no package: the builder's stay as they were.
    assert opts["spark.jars.packages"] == "org.example:udf_2.13:1.0"
    assert opts["spark.jars.excludes"] == "org.example:old"
    assert set(opts) == {"spark.remote", *_BUILDER_VALUES}  # no key the builder did not hold
    confs = _submit_confs()  # what the server's JVM is launched with
    assert {k: confs[k] for k in _BUILDER_VALUES} == {k: opts[k] for k in _BUILDER_VALUES}
    # A second call changes nothing.
    before = os.environ["PYSPARK_SUBMIT_ARGS"], dict(opts)
    bloomindex.configure(b, kernel="scalar")
    assert (os.environ["PYSPARK_SUBMIT_ARGS"], b._options) == before


@pytest.mark.delta
def test_configure_delta_on_a_local_connect_builder_appends_to_its_packages(monkeypatch):
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "pyspark-shell")
    b = bloomindex.configure(_Builder(**{"spark.remote": "local[2]"}, **_BUILDER_VALUES), delta=True)
    opts = b._options
    packages = opts["spark.jars.packages"].split(",")
    assert packages[0] == "org.example:udf_2.13:1.0" and packages[1].startswith("io.delta:delta-spark_2.13:")
    excluded = opts["spark.jars.excludes"].split(",")
    assert excluded[0] == "org.example:old" and "org.apache.parquet:*" in excluded
    # Delta's extension was the builder's already: after bloomindex's once, not twice.
    assert opts["spark.sql.extensions"] == f"io.delta.sql.DeltaSparkSessionExtension,{EXTENSIONS_CLASS}"
    confs = _submit_confs()
    assert confs["spark.jars.packages"] == opts["spark.jars.packages"]
    assert confs["spark.jars.excludes"] == opts["spark.jars.excludes"]


def test_configure_on_a_remote_connect_builder_sets_nothing(monkeypatch):
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    b = bloomindex.configure(_Builder(**{"spark.remote": "sc://127.0.0.1:15002"}), delta=True)
    assert b._options == {"spark.remote": "sc://127.0.0.1:15002"}
    assert "PYSPARK_SUBMIT_ARGS" not in os.environ


def test_the_session_has_the_extension_and_the_vector_kernel(spark, jvm_api, vector_bits):
    assert EXTENSIONS_CLASS in spark.conf.get("spark.sql.extensions")
    # The vector kernel wherever the CPU has 256-bit vectors (vector_bits: the module is loaded).
    assert jvm_api.defaultKernel() == native_kernel(vector_bits)
    # The extension class loads in the session's JVM.
    loader = spark.sparkContext._jvm.Thread.currentThread().getContextClassLoader()
    assert loader.loadClass(EXTENSIONS_CLASS).getName() == EXTENSIONS_CLASS
    assert isinstance(spark, SparkSession)


def test_task_kernels_in_local_mode(spark, vector_bits):
    """In local mode tasks run in the driver's JVM (the cluster tests check executors')."""
    from bloomindex.session import task_kernels

    tasks = task_kernels(spark, 3)
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    assert len(tasks) == 3
    assert all(t["executor"] == "driver" and t["pid"] == pid and t["sbbf"] == native_kernel(vector_bits) for t in tasks)
    with pytest.raises(ValueError, match="tasks"):
        task_kernels(spark, 0)


@pytest.mark.delta
def test_configure_delta_adds_the_package_without_the_libraries_spark_ships():
    b = bloomindex.configure(_Builder(**{"spark.sql.catalog.spark_catalog": "my.Catalog"}), delta=True)
    opts = b._options
    assert opts["spark.jars.packages"].startswith("io.delta:delta-spark_2.13:")
    excluded = opts["spark.jars.excludes"].split(",")
    assert "org.apache.parquet:*" in excluded and "org.apache.hadoop:*" in excluded
    assert not any(e.startswith("io.delta") for e in excluded)
    assert opts["spark.sql.extensions"] == f"{EXTENSIONS_CLASS},io.delta.sql.DeltaSparkSessionExtension"
    assert opts["spark.sql.catalog.spark_catalog"] == "my.Catalog"


@pytest.mark.delta
def test_test_session_has_spark_parquet_java_only(spark):
    """Delta's dependencies must not bring a second parquet-java onto the driver's classpath."""
    jvm = spark.sparkContext._jvm
    loader = jvm.Thread.currentThread().getContextClassLoader()
    jars = " ".join(str(u) for u in loader.getURLs())
    assert "delta-spark" in jars
    assert "parquet-hadoop" not in jars and "hadoop-client" not in jars
