"""The Python package's public API is consistent: accurate ``__all__`` lists, no builtin names
as parameters, one serialization API across the filter designs, one ``expected_fpp``, one
``power_of_two`` default, declared keywords for ``BloomIndex.create``. No Spark session needed.
"""

from __future__ import annotations

import builtins
import re
import importlib
import inspect
import pkgutil
import types

import numpy as np
import pytest

import bloomindex
import bloomindex.filters
import bloomindex.sbbf
from bloomindex import BloomIndex, ClassicBloomFilter, Sbbf, SbbfMurmur3

DESIGNS = (Sbbf, SbbfMurmur3, ClassicBloomFilter)
MODULES = [importlib.import_module(f"bloomindex.{m.name}") for m in pkgutil.iter_modules(bloomindex.__path__)
           if not m.name.startswith("_")]


def _public(module: types.ModuleType) -> dict[str, object]:
    """The module's public names: its ``__all__``, or what it defines without a leading ``_``."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items() if not n.startswith("_")
                 and getattr(v, "__module__", None) == module.__name__]
    return {n: getattr(module, n) for n in names}


def _callables() -> dict[str, object]:
    """Qualified name -> every public function, class and method of every public module."""
    out: dict[str, object] = {}
    for module in [bloomindex, *MODULES]:
        for name, obj in _public(module).items():
            if inspect.isfunction(obj):
                out[f"{module.__name__}.{name}"] = obj
            elif inspect.isclass(obj):
                out[f"{module.__name__}.{name}"] = obj
                for attr, member in vars(obj).items():
                    fn = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                    if inspect.isfunction(fn) and (not attr.startswith("_") or attr == "__init__"):
                        out[f"{module.__name__}.{name}.{attr}"] = fn
    return out


def test_all_lists_exist_and_the_package_exports_exactly_its_public_names():
    for module in [bloomindex, *MODULES]:
        for name in getattr(module, "__all__", []):
            assert hasattr(module, name), f"{module.__name__}.__all__ names {name}, which it lacks"
    exported = {n for n, v in vars(bloomindex).items()
                if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert exported == set(bloomindex.__all__)


def test_no_parameter_is_named_after_a_builtin():
    bad = []
    for name, obj in _callables().items():
        try:
            params = inspect.signature(obj).parameters
        except (TypeError, ValueError):  # a class without an inspectable __init__
            continue
        bad += [f"{name}({p})" for p in params if p in vars(builtins)]
    assert not bad, "parameters named after builtins: " + ", ".join(bad)
    assert len(_callables()) > 40  # the walk saw the API


@pytest.mark.parametrize("cls", DESIGNS)
def test_every_design_has_one_serialization_api(cls):
    f = cls.for_ndv(300, 0.01)
    f.insert(range(300), "bigint")
    data = f.serialize()
    assert cls.deserialize(data) == f
    assert bloomindex.filters.deserialize(data, f.algorithm) == f
    assert data.endswith(f.bitset_bytes()) and len(f.bitset_bytes()) == f.num_bytes
    for old in ("to_bytes", "from_bytes", "to_parquet_bytes", "from_parquet_bytes"):
        assert not hasattr(cls, old), f"{cls.__name__}.{old}"
    assert f.hash_name in ("xxh64", "murmur3") and not hasattr(cls, "hash")


def test_one_expected_fpp():
    assert bloomindex.expected_fpp is bloomindex.filters.expected_fpp
    assert not hasattr(bloomindex.sbbf, "expected_fpp")
    for f in (Sbbf(4096), SbbfMurmur3(4096), ClassicBloomFilter.for_ndv(1000, 0.01)):
        fpp = 0.01 if f.algorithm == "classic" else None
        assert f.expected_fpp(1000) == bloomindex.expected_fpp(f.num_bytes, 1000, f.algorithm, fpp)
    assert bloomindex.expected_fpp(4096, 1000) == bloomindex.expected_fpp(4096, 1000, "sbbf")
    with pytest.raises(ValueError, match="num_bytes"):
        bloomindex.expected_fpp(100, 10)  # not a multiple of 32, for every design


def test_power_of_two_is_false_by_default_everywhere():
    seen = {}
    for name, obj in _callables().items():
        try:
            params = inspect.signature(obj).parameters
        except (TypeError, ValueError):
            continue
        if "power_of_two" in params:
            seen[name] = params["power_of_two"].default
    assert len(seen) >= 6 and set(seen.values()) == {False}, seen
    n = bloomindex.optimal_num_bytes(1000, 0.01)
    assert Sbbf.for_ndv(1000, 0.01).num_bytes == n == bloomindex.filters.num_bytes(1000, 0.01)
    p2 = bloomindex.optimal_num_bytes(1000, 0.01, power_of_two=True)
    assert n & (n - 1) != 0 and p2 & (p2 - 1) == 0  # 1344 and 2048
    assert bloomindex.filters.for_ndv(1000, 0.01).num_bytes == n


def test_create_declares_global_filter_and_source_format():
    params = inspect.signature(BloomIndex.create).parameters
    for name, default in (("global_filter", False), ("source_format", None), ("algorithm", None),
                          ("if_not_exists", False)):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY and params[name].default is default, name
    assert params["options"].kind is inspect.Parameter.VAR_KEYWORD
    # Checked before any JVM call: a BloomIndex without a session is enough.
    bi = BloomIndex.__new__(BloomIndex)
    for options in ({"global_": True}, {"global": True}, {"GLOBAL": "true"}):
        with pytest.raises(ValueError, match="global_filter=True"):
            bi.create("i", "t", ["c"], **options)
    with pytest.raises(TypeError, match="global_filter"):
        bi.create("i", "t", ["c"], global_filter="yes")


def test_hashing_takes_spark_type_and_hash_name():
    assert bloomindex.hash_value(7, spark_type="int", hash_name="murmur3") == \
        int(bloomindex.hash_values(np.array([7], dtype=np.int32), "int", "murmur3")[0])
    f = SbbfMurmur3(64)
    f.insert([7], spark_type="int")
    assert f.might_contain(7, spark_type="int") and f.check([7], spark_type="int").all()


@pytest.mark.parametrize("call,message", [
    (lambda bi: bi.create(123, "t", ["s"]), "create: name must be a str .*, got int"),
    (lambda bi: bi.create("z", "t", 42), "create: columns: expected a column name, a list of names or text columns, or a dict"),
    (lambda bi: bi.create("z", "t", ["a", 1]), "create: columns: expected column names \\(str\\) or tokens\\(...\\) / ngrams\\(...\\), got int"),
    (lambda bi: bi.create("z", 7, ["a"]), "create: source must be a table name, a path \\(str\\) or a DataFrame, got int"),
    (lambda bi: bi.refresh(None), "refresh: name must be a str .*, got NoneType"),
    (lambda bi: bi.drop(["z"]), "drop: name must be a str .*, got list"),
    (lambda bi: bi.drop("z", if_exists="yes"), "drop: if_exists must be True or False, got str"),
    (lambda bi: bi.describe(3.5), "describe: name must be a str .*, got float"),
    (lambda bi: bi.explain("SELECT 1"), r"explain: df must be a DataFrame \(spark.sql\(query\) makes one"),
    (lambda bi: bi.prefilter({"a": 1}, "k", "i", "c"), "prefilter: df must be a DataFrame, got dict"),
    (lambda bi: bi.join_filter_metrics(None), "join_filter_metrics: df must be a DataFrame, got NoneType"),
])
def test_wrong_types_are_type_errors_naming_the_argument(call, message):
    # Checked before any JVM or server call: a BloomIndex without a session is enough.
    bi = BloomIndex.__new__(BloomIndex)
    with pytest.raises(TypeError, match=message) as e:
        call(bi)
    assert not isinstance(e.value, ValueError)


@pytest.mark.parametrize("call,message", [
    (lambda bi: bi.create("", "t", ["s"]), "create: name must not be empty"),
    (lambda bi: bi.create("z", "t", []), "create: columns: expected column names"),
    (lambda bi: bi.create("z", "t", ["a", " "]), "create: columns: expected column names, got an empty one"),
    (lambda bi: bi.refresh("z", mode="bogus"), "refresh: mode: expected 'incremental' or 'full'"),
])
def test_wrong_values_are_value_errors_naming_the_argument(call, message):
    bi = BloomIndex.__new__(BloomIndex)
    with pytest.raises(ValueError, match=message) as e:
        call(bi)
    assert not isinstance(e.value, TypeError)


_BUILDING = re.compile(r"bloomindex: building 'prog_idx': ((\d+)/8 files, )?(\d+)/(\d+) tasks, \d+(\.\d)? (B|KiB|MiB) read, "
                       r"\d+ s")
_BUILT = re.compile(r"bloomindex: built 'prog_idx' in [\d.]+ s: (\d+)/(\d+) files, (\d+)/(\d+) tasks, \d+(\.\d)? (B|KiB|MiB) "
                    r"read$")


@pytest.fixture()
def progress_source(spark, root, tmp_path, monkeypatch):
    from bloomindex import _classic

    monkeypatch.setattr(_classic, "PROGRESS_DELAY", 0.0)
    monkeypatch.setattr(_classic, "PROGRESS_INTERVAL", 0.05)
    path = str(tmp_path / "prog")
    spark.range(0, 20_000, 1, 8).selectExpr("id", "cast(id AS string) AS s").write.parquet(path)
    assert BloomIndex(spark, progress=False).create("prog_idx", path, ["id", "s"], source_format="parquet")
    return path


def _refresh_with(spark, monkeypatch, capfd, progress, terminal, spark_bar):
    """stderr of a full refresh of prog_idx with ``progress``, stderr a terminal or not, and
    Spark's console progress bar on or off."""
    from bloomindex import _classic

    monkeypatch.setattr(_classic, "_stderr_is_terminal", lambda: terminal)
    monkeypatch.setattr(_classic, "_spark_shows_progress", lambda s: spark_bar)
    bi = BloomIndex(spark, progress=progress)
    capfd.readouterr()
    bi.refresh("prog_idx", mode="full")
    return capfd.readouterr().err


