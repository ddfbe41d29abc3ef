"""Indexes of each filter design: built, stored, read back and pruning as the default one does.

Per design (sbbf-murmur3 and classic here; sbbf is test_pruning's): the same random predicates
give the same answers with pruning on and off, pruning skips files, the stored filters are the
design's own serialized form and hold every value (checked in Python), global filters merge on
refresh, and the spec records the design.
"""

from __future__ import annotations

import os
import random

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import Row

import bloomindex.filters
from bloomindex import BloomIndex
from index_helpers import assert_filters_hold_values, index_rows, log_entries
from test_pruning import COLUMNS, KEYS, SCHEMA, _random_predicate, _rows, _sql_literal

# Random predicates per design: 40 per CI run (test_pruning runs 200 on the default design),
# 600 under `make test-nightly`.
QUERIES = int(os.environ.get("BLOOMINDEX_ALG_QUERIES", "20"))
TYPES = {"c_int": "int", "c_bigint": "bigint", "c_str": "string", "c_date": "date", "c_dec": "decimal(10,2)",
         "c_bigdec": "decimal(25,3)", "c_bin": "binary", "c_double": "double"}


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    """The test_pruning table, once per design, each indexed with that design."""
    root = str(tmp_path_factory.mktemp("alg_indexes"))
    spark.conf.set("spark.bloomindex.root", root)
    rows = _rows(random.Random(20261121), range(KEYS))
    cols = ", ".join(n for n, _, _ in COLUMNS)
    out = {}
    for alg in ("sbbf-murmur3", "classic"):
        path = str(tmp_path_factory.mktemp("alg") / alg)
        (spark.createDataFrame(rows, SCHEMA).repartition(12, "bucket").drop("bucket")
         .write.partitionBy("part").parquet(path))
        name = f"idx_{alg.replace('-', '_')}"
        if alg == "classic":  # through Python's argument ...
            BloomIndex(spark, progress=False).create(name, path, [n for n, _, _ in COLUMNS], fpp=0.01,
                                                     algorithm=alg, source_format="parquet", global_filter=True)
        else:  # ... and through SQL
            spark.sql(f"CREATE BLOOM INDEX {name} ON parquet.`{path}` FOR COLUMNS ({cols}) "
                      f"OPTIONS (fpp = 0.01, algorithm = '{alg}', global = true)")
        spark.read.parquet(path).createOrReplaceTempView(f"t_{name}")
        out[alg] = (name, path)
    yield root, out
    spark.conf.unset("spark.bloomindex.root")


def _answer(spark, view: str, where: str, pruning: bool):
    spark.conf.set("spark.bloomindex.pruning.enabled", str(pruning).lower())
    return tuple(spark.sql(f"SELECT count(*) AS n, sum(hash(*)) AS h FROM {view} WHERE {where}").collect()[0])


@pytest.mark.parametrize("alg", ["sbbf-murmur3", "classic"])
def test_differential_random_predicates(spark, tables, alg):
    _, out = tables
    name, path = out[alg]
    rng = random.Random(606)
    total = len(spark.read.parquet(path).inputFiles())
    pruned = 0
    try:
        for q in range(QUERIES):
            where = _random_predicate(rng)
            on, off = _answer(spark, f"t_{name}", where, True), _answer(spark, f"t_{name}", where, False)
            assert on == off, f"{alg}, query {q}: WHERE {where}: pruning on {on}, off {off}"
            if q % 5 == 0:
                spark.conf.set("spark.bloomindex.pruning.enabled", "true")
                if len(spark.sql(f"SELECT * FROM t_{name} WHERE {where}").inputFiles()) < total:
                    pruned += 1
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")
    assert pruned >= QUERIES // 5 // 4, pruned


@pytest.mark.parametrize("alg", ["sbbf-murmur3", "classic"])
def test_point_lookups_skip_files(spark, tables, alg):
    _, out = tables
    name, path = out[alg]
    total = len(spark.read.parquet(path).inputFiles())
    for col, t, gen in COLUMNS:
        if col in ("c_double", "c_float", "c_tiny"):
            continue
        v = _sql_literal(col, t, gen(777))
        spark.conf.set("spark.bloomindex.pruning.enabled", "true")
        q = spark.sql(f"SELECT * FROM parquet.`{path}` WHERE {col} = {v}")
        assert len(q.inputFiles()) <= 4 < total, (alg, col)
        assert q.count() == _answer(spark, f"t_{name}", f"{col} = {v}", False)[0]
    spark.conf.unset("spark.bloomindex.pruning.enabled")
    assert f"index {name}" in BloomIndex(spark).explain(spark.sql(f"SELECT * FROM parquet.`{path}` WHERE c_bigint = 5"))


@pytest.mark.parametrize("alg", ["sbbf-murmur3", "classic"])
def test_stored_filters_are_the_designs_and_hold_every_value(spark, tables, alg):
    root, out = tables
    name, path = out[alg]
    spec_cols = log_entries(root, name)[-1]["spec"]["columns"]
    assert {c["algorithm"] for c in spec_cols} == {alg}
    assert BloomIndex(spark).describe(name)["column.c_bigint.algorithm"] == alg
    checked = assert_filters_hold_values(spark, root, name, spark.read.parquet(path), TYPES, algorithm=alg)
    assert checked > KEYS
    for r in index_rows(spark, root, name)[:20]:
        f = bloomindex.filters.deserialize(bytes(r.filter), alg)
        assert f.algorithm == alg
        if alg == "sbbf-murmur3":
            assert f.num_bytes & (f.num_bytes - 1) == 0
        else:
            assert f.num_hashes == 7  # round(-log2 0.01)


