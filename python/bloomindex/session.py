"""Setting up a SparkSession for bloomindex."""

from __future__ import annotations

import glob
import os
import re
import shlex
import warnings
from typing import TYPE_CHECKING, Any

from ._backend import check_bool, check_number, wrong_type

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["configure", "jar_paths", "delta_package", "iceberg_package", "task_kernels", "is_connect", "submit_args",
           "EXTENSIONS_CLASS", "KRYO_REGISTRATOR_CLASS", "VECTOR_MODULE_FLAG", "DELTA_EXTENSIONS_CLASS", "DELTA_CATALOG_CLASS",
           "ICEBERG_EXTENSIONS_CLASS", "ICEBERG_VERSION", "SUBMIT_ARGS"]

EXTENSIONS_CLASS = "bloomindex.BloomIndexExtensions"
#: Registers bloomindex's classes with Kryo: needed where ``spark.kryo.registrationRequired`` is true.
KRYO_REGISTRATOR_CLASS = "bloomindex.BloomIndexKryoRegistrator"
VECTOR_MODULE_FLAG = "--add-modules jdk.incubator.vector"
DELTA_EXTENSIONS_CLASS = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG_CLASS = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
# Libraries Delta's jars depend on that Spark ships itself, in other versions (delta-kernel
# pulls parquet-java 1.16 and hadoop-client 3.4 into a Spark with 1.17 and 3.5): left out of
# the resolution so that only Spark's copies are on the classpath.
DELTA_EXCLUDES = ",".join(g + ":*" for g in (
    "org.apache.parquet", "org.apache.hadoop", "com.fasterxml.jackson.core",
    "org.apache.logging.log4j", "org.slf4j", "org.xerial.snappy", "com.github.luben",
    "io.airlift", "org.roaringbitmap", "org.locationtech.jts", "commons-pool",
    "com.google.code.findbugs", "javax.annotation", "commons-logging"))
ICEBERG_EXTENSIONS_CLASS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
# The Apache Iceberg release configure(iceberg=True) adds, and the Spark lines it publishes a
# runtime for (Iceberg 1.12.0: Spark 3.4 to 4.1; none for 4.2 or 4.3).
ICEBERG_VERSION = "1.12.0"
ICEBERG_SPARK_LINES = ("3.4", "3.5", "4.0", "4.1")
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


def delta_package() -> str:
    """The Maven coordinates of Delta Lake's jar matching the installed ``delta-spark`` and PySpark.

    ``io.delta:delta-spark_2.13:<delta-spark version>``: Spark resolves it and its dependencies
    (``io.delta:delta-storage``) from Maven Central at session start and caches them in
    ``~/.ivy2.5.2``. (delta-spark's own ``configure_spark_with_delta_pip`` names a
    ``delta-spark_<spark major.minor>_2.13`` artifact that is not published for these releases.)
    """
    from importlib import metadata

    try:
        version = metadata.version("delta-spark")
    except metadata.PackageNotFoundError as e:
        raise RuntimeError(
            "configure(delta=True) needs the delta-spark Python package: install the bloomindex "
            "wheel with its delta extra ('bloomindex-<version>-py3-none-any.whl[spark,delta]')") from e
    return f"io.delta:delta-spark_2.13:{version}"


def iceberg_package(spark_version: str | None = None) -> str:
    """The Maven coordinates of Apache Iceberg's Spark runtime for the installed PySpark.

    ``org.apache.iceberg:iceberg-spark-runtime-<spark major.minor>_2.13:<ICEBERG_VERSION>``: one
    shaded jar, resolved by Spark from Maven Central at session start. Raises ValueError on a
    Spark line Iceberg publishes no runtime for (Iceberg 1.12.0: none for Spark 4.2 and 4.3).
    """
    if spark_version is None:
        import pyspark

        spark_version = pyspark.__version__
    line = ".".join(spark_version.split(".")[:2])
    if line not in ICEBERG_SPARK_LINES:
        raise ValueError(
            f"configure(iceberg=True): Apache Iceberg {ICEBERG_VERSION} publishes no Spark runtime for "
            f"Spark {line} (this PySpark is {spark_version}); it has runtimes for Spark "
            f"{', '.join(ICEBERG_SPARK_LINES)}. Use PySpark 4.1.x for Iceberg tables.")
    return f"org.apache.iceberg:iceberg-spark-runtime-{line}_2.13:{ICEBERG_VERSION}"


