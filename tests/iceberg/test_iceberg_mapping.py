"""Randomized Iceberg time travel across schema changes (issue 30): a table goes through a random
sequence of appends, column swaps by renaming, columns dropped and added again (a new field id
under the old name) and added columns, with a tag after each step; then it is indexed on every
column it has now. Queries read the current table, each tag and each snapshot id (`VERSION AS
OF`, or the DataFrame option `versionAsOf`), on columns of the schema that version has, with
values present and absent: each with pruning on and off, and the rows must be equal. The index
holds today's field ids, so a version whose name is another field must not be pruned by it.

Pruning must still happen where the field is the index's: `v` is never renamed or dropped, and
every append's ids interleave with the others' (so Iceberg's min/max planning keeps every file
and a skipped file is the index's doing): a lookup of a held `v` at any version with two files
or more skips files (each asserted; and there must be such lookups).

BLOOMINDEX_ICEBERG_MAPPING_QUERIES (default 60) sets the number of queries,
BLOOMINDEX_MAPPING_SEED the seed; a failure names both, the history and the query."""

from __future__ import annotations

import os
import random

import pytest

from test_iceberg import _kept, _same

N_QUERIES = int(os.environ.get("BLOOMINDEX_ICEBERG_MAPPING_QUERIES", "60"))
SEED = int(os.environ.get("BLOOMINDEX_MAPPING_SEED", "20261125"))
ROWS = 40
STEPS = 6  # appends' ids are j * 10 + step: unique to the step, ranges interleaved


def _append(spark, table: str, columns: list[str], births: dict[str, str], step: int) -> None:
    """ROWS rows in one file: ids j * 10 + step; each string column `c` holds `<births[c]><id>`
    (its birth name follows the data across swaps), v the id."""
    exprs = [f"concat('{births[c]}', cast(id AS string)) AS `{c}`" if c != "v" else "cast(id AS int) AS v"
             for c in columns]
    spark.range(ROWS, numPartitions=1).selectExpr(f"id * 10 + {step} AS id").selectExpr(*exprs) \
        .writeTo(table).append()


