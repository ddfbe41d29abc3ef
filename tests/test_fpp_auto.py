"""Issue 31: `fpp = 'auto'`. Each build (CREATE, REFRESH) chooses an `auto` column's rate from
its files, their distinct values (sampled) and the source's workload history (advisor.FppModel);
the spec keeps `auto`, the log records the rate chosen, DESCRIBE shows `auto (chosen <rate>)`,
and the filters are sized for it. Answers are the same as without the index. Bad values are
refused. The test session pins `spark.bloomindex.fpp.default` to 0.01 (conftest.py): these tests
name `auto` or set the default to it."""

from __future__ import annotations

import os
import re

import pytest
from pyspark.sql import functions as F
from pyspark.errors import AnalysisException, IllegalArgumentException

import bloomindex.filters
from bloomindex import BloomIndex
from bloomindex._backend import ArgumentTypeError
from bloomindex._headers import sbbf_header
from index_helpers import assert_same_with_pruning_off, confs, index_rows, log_entries

CHOSEN = re.compile(r"^auto \(chosen ([0-9.Ee-]+)\)$")


def _describe(spark, name):
    return {r.info_name: r.info_value for r in spark.sql(f"DESCRIBE BLOOM INDEX {name}").collect()}


def _write(spark, path, start, rows, files, mode="error"):
    (spark.range(start, start + rows, numPartitions=files)
     .select(F.col("id").alias("k"), F.concat(F.lit("s"), (F.col("id") * 7).cast("string")).alias("s"),
             (F.col("id") % 3).alias("g"))
     .write.mode(mode).parquet(path))


def _active_columns(root, name):
    active = [e for e in log_entries(root, name) if e["state"] == "ACTIVE"][-1]
    return {c["name"]: c for c in active["spec"]["columns"]}


def _chosen(d, column):
    m = CHOSEN.match(d[f"column.{column}.fpp"])
    assert m, d[f"column.{column}.fpp"]
    return float(m.group(1))


def _assert_sized_for(spark, root, name, column, fpp, skip=frozenset()):
    """Every filter of `column` built from the data (but those of the files in `skip`) is the
    exact size for its file's distinct count at `fpp`: the build used the rate it recorded."""
    rows = [r for r in index_rows(spark, root, name)
            if r.column == column and r.built_from == "data" and r.file_path not in skip]
    assert rows
    for r in rows:
        want = bloomindex.filters.num_bytes(max(r.ndv, 1), fpp)
        assert len(r.filter) == len(sbbf_header(want)) + want, (r.file_path, r.ndv, len(r.filter), want)


def test_auto_is_chosen_shown_and_kept_through_refresh(spark, root, tmp_path):
    path = str(tmp_path / "t")
    _write(spark, path, 0, 4000, 8)
    spark.sql(f"CREATE BLOOM INDEX a ON parquet.`{path}` FOR COLUMNS (k OPTIONS (fpp = 'auto'), s OPTIONS (fpp = 0.05))")
    d = _describe(spark, "a")
    first = _chosen(d, "k")
    assert 1e-6 <= first <= 0.1
    assert d["column.s.fpp"] == "0.05"  # an explicit rate is kept as it is
    cols = _active_columns(root, "a")
    assert cols["k"]["fppAuto"] is True and "fppAuto" not in cols["s"]
    assert float(f"{cols['k']['fpp']:.3g}") == pytest.approx(first, rel=1e-9)
    _assert_sized_for(spark, root, "a", "k", cols["k"]["fpp"])

    # Twice the files: REFRESH chooses again by the same rule (auto kept, a new rate recorded;
    # the distinct values per file from the first version's filters, not sampled again).
    before = {r.file_path for r in index_rows(spark, root, "a")}
    _write(spark, path, 4000, 4000, 8, mode="append")
    spark.sql("REFRESH BLOOM INDEX a")
    d = _describe(spark, "a")
    again = _chosen(d, "k")
    assert 1e-6 <= again <= 0.1
    cols = _active_columns(root, "a")
    assert cols["k"]["fppAuto"] is True and cols["s"]["fpp"] == 0.05
    # The new files' filters are sized for the new rate; the kept ones are as they were.
    assert d["files_indexed"] == "16"
    _assert_sized_for(spark, root, "a", "k", cols["k"]["fpp"], skip=before)
    # A full rebuild: every filter at the rate chosen now.
    spark.sql("REFRESH BLOOM INDEX a FULL")
    cols = _active_columns(root, "a")
    assert cols["k"]["fppAuto"] is True
    _assert_sized_for(spark, root, "a", "k", cols["k"]["fpp"])

    for where in ("k = 1234", "k IN (1, 4001, 7999, 99999)", "k = -5", "s = 's700'"):
        rows = assert_same_with_pruning_off(spark, lambda: spark.read.parquet(path).where(where))
        assert len(rows) == {"k = 1234": 1, "k = -5": 0, "s = 's700'": 1}.get(where, 3)