def _start_and_end_lines(err):
    building = [line for line in err.splitlines() if line.startswith("bloomindex: building")]
    built = [line for line in err.splitlines() if line.startswith("bloomindex: built")]
    assert "\r" not in err  # no in-place rewriting
    # A build of 8 files takes longer than the 0.05 s poll: one start line, one end line.
    assert len(building) == 1 and len(built) == 1, err
    assert _BUILDING.fullmatch(building[0]), building
    files_done, files, done, total = map(int, _BUILT.match(built[0]).groups()[:4])
    assert files_done == files == 8, built  # the 8 source files, each counted once
    assert 0 < done == total, built  # every task of the build's (not skipped) stages ran


def test_progress_true_off_a_terminal_is_a_start_and_an_end_line(spark, progress_source, capfd, monkeypatch):
    _start_and_end_lines(_refresh_with(spark, monkeypatch, capfd, True, terminal=False, spark_bar=False))
    # Where Spark's console bar is on, progress=True gives lines, never a second bar.
    _start_and_end_lines(_refresh_with(spark, monkeypatch, capfd, True, terminal=True, spark_bar=True))


def test_progress_on_a_terminal_is_one_line_rewritten_in_place(spark, progress_source, capfd, monkeypatch):
    for progress in ("auto", True):
        err = _refresh_with(spark, monkeypatch, capfd, progress, terminal=True, spark_bar=False)
        updates = err.split("\r")
        assert updates[0] == "" and len(updates) >= 2, repr(err)  # every update rewrites the line
        *shown, last = updates
        assert all(_BUILDING.match(u) for u in updates[1:]), repr(err)
        final, end, tail = last.split("\n")
        assert _BUILDING.match(final) and _BUILT.fullmatch(end) and tail == "", repr(err)