def configure(builder: "SparkSession.Builder", kernel: str | None = None,
              delta: bool = False, iceberg: bool = False,
              iceberg_catalogs: dict[str, dict[str, str]] | None = None) -> "SparkSession.Builder":
    """Returns ``builder`` set up for bloomindex, before ``getOrCreate()``.

    Adds the packaged jars to ``spark.jars``, ``bloomindex.BloomIndexExtensions`` to
    ``spark.sql.extensions`` and ``--add-modules jdk.incubator.vector`` to the driver's and
    executors' Java options (the filters' SIMD kernel; without it they use the scalar one).
    Values already set are kept and appended to. ``kernel`` (``"vector"`` or ``"scalar"``)
    forces a kernel, for tests and benchmarks.

    ``delta=True`` also sets the session up for Delta Lake tables: Delta's jar (see
    :func:`delta_package`) in ``spark.jars.packages``, resolved by Spark at session start,
    without the libraries Spark ships itself (``spark.jars.excludes``),
    ``io.delta.sql.DeltaSparkSessionExtension`` in ``spark.sql.extensions`` after bloomindex's,
    and Delta's catalog as ``spark_catalog`` (unless one is set already).

    ``iceberg=True`` sets the session up for Apache Iceberg tables: Iceberg's Spark runtime for
    the running Spark line (see :func:`iceberg_package`; ValueError on a Spark line with none) in
    ``spark.jars.packages`` and Iceberg's SQL extensions after bloomindex's.
    ``iceberg_catalogs`` maps catalog names to their settings, e.g.
    ``{"local": {"type": "hadoop", "warehouse": "/data/wh"}}``: each becomes an Iceberg
    ``SparkCatalog`` (``spark.sql.catalog.<name>`` and ``spark.sql.catalog.<name>.<key>``).

    Spark Connect (``builder.remote(...)``, ``SPARK_REMOTE`` or ``spark.api.mode=connect``):

    - ``remote("local[...]")`` (or Connect mode on a master) starts a Connect server in this
      process: the same settings go to that server's JVM through ``PYSPARK_SUBMIT_ARGS``
      (``--conf`` options put before what the variable held; set here, read when PySpark
      launches the JVM), not into the builder, whose options a Connect session can only set
      at run time (static ones print ``CANNOT_MODIFY_CONFIG`` warnings and have no effect).
      A key the builder holds already (``spark.sql.extensions``, ``spark.jars`` ...) is the
      exception: PySpark sets the builder's options over the variable's when it starts the
      server, so the builder gets the appended value there too, as on classic.
    - ``remote("sc://host:port")``: nothing can be set from the client; ``builder`` is returned
      as it is. The server must have been started with bloomindex's jars, its extension and the
      Vector module, e.g.::

          spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer \\
            --jars bloomindex.jar,zero-allocation-hashing-0.27ea1.jar \\
            --conf spark.sql.extensions=bloomindex.BloomIndexExtensions \\
            --driver-java-options "--add-modules jdk.incubator.vector" \\
            --conf "spark.executor.extraJavaOptions=--add-modules jdk.incubator.vector" \\
            --conf spark.connect.grpc.binding.address=127.0.0.1

      (:func:`jar_paths` lists the jars; with Delta Lake also Delta's package, extension and
      catalog). No Connect server plugin is needed: the Python API runs as SQL there.

    >>> from pyspark.sql import SparkSession
    >>> spark = configure(SparkSession.builder.master("local[2]")).getOrCreate()  # doctest: +SKIP
    """
    _check_configure(builder, kernel, delta, iceberg, iceberg_catalogs)
    remote = _get(builder, "spark.remote") or os.environ.get("SPARK_REMOTE")
    api_mode = (_get(builder, "spark.api.mode") or os.environ.get("SPARK_API_MODE") or "").lower()
    if remote is None and api_mode != "connect":
        _warn_if_running_without_extension()
        _settings(builder, kernel, delta, iceberg, iceberg_catalogs)
    elif remote is None or remote.startswith("local"):  # PySpark starts a Connect server here
        # What the builder holds of the keys _settings reads: appended to as on classic.
        held = {k: v for k in _HELD if (v := _get(builder, k)) is not None}
        settings = _Settings(held)
        _settings(settings, kernel, delta, iceberg, iceberg_catalogs)
        os.environ[SUBMIT_ARGS] = submit_args(settings._options, os.environ.get(SUBMIT_ARGS))
        # PySpark sets the builder's options over the submit arguments' when it starts the
        # server: those keys get the appended value there too (no key the builder lacked).
        for key, value in held.items():
            if settings._options[key] != value:
                builder.config(key, settings._options[key])
    return builder