def test_a_small_write_keeps_the_rate_and_its_tasks_filters(spark, root, tmp_path):
    """An incremental refresh keeps the recorded rate while the new choice is within 2x of it
    (AutoFpp.KeepWithin): a refresh on write then uses the filters the write's own tasks built
    at that rate (matched by the whole column spec) instead of reading the new file."""
    path = str(tmp_path / "t")
    _write(spark, path, 0, 4000, 8)
    spark.sql(f"CREATE BLOOM INDEX small_w ON parquet.`{path}` FOR COLUMNS (k OPTIONS (fpp = 'auto')) "
              "OPTIONS (refresh = 'on_write')")
    first = _active_columns(root, "small_w")["k"]["fpp"]
    _write(spark, path, 4000, 500, 1, mode="append")  # 9 files: the choice moves by 9/8 at most
    assert _describe(spark, "small_w")["files_indexed"] == "9"
    assert _active_columns(root, "small_w")["k"]["fpp"] == first
    assert spark._jvm.bloomindex.actions.WriteEvents.filesFromWriteTasks(spark._jsparkSession, "small_w") == 1
    _assert_sized_for(spark, root, "small_w", "k", first)
    for where in ("k = 4321", "k IN (1, 4499, 99999)"):
        assert_same_with_pruning_off(spark, lambda: spark.read.parquet(path).where(where))


def test_auto_is_the_default_of_new_indexes_and_index_wide(spark, root, tmp_path):
    path = str(tmp_path / "t")
    _write(spark, path, 0, 2000, 4)
    with confs(spark, {"spark.bloomindex.fpp.default": "auto"}):
        spark.sql(f"CREATE BLOOM INDEX dflt ON parquet.`{path}` FOR COLUMNS (k)")
    assert CHOSEN.match(_describe(spark, "dflt")["column.k.fpp"])
    # Index-wide, any case; a column's own number wins.
    spark.sql(f"CREATE BLOOM INDEX wide ON parquet.`{path}` FOR COLUMNS (k, s OPTIONS (fpp = 0.02)) "
              "OPTIONS (fpp = ' AUTO ')")
    d = _describe(spark, "wide")
    assert CHOSEN.match(d["column.k.fpp"]) and d["column.s.fpp"] == "0.02"
    # A number as the session default: a fixed rate, as before.
    spark.sql(f"CREATE BLOOM INDEX fixed ON parquet.`{path}` FOR COLUMNS (k)")
    assert _describe(spark, "fixed")["column.k.fpp"] == "0.01"
    assert "fppAuto" not in _active_columns(root, "fixed")["k"]
    # Python: fpp='auto' (classic or Connect alike).
    assert BloomIndex(spark).create("py", path, ["k"], fpp="auto", source_format="parquet")
    assert CHOSEN.match(BloomIndex(spark).describe("py")["column.k.fpp"])
    assert_same_with_pruning_off(spark, lambda: spark.read.parquet(path).where("k IN (3, 1999, 5000)"))


def test_a_bigger_table_gets_a_smaller_rate(spark, root, tmp_path):
    """With one recorded lookup a build, loading the filters weighs more than false positive reads
    down to well below 0.1 / files: the cap on expected false positive files (0.1 a lookup)
    decides: 0.1 / files, or a rate below it with a filter of the same size (the budget lifted;
    from 12 files, where the cap is below the range's top, 0.01). 4x the files, a 4x smaller rate."""
    rates = {}
    with confs(spark, {"spark.bloomindex.fpp.autoBudget": "100", "spark.bloomindex.history.enabled": "true"}):
        # From 12 files: the cap, 0.1 / files, below the range's top (0.01).
        for name, files in (("small", 12), ("big", 48)):
            path = str(tmp_path / name)
            spark.range(0, 500 * files, numPartitions=files).select(F.col("id").alias("k")).write.parquet(path)
            assert spark.read.parquet(path).where("k = 5").count() == 1
            spark.sql(f"CREATE BLOOM INDEX {name} ON parquet.`{path}` FOR COLUMNS (k) OPTIONS (fpp = 'auto')")
            rates[name] = _active_columns(root, name)["k"]["fpp"]
    for name, files in (("small", 12), ("big", 48)):
        cap = 0.1 / files
        # At most the cap, and a filter of the cap's size (500 distinct values a file).
        assert rates[name] <= cap * (1 + 1e-9), rates
        assert bloomindex.filters.num_bytes(500, rates[name]) == bloomindex.filters.num_bytes(500, cap), rates
    assert rates["big"] < rates["small"] / 3