@pytest.mark.parametrize("alg", ["sbbf-murmur3", "classic"])
def test_global_filters_are_built_and_merged_on_refresh(spark, tables, alg, tmp_path):
    root, out = tables
    name, path = out[alg]
    copy = str(tmp_path / "copy")
    spark.read.parquet(path).write.partitionBy("part").parquet(copy)
    idx = f"g_{name}"
    BloomIndex(spark, progress=False).create(idx, copy, ["c_bigint"], algorithm=alg, source_format="parquet", global_filter=True)
    key = 987654321
    spark.createDataFrame([Row(c_bigint=key, part=1)]).write.mode("append").partitionBy("part").parquet(copy)
    spark.sql(f"REFRESH BLOOM INDEX {idx}")
    entry = log_entries(root, idx)[-1]
    import glob
    import os
    globals_ = spark.read.parquet(os.path.join(root, idx, entry["data"]["dir"], "_global")).collect()
    assert len(globals_) == 1
    g = bloomindex.filters.deserialize(bytes(globals_[0].filter), alg)
    assert g.might_contain(key, "bigint")
    values = [r.c_bigint for r in spark.read.parquet(copy).where("c_bigint IS NOT NULL").collect()]
    assert g.check(values, "bigint").all()
    q = spark.sql(f"SELECT * FROM parquet.`{copy}` WHERE c_bigint = {key}")
    assert q.count() == 1 and len(q.inputFiles()) == 1
    assert glob.glob(os.path.join(root, idx, "_log", "*.json"))


def test_per_column_designs_and_bad_choices(spark, tables, tmp_path):
    path = str(tmp_path / "mixed")
    spark.range(300).selectExpr("id", "cast(id as string) s", "id * 2 AS d").repartition(3, "id").write.parquet(path)
    spark.sql(f"CREATE BLOOM INDEX mixed ON parquet.`{path}` FOR COLUMNS "
              f"(id, s OPTIONS (algorithm = 'sbbf'), d OPTIONS (algorithm = 'SBBF-MURMUR3')) "
              f"OPTIONS (algorithm = 'classic')")
    d = BloomIndex(spark).describe("mixed")
    assert [d[f"column.{c}.algorithm"] for c in ("id", "s", "d")] == ["classic", "sbbf", "sbbf-murmur3"]
    for col in ("id", "d"):
        q = spark.sql(f"SELECT * FROM parquet.`{path}` WHERE {col} = 4")
        assert q.count() == 1 and len(q.inputFiles()) == 1
    assert len(spark.sql(f"SELECT * FROM parquet.`{path}` WHERE s = '2'").inputFiles()) == 1
    for sql, msg in [
        (f"CREATE BLOOM INDEX bad1 ON parquet.`{path}` FOR COLUMNS (id) OPTIONS (algorithm = 'cuckoo')",
         "Invalid algorithm 'cuckoo'"),
        (f"CREATE BLOOM INDEX bad2 ON parquet.`{path}` FOR COLUMNS (id OPTIONS (algorithm = ''))",
         "Invalid algorithm"),
        (f"CREATE BLOOM INDEX bad3 ON parquet.`{path}` FOR COLUMNS (id) OPTIONS (algorithm = 'classic', fpp = 1e-30)",
         "Invalid fpp"),
    ]:
        with pytest.raises(AnalysisException, match=msg):
            spark.sql(sql)
    assert [r for r in BloomIndex(spark).list().collect() if r[0].startswith("bad")] == []


@pytest.mark.parametrize("alg", ["sbbf-murmur3", "classic"])
def test_join_filter_uses_the_designs_global_filter(spark, tables, alg, tmp_path):
    """The join pre-filter hashes keys with the design's hash and checks its global filter."""
    _, out = tables
    name, _ = out[alg]
    gen = {n: g for n, _, g in COLUMNS}
    fact_path = str(tmp_path / "fact")
    keys = range(0, 6000, 2)  # the table holds keys near 0..1499: most of these are absent
    fits = lambda v: v if -2**31 <= v < 2**31 else None  # noqa: E731
    spark.createDataFrame([(gen["c_bigint"](k), fits(gen["c_bigint"](k)), gen["c_int"](k), gen["c_str"](k), i)
                           for i, k in enumerate(keys)],
                          "b long, ib int, i int, s string, v long").repartition(2).write.parquet(fact_path)
    spark.read.parquet(fact_path).createOrReplaceTempView("fact_alg")
    enabled = "spark.bloomindex.joinFilter.enabled"
    try:
        for fact_key, key in (("b", "c_bigint"), ("i", "c_int"), ("s", "c_str"), ("ib", "c_bigint")):
            query = f"SELECT f.v, t.part FROM fact_alg f JOIN t_{name} t ON f.{fact_key} = t.{key}"
            spark.conf.set(enabled, "true")
            on = spark.sql(query)
            assert "bloom_might_contain" in on._jdf.queryExecution().optimizedPlan().toString(), query
            rows_on = sorted(on.collect())
            [m] = BloomIndex(spark).join_filter_metrics(on)
            assert m["numInputRows"] == len(keys) and m["numOutputRows"] < len(keys) // 2, (query, m)
            spark.conf.set(enabled, "false")
            assert rows_on == sorted(spark.sql(query).collect()), query
            assert rows_on, query
    finally:
        spark.conf.unset(enabled)