def _warn_if_running_without_extension() -> None:
    """Warns when this process already runs a SparkContext whose sessions lack bloomindex's
    extension: ``getOrCreate()`` then returns a session on it, whose class path and
    ``spark.sql.extensions`` cannot change (a notebook's ``spark``, for one), and bloomindex's SQL
    fails to parse there (``Syntax error at or near 'BLOOM'``)."""
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is None:
        return
    extensions = sc.getConf().get("spark.sql.extensions") or ""
    if EXTENSIONS_CLASS not in [e.strip() for e in extensions.split(",")]:
        warnings.warn(
            "bloomindex.configure: a SparkContext without bloomindex's extension is already running in "
            "this process; getOrCreate() will return a session on it that has neither bloomindex's jar "
            "nor its SQL. Stop it first (spark.stop()), then configure and getOrCreate() again.",
            UserWarning, stacklevel=3)


def _check_configure(builder: Any, kernel: Any, delta: Any, iceberg: Any, iceberg_catalogs: Any) -> None:
    """``configure``'s arguments, before it sets anything: TypeError for a wrong type,
    ValueError for a wrong value, each naming the argument."""
    from collections.abc import Mapping

    if not callable(getattr(builder, "config", None)):
        hint = " (configure the builder before getOrCreate())" if type(builder).__name__ == "SparkSession" else ""
        raise wrong_type("configure", "builder", f"a SparkSession.Builder such as SparkSession.builder{hint}", builder)
    if kernel is not None and not isinstance(kernel, str):
        raise wrong_type("configure", "kernel", "'vector', 'scalar' or None", kernel)
    if kernel not in (None, "vector", "scalar"):
        raise ValueError(f"kernel: expected 'vector', 'scalar' or None, got {kernel!r}")
    check_bool("configure", "delta", delta)
    check_bool("configure", "iceberg", iceberg)
    if iceberg_catalogs is None:
        return
    if not isinstance(iceberg_catalogs, Mapping):
        raise wrong_type("configure", "iceberg_catalogs", "a dict of catalog name -> dict of settings, or None",
                         iceberg_catalogs)
    for name, settings in iceberg_catalogs.items():
        if not isinstance(name, str):
            raise wrong_type("configure", "iceberg_catalogs' catalog names", "str", name)
        if not name or "." in name:
            raise ValueError(f"iceberg_catalogs: bad catalog name {name!r}")
        if not isinstance(settings, Mapping):
            raise wrong_type("configure", f"iceberg_catalogs[{name!r}]", "a dict of settings", settings)
        for key in settings:
            if not isinstance(key, str):
                raise wrong_type("configure", f"iceberg_catalogs[{name!r}]'s keys", "str", key)
    if iceberg_catalogs and not iceberg:
        raise ValueError("iceberg_catalogs: Iceberg catalogs need iceberg=True")


#: The environment variable PySpark reads the arguments of the JVM it launches from.
SUBMIT_ARGS = "PYSPARK_SUBMIT_ARGS"


#: The keys :func:`configure` appends to (or keeps) when the builder holds them.
_HELD = ("spark.jars", "spark.jars.packages", "spark.jars.excludes", "spark.sql.extensions",
         "spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions", "spark.sql.catalog.spark_catalog",
         "spark.kryo.registrator", "spark.kryo.registrationRequired")


