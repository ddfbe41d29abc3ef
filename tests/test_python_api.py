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
    with pytest.raises(ValueError, match="global_filter"):
        bi.create("i", "t", ["c"], global_filter="yes")


def test_hashing_takes_spark_type_and_hash_name():
    assert bloomindex.hash_value(7, spark_type="int", hash_name="murmur3") == \
        int(bloomindex.hash_values(np.array([7], dtype=np.int32), "int", "murmur3")[0])
    f = SbbfMurmur3(64)
    f.insert([7], spark_type="int")
    assert f.might_contain(7, spark_type="int") and f.check([7], spark_type="int").all()


@pytest.mark.parametrize("call,message", [
    (lambda bi: bi.create(123, "t", ["s"]), "name: an index name must be a string, got int"),
    (lambda bi: bi.create("", "t", ["s"]), "name: an index name must not be empty"),
    (lambda bi: bi.create("z", "t", 42), "columns: expected a column name, a list of names or a dict"),
    (lambda bi: bi.create("z", "t", []), "columns: expected column names"),
    (lambda bi: bi.create("z", "t", ["a", 1]), "columns: expected column names"),
    (lambda bi: bi.create("z", 7, ["a"]), "source: expected a table name, a path or a DataFrame, got int"),
    (lambda bi: bi.refresh(None), "name: an index name must be a string, got NoneType"),
    (lambda bi: bi.refresh("z", mode="bogus"), "mode: expected 'incremental' or 'full'"),
    (lambda bi: bi.drop(["z"]), "name: an index name must be a string, got list"),
    (lambda bi: bi.drop("z", if_exists="yes"), "if_exists must be True or False"),
    (lambda bi: bi.describe(3.5), "name: an index name must be a string, got float"),
    (lambda bi: bi.explain("SELECT 1"), r"explain: expected a DataFrame \(spark.sql\(query\) makes one"),
    (lambda bi: bi.prefilter({"a": 1}, "k", "i", "c"), "prefilter: expected a DataFrame, got dict"),
    (lambda bi: bi.join_filter_metrics(None), "join_filter_metrics: expected a DataFrame, got NoneType"),
])
def test_bad_arguments_are_value_errors_naming_the_argument(call, message):
    # Checked before any JVM or server call: a BloomIndex without a session is enough.
    bi = BloomIndex.__new__(BloomIndex)
    with pytest.raises(ValueError, match=message):
        call(bi)


def test_one_progress_display_on_a_non_terminal(spark, root, tmp_path, capfd, monkeypatch):
    from bloomindex import _classic

    monkeypatch.setattr(_classic, "PROGRESS_DELAY", 0.0)
    monkeypatch.setattr(_classic, "PROGRESS_INTERVAL", 0.05)
    # As where Spark's console progress bar is off (PySpark turns it on in this test session).
    monkeypatch.setattr(_classic, "_spark_shows_progress", lambda s: False)
    path = str(tmp_path / "prog")
    spark.range(0, 20_000, 1, 8).selectExpr("id", "cast(id AS string) AS s").write.parquet(path)
    bi = BloomIndex(spark, progress=True)
    capfd.readouterr()
    bi.create("prog_idx", path, ["id", "s"], source_format="parquet")
    err = capfd.readouterr().err
    building = [line for line in err.splitlines() if line.startswith("bloomindex: building 'prog_idx'")]
    built = [line for line in err.splitlines() if line.startswith("bloomindex: built 'prog_idx' in ")]
    assert "\r" not in err  # no in-place rewriting where stderr is not a terminal
    # A build of 8 files takes longer than the 0.05 s poll: one start line, one end line.
    assert len(building) == 1 and len(built) == 1, err
    assert re.search(r"\d+/\d+ tasks, \d+ s", building[0]), building

    # Where Spark's own console progress bar is on, bloomindex prints none of its own.
    monkeypatch.setattr(_classic, "_spark_shows_progress", lambda s: True)
    bi.refresh("prog_idx", mode="full")
    assert "bloomindex: build" not in capfd.readouterr().err
    # progress=False: none either.
    monkeypatch.setattr(_classic, "_spark_shows_progress", lambda s: False)
    BloomIndex(spark, progress=False).refresh("prog_idx", mode="full")
    assert "bloomindex: build" not in capfd.readouterr().err