@pytest.mark.parametrize("progress,terminal,spark_bar", [
    ("auto", False, False),  # stderr not a terminal (a log, a notebook): off unless asked for
    ("auto", True, True),    # Spark's own console bar shows the build
    ("auto", False, True),
    (False, True, False),    # never
    (False, False, False),
])
def test_no_progress(spark, progress_source, capfd, monkeypatch, progress, terminal, spark_bar):
    err = _refresh_with(spark, monkeypatch, capfd, progress, terminal, spark_bar)
    assert "bloomindex: build" not in err and "\r" not in err, repr(err)


def test_a_builds_jobs_carry_its_group_and_description(spark, progress_source):
    # What the Spark UI shows: the jobs of the build in the index's job group, described by its statement.
    sc = spark.sparkContext
    jobs = sc.statusTracker().getJobIdsForGroup("bloomindex-prog_idx")
    assert jobs
    store = sc._jsc.sc().statusStore()
    descriptions = {store.job(j).description().get() for j in jobs if store.job(j).description().isDefined()}
    assert any(d.startswith("CREATE BLOOM INDEX prog_idx ON ") for d in descriptions), descriptions


def test_progress_is_checked(spark):
    with pytest.raises(TypeError, match="BloomIndex: progress must be 'auto', True or False, got int"):
        BloomIndex(spark, progress=1)
    with pytest.raises(ValueError, match="BloomIndex: progress must be 'auto', True or False, got 'always'"):
        BloomIndex(spark, progress="always")