class _Settings:
    """Records what :func:`configure` sets, as a builder's ``config`` and ``_options``."""

    def __init__(self, options: dict[str, str] | None = None) -> None:
        self._options: dict[str, str] = dict(options or {})

    def config(self, key: str, value: str) -> "_Settings":
        self._options[key] = value
        return self


def submit_args(settings: dict[str, str], current: str | None) -> str:
    """``PYSPARK_SUBMIT_ARGS`` with ``settings`` as ``--conf`` options before ``current``'s
    arguments (so that the user's own ``--conf`` of a key wins), unchanged when they are
    there already (``configure`` called twice alike). A ``--conf`` of ``current`` whose value
    ``settings`` now holds whole (an earlier call's, before ``iceberg=True`` or a ``kernel``
    added to it) is dropped: spark-submit keeps a key's last ``--conf``, and it would win."""
    tail = shlex.split(current) if current else ["pyspark-shell"]
    ours = [a for k, v in settings.items() for a in ("--conf", f"{k}={v}")]
    if any(tail[i:i + len(ours)] == ours for i in range(len(tail))):
        return current or shlex.join(tail)
    kept: list[str] = []
    i = 0
    while i < len(tail):
        if tail[i] == "--conf" and i + 1 < len(tail) and "=" in tail[i + 1]:
            key, value = tail[i + 1].split("=", 1)
            if key in settings and _holds(settings[key], value):
                i += 2
                continue
        kept.append(tail[i])
        i += 1
    return shlex.join(ours + kept)


def _holds(new: str, old: str) -> bool:
    """Whether every item of ``old`` (comma-separated, or for Java options space-separated) is in ``new``."""
    split = (lambda v: v.split(",")) if "," in new + old or " " not in new + old else (lambda v: v.split())
    return set(filter(None, split(old))) <= set(filter(None, split(new)))


def _settings(builder: Any, kernel: str | None, delta: bool, iceberg: bool = False,
              iceberg_catalogs: dict[str, dict[str, str]] | None = None) -> None:
    for jar in jar_paths():
        _append(builder, "spark.jars", jar, ",")
    _append(builder, "spark.sql.extensions", EXTENSIONS_CLASS, ",")
    _kryo_registrator(builder)
    if delta:
        _append(builder, "spark.jars.packages", delta_package(), ",")
        _append(builder, "spark.jars.excludes", DELTA_EXCLUDES, ",")
        _append(builder, "spark.sql.extensions", DELTA_EXTENSIONS_CLASS, ",")
        if not _get(builder, "spark.sql.catalog.spark_catalog"):
            builder.config("spark.sql.catalog.spark_catalog", DELTA_CATALOG_CLASS)
    if iceberg_catalogs and not iceberg:
        raise ValueError("iceberg_catalogs: Iceberg catalogs need iceberg=True")
    if iceberg:
        _append(builder, "spark.jars.packages", iceberg_package(), ",")
        _append(builder, "spark.sql.extensions", ICEBERG_EXTENSIONS_CLASS, ",")
        for name, settings in (iceberg_catalogs or {}).items():
            if not name or "." in name:
                raise ValueError(f"iceberg_catalogs: bad catalog name {name!r}")
            builder.config(f"spark.sql.catalog.{name}", "org.apache.iceberg.spark.SparkCatalog")
            for key, value in settings.items():
                builder.config(f"spark.sql.catalog.{name}.{key}", str(value))
    java_options = VECTOR_MODULE_FLAG
    if kernel is not None:
        java_options += f" -Dbloomindex.kernel={kernel}"
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        current = _get(builder, key)
        if current and VECTOR_MODULE_FLAG in current:
            continue
        builder.config(key, f"{current} {java_options}" if current else java_options)


