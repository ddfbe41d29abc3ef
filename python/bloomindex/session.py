"""Setting up a SparkSession for bloomindex."""

from __future__ import annotations

import glob
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["configure", "jar_paths", "task_kernels", "EXTENSIONS_CLASS", "VECTOR_MODULE_FLAG"]

EXTENSIONS_CLASS = "bloomindex.BloomIndexExtensions"
VECTOR_MODULE_FLAG = "--add-modules jdk.incubator.vector"
_JAR_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jars")


def jar_paths() -> list[str]:
    """The jars packaged with this module: bloomindex's own and zero-allocation-hashing."""
    jars = sorted(glob.glob(os.path.join(_JAR_DIR, "*.jar")))
    if not any(os.path.basename(j) == "bloomindex.jar" for j in jars):
        raise FileNotFoundError(
            f"bloomindex.jar is missing from {_JAR_DIR}: build it with `make jar` "
            "(or install a built wheel)")
    return jars


def _get(builder: Any, key: str) -> str | None:
    # Builder keeps what .config() set in _options; a running session has nothing there.
    options = getattr(builder, "_options", {})
    value = options.get(key)
    return None if value is None else str(value)


def _append(builder: Any, key: str, value: str, sep: str) -> None:
    current = _get(builder, key)
    if current:
        parts = [p.strip() for p in current.split(sep)]
        if value in parts:
            return
        value = current + sep + value
    builder.config(key, value)


def configure(builder: "SparkSession.Builder", kernel: str | None = None) -> "SparkSession.Builder":
    """Returns ``builder`` set up for bloomindex, before ``getOrCreate()``.

    Adds the packaged jars to ``spark.jars``, ``bloomindex.BloomIndexExtensions`` to
    ``spark.sql.extensions`` and ``--add-modules jdk.incubator.vector`` to the driver's and
    executors' Java options (the filters' SIMD kernel; without it they use the scalar one).
    Values already set are kept and appended to. ``kernel`` (``"vector"`` or ``"scalar"``)
    forces a kernel, for tests and benchmarks.

    >>> from pyspark.sql import SparkSession
    >>> spark = configure(SparkSession.builder.master("local[2]")).getOrCreate()  # doctest: +SKIP
    """
    if kernel not in (None, "vector", "scalar"):
        raise ValueError(f"kernel: expected 'vector', 'scalar' or None, got {kernel!r}")
    for jar in jar_paths():
        _append(builder, "spark.jars", jar, ",")
    _append(builder, "spark.sql.extensions", EXTENSIONS_CLASS, ",")
    java_options = VECTOR_MODULE_FLAG
    if kernel is not None:
        java_options += f" -Dbloomindex.kernel={kernel}"
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        current = _get(builder, key)
        if current and VECTOR_MODULE_FLAG in current:
            continue
        builder.config(key, f"{current} {java_options}" if current else java_options)
    return builder


def jvm_object(spark: "SparkSession", class_name: str) -> Any:
    """A Scala ``object`` of bloomindex's jar, loaded through the session's class loader."""
    jvm = spark.sparkContext._jvm
    loader = jvm.Thread.currentThread().getContextClassLoader()
    try:
        cls = loader.loadClass(class_name)
    except Exception as e:  # py4j wraps the ClassNotFoundException
        raise RuntimeError(
            "bloomindex's jar is not on this session's classpath: build the session with "
            "bloomindex.configure(SparkSession.builder)") from e
    return cls.getField("MODULE$").get(None)


def jvm_api(spark: "SparkSession") -> Any:
    """The Scala facade ``bloomindex.api.PythonApi`` (filters and hashing)."""
    return jvm_object(spark, "bloomindex.api.PythonApi$")


def task_kernels(spark: "SparkSession", tasks: int | None = None) -> list[dict[str, Any]]:
    """The filter kernels of the JVMs that run ``spark``'s tasks: a small job of ``tasks``
    tasks (default: the default parallelism), each reporting ``executor`` (id), ``pid``,
    ``sbbf`` and ``classic`` (``"vector"`` or ``"scalar"``) of the JVM it ran in. On a
    cluster these are the executors', which may differ from the driver's.

    >>> {t["sbbf"] for t in task_kernels(spark)}  # doctest: +SKIP
    {'vector'}
    """
    n = tasks if tasks is not None else spark.sparkContext.defaultParallelism
    if n < 1:
        raise ValueError(f"tasks: expected a positive count, got {n}")
    out = []
    for line in jvm_api(spark).taskKernels(spark._jsparkSession, n):
        executor, pid, sbbf, classic = str(line).split("\t")
        out.append({"executor": executor, "pid": int(pid), "sbbf": sbbf, "classic": classic})
    return out