def test_the_budget_bounds_the_rate(spark, root, tmp_path):
    path = str(tmp_path / "t")
    _write(spark, path, 0, 4000, 8)
    with confs(spark, {"spark.bloomindex.fpp.autoBudget": "100"}):
        spark.sql(f"CREATE BLOOM INDEX roomy ON parquet.`{path}` FOR COLUMNS (k) OPTIONS (fpp = 'auto')")
    with confs(spark, {"spark.bloomindex.fpp.autoBudget": "0.0001"}):
        spark.sql(f"CREATE BLOOM INDEX tight ON parquet.`{path}` FOR COLUMNS (k) OPTIONS (fpp = 'auto')")
    roomy = _active_columns(root, "roomy")["k"]["fpp"]
    tight = _active_columns(root, "tight")["k"]["fpp"]
    # A budget no rate in range meets: the range's largest, 0.01 (the fixed default auto
    # replaced: auto never reads more files than it).
    assert tight == pytest.approx(0.01) and roomy < tight
    assert_same_with_pruning_off(spark, lambda: spark.read.parquet(path).where("k = 77"))


def test_recorded_lookups_inform_the_rate(spark, root, tmp_path):
    """With the source's workload history holding 3 lookups of `k` (fewer than the 100 a build is
    assumed to serve without one), loading the index weighs more per lookup: a larger rate."""
    path = str(tmp_path / "t")
    _write(spark, path, 0, 4000, 4)
    with confs(spark, {"spark.bloomindex.fpp.autoBudget": "100"}):
        with confs(spark, {"spark.bloomindex.history.enabled": "false"}):
            spark.sql(f"CREATE BLOOM INDEX h ON parquet.`{path}` FOR COLUMNS (k) OPTIONS (fpp = 'auto')")
        without = _active_columns(root, "h")["k"]["fpp"]
        with confs(spark, {"spark.bloomindex.history.enabled": "true"}):
            for v in (5, 50, 500):
                spark.read.parquet(path).where(f"k = {v}").collect()
            assert [r for r in BloomIndex(spark).history().collect() if any(p["column"] == "k" for p in r.predicates)]
            spark.sql("REFRESH BLOOM INDEX h FULL")
        recorded = _active_columns(root, "h")["k"]["fpp"]
    assert recorded > without


@pytest.mark.parametrize("bad", ["'autox'", "0", "1", "'-0.5'", "''"])
def test_bad_fpp_values_are_refused(spark, root, tmp_path, bad):
    path = str(tmp_path / "t")
    _write(spark, path, 0, 100, 1)
    for sql in (f"CREATE BLOOM INDEX bad ON parquet.`{path}` FOR COLUMNS (k OPTIONS (fpp = {bad}))",
                f"CREATE BLOOM INDEX bad ON parquet.`{path}` FOR COLUMNS (k) OPTIONS (fpp = {bad})"):
        with pytest.raises(AnalysisException) as e:
            spark.sql(sql)
        assert e.value.getCondition() == "BLOOM_INDEX_INVALID_OPTION_VALUE", str(e.value)
        assert "'auto' or a number in (0, 1)" in str(e.value)
    assert not os.path.exists(os.path.join(root, "bad"))


def test_bad_fpp_values_are_refused_in_python_and_in_the_conf(spark, root, tmp_path):
    path = str(tmp_path / "t")
    _write(spark, path, 0, 100, 1)
    with pytest.raises(ArgumentTypeError, match=r"^create: fpp must be a number \(float or int\), got str \(the one str taken is 'auto'\)"):
        BloomIndex(spark).create("bad", path, ["k"], fpp="autox", source_format="parquet")
    with pytest.raises(AnalysisException, match="BLOOM_INDEX_INVALID_OPTION_VALUE"):
        BloomIndex(spark).create("bad", path, {"k": {"fpp": "autox"}}, source_format="parquet")
    session = spark.newSession()
    for v in ("autox", "0", "1"):
        with pytest.raises(IllegalArgumentException, match=re.escape("spark.bloomindex.fpp.default")):
            session.conf.set("spark.bloomindex.fpp.default", v)
    with pytest.raises(IllegalArgumentException, match=re.escape("spark.bloomindex.fpp.autoBudget")):
        session.conf.set("spark.bloomindex.fpp.autoBudget", "0")


@pytest.mark.delta
def test_auto_on_a_delta_table(spark, root, tmp_path):
    """The sample reads a Delta table's files through the build's relation (Delta's own reader
    settings); REFRESH after an append chooses again."""
    path = str(tmp_path / "d")
    spark.range(0, 2000, numPartitions=4).select(F.col("id").alias("k")).write.format("delta").save(path)
    spark.sql(f"CREATE BLOOM INDEX dl ON delta.`{path}` FOR COLUMNS (k) OPTIONS (fpp = 'auto')")
    assert CHOSEN.match(_describe(spark, "dl")["column.k.fpp"])
    spark.range(2000, 3000, numPartitions=2).select(F.col("id").alias("k")).write.format("delta").mode("append").save(path)
    spark.sql("REFRESH BLOOM INDEX dl")
    assert CHOSEN.match(_describe(spark, "dl")["column.k.fpp"])
    assert _active_columns(root, "dl")["k"]["fppAuto"] is True
    rows = assert_same_with_pruning_off(spark, lambda: spark.read.format("delta").load(path).where("k IN (5, 2500, 9999)"))
    assert sorted(r.k for r in rows) == [5, 2500]