def _kryo_registrator(builder: Any) -> None:
    """Adds bloomindex's Kryo registrator to ``spark.kryo.registrator`` where the builder holds that
    key or ``spark.kryo.registrationRequired=true`` (Kryo then refuses classes not registered).
    Else nothing: a session that needs it and lacks it gets ``BLOOM_INDEX_INVALID_CONF`` naming it
    at its first CREATE or REFRESH. A builder value replaces the one Spark would read at launch, so
    without one in the builder that one is kept before ours (:func:`_launch_setting`)."""
    required = (_get(builder, "spark.kryo.registrationRequired") or "").strip().lower() == "true"
    if _get(builder, "spark.kryo.registrator") is None:
        if not required:
            return
        launched = _launch_setting("spark.kryo.registrator")
        if launched:
            builder.config("spark.kryo.registrator", launched)
    _append(builder, "spark.kryo.registrator", KRYO_REGISTRATOR_CLASS, ",")


def _launch_setting(key: str) -> str | None:
    """``key`` as spark-submit would set it when PySpark launches the JVM: a ``--conf`` of
    ``PYSPARK_SUBMIT_ARGS``, else the properties file (its ``--properties-file``, else
    ``spark-defaults.conf`` in ``$SPARK_CONF_DIR`` or ``$SPARK_HOME/conf``, ``SPARK_HOME`` being
    the PySpark package where unset, as its launcher has it); None where none sets it."""
    try:
        args = shlex.split(os.environ.get(SUBMIT_ARGS, ""))
    except ValueError:
        args = []
    value, properties = None, None
    for i, arg in enumerate(args):
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if arg in ("--conf", "-c") and nxt.startswith(key + "="):
            value = nxt.split("=", 1)[1]
        elif arg.startswith("--conf=" + key + "="):
            value = arg.split("=", 2)[2]
        elif arg == "--properties-file" and nxt:
            properties = nxt
        elif arg.startswith("--properties-file="):
            properties = arg.split("=", 1)[1]
    if value is not None:
        return value
    if properties is None:
        folder = os.environ.get("SPARK_CONF_DIR")
        if not folder:
            home = os.environ.get("SPARK_HOME") or _pyspark_home()
            folder = os.path.join(home, "conf") if home else None
        if not folder:
            return None
        properties = os.path.join(folder, "spark-defaults.conf")
    return _read_properties(properties).get(key)


def _pyspark_home() -> str | None:
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    return os.path.dirname(spec.origin) if spec and spec.origin else None


def _read_properties(path: str) -> dict[str, str]:
    """A Java properties file's ``key value``, ``key=value`` and ``key: value`` lines (a line
    ending in a backslash goes on on the next); empty where it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return {}
    settings: dict[str, str] = {}
    for line in re.sub(r"\\\r?\n[ \t]*", "", text).splitlines():
        m = re.match(r"\s*([^\s=:#!]+)\s*[=:\s]\s*(.*?)\s*$", line)
        if m:
            settings[m.group(1)] = m.group(2)
    return settings


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (or a Connect builder): no JVM here, the
    calls go to the server as SQL and DataFrame plans."""
    return type(spark).__module__.startswith("pyspark.sql.connect.")


def jvm_object(spark: "SparkSession", class_name: str) -> Any:
    """A Scala ``object`` of bloomindex's jar, loaded through the session's class loader."""
    if is_connect(spark):
        raise ValueError(f"{class_name.rstrip('$')} is reached through py4j, which a Spark Connect session "
                         "does not have: this call needs a classic session")
    jvm = spark.sparkContext._jvm
    loader = jvm.Thread.currentThread().getContextClassLoader()
    try:
        cls = loader.loadClass(class_name)
    except Exception as e:  # py4j wraps the ClassNotFoundException
        raise RuntimeError(
            "bloomindex's jar is not on this session's classpath: build the session with "
            "bloomindex.configure(SparkSession.builder) before any other session starts in this process "
            "(a session already running, such as a notebook's, keeps its class path: stop it first)") from e
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
    if tasks is not None:
        check_number("task_kernels", "tasks", tasks, integer=True)
    n = tasks if tasks is not None else spark.sparkContext.defaultParallelism
    if n < 1:
        raise ValueError(f"tasks: expected a positive count, got {n}")
    out = []
    for line in jvm_api(spark).taskKernels(spark._jsparkSession, n):
        executor, pid, sbbf, classic = str(line).split("\t")
        out.append({"executor": executor, "pid": int(pid), "sbbf": sbbf, "classic": classic})
    return out