def test_random_schema_histories_time_travel(spark, root, table):
    rng = random.Random(f"{SEED}-iceberg")
    columns = ["a", "b", "c", "v"]
    births = {"a": "a", "b": "b", "c": "c"}
    spark.sql(f"CREATE TABLE {table} (a STRING, b STRING, c STRING, v INT) USING iceberg")
    versions = []  # (VERSION AS OF literal, the columns that version has, its files)
    history = []
    added = 0
    for step in range(STEPS):
        kind = rng.choice(["append", "swap", "drop_add", "add"]) if step else "append"
        strings = [c for c in columns if c != "v"]
        if kind == "swap" and len(strings) >= 2:
            x, y = rng.sample(strings, 2)
            spark.sql(f"ALTER TABLE {table} RENAME COLUMN {x} TO tmp_swap")
            spark.sql(f"ALTER TABLE {table} RENAME COLUMN {y} TO {x}")
            spark.sql(f"ALTER TABLE {table} RENAME COLUMN tmp_swap TO {y}")
            births[x], births[y] = births[y], births[x]
            history.append(f"swap {x} {y}")
        elif kind == "drop_add" and strings:
            x = rng.choice(strings)
            spark.sql(f"ALTER TABLE {table} DROP COLUMN {x}")
            spark.sql(f"ALTER TABLE {table} ADD COLUMN {x} STRING")
            columns.remove(x)
            columns.append(x)
            births[x] = f"n{step}_"  # new values under the old name (a new field id)
            history.append(f"drop and add {x}")
        elif kind == "add":
            x = f"d{added}"
            added += 1
            spark.sql(f"ALTER TABLE {table} ADD COLUMN {x} STRING")
            columns.append(x)
            births[x] = x
            history.append(f"add {x}")
        else:
            history.append("append")
        # Every step appends one file (under the schema of now) and is tagged.
        _append(spark, table, columns, births, step)
        spark.sql(f"ALTER TABLE {table} CREATE TAG t{step}")
        snap = spark.sql(f"SELECT snapshot_id FROM {table}.refs WHERE name = 't{step}'").head()[0]
        versions += [(f"'t{step}'", list(columns), step + 1), (str(snap), list(columns), step + 1)]
    spark.sql(f"CREATE BLOOM INDEX ice_map ON {table} FOR COLUMNS ({', '.join(columns)})")
    versions.append((None, list(columns), STEPS))
    prefixes = sorted(set(births.values()) | {"a", "b", "c", "x", "n1_"})
    stats = {"queries": 0, "v_lookups": 0}
    while stats["queries"] < N_QUERIES:
        version, cols, files = rng.choice(versions)
        col = rng.choice(cols)
        # ids j * 10 + s with s < STEPS are held (by the file of step s), the others are not.
        ids = [rng.randrange(ROWS) * 10 + rng.randrange(STEPS + 2) for _ in range(rng.randint(1, 3))]
        vals = [str(i) for i in ids] if col == "v" else [f"'{rng.choice(prefixes)}{i}'" for i in ids]
        where = f"{col} = {vals[0]}" if len(vals) == 1 else f"{col} IN ({', '.join(vals)})"
        at = f" VERSION AS OF {version}" if version else ""
        q = f"SELECT * FROM {table}{at} WHERE {where}"
        case = f"seed {SEED}, history {history}: {q}"
        if version and rng.random() < 0.3:
            # The DataFrame reader's time travel option.
            df = lambda: spark.read.option("versionAsOf", version.strip("'")).table(table).where(where)  # noqa: E731
            on = sorted(map(tuple, df().collect()), key=repr)
            spark.conf.set("spark.bloomindex.pruning.enabled", "false")
            try:
                off = sorted(map(tuple, df().collect()), key=repr)
            finally:
                spark.conf.unset("spark.bloomindex.pruning.enabled")
            assert on == off, f"{case} (option versionAsOf): on {on}, off {off}"
        else:
            try:
                _same(spark, q)
            except AssertionError as e:
                raise AssertionError(case) from e
        stats["queries"] += 1
        # v keeps its field id in every version: a held value of a version with two files or
        # more is in one of them, and the index skips the others.
        if col == "v" and files >= 2 and ids[0] % 10 < files:
            q1 = f"SELECT * FROM {table}{at} WHERE v = {ids[0]}"
            kept = _kept(spark, q1)
            assert kept is not None and kept[0] == 1 < kept[1], f"seed {SEED}, history {history}: {q1} kept {kept}"
            stats["v_lookups"] += 1
    assert stats["v_lookups"] > 0, f"seed {SEED}: no lookup of v among {N_QUERIES} queries"


def test_a_column_with_an_initial_default_is_refused(spark, root, table):
    # Iceberg v3: a column added with a default reads as that default from the files written
    # before it was added (they hold no such column); a build reading by field id would hold
    # nulls for them, and a lookup of the default would skip every such file.
    spark.sql(f"CREATE TABLE {table} (id BIGINT) USING iceberg TBLPROPERTIES ('format-version' = '3')")
    spark.sql(f"INSERT INTO {table} SELECT id FROM range(10)")
    jvm = spark._jvm
    t = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, table)
    t.updateSchema().addColumn("x", jvm.org.apache.iceberg.types.Types.IntegerType.get(),
                               jvm.org.apache.iceberg.expressions.Literal.of(5)).commit()
    spark.sql(f"REFRESH TABLE {table}")
    spark.sql(f"INSERT INTO {table} VALUES (100, 7)")
    with pytest.raises(Exception, match="BLOOM_INDEX_ICEBERG_INITIAL_DEFAULT"):
        spark.sql(f"CREATE BLOOM INDEX dflt_x ON {table} FOR COLUMNS (x)")
    spark.sql(f"CREATE BLOOM INDEX dflt_id ON {table} FOR COLUMNS (id)")
    assert [r[0] for r in _same(spark, f"SELECT id FROM {table} WHERE x = 5")] == list(range(10))
    assert _same(spark, f"SELECT id, x FROM {table} WHERE id = 100") == [(100, 7)]
    assert _same(spark, f"SELECT id, x FROM {table} WHERE id = 3") == [(3, 5)]
