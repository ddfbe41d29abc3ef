"""Issue 30: a Bloom index over a table Iceberg's `migrate` procedure turned into an Iceberg table.

`migrate` replaces a Spark Parquet table by an Iceberg table over the same files, in place. Those
files were written by plain Spark, without Parquet field ids; Iceberg reads them through the
table's name mapping (`schema.name-mapping.default`), and so must the index build.

`migrate` needs Iceberg's SparkSessionCatalog as `spark_catalog` over a Hive metastore, which the
main Iceberg test session (conftest.py) does not have: the test runs its own SparkSession in a
child process (one more JVM) with a Hive-enabled session over a local Derby metastore in a
temporary folder. The child prints what it saw as JSON; the assertions are made here."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pyarrow.parquet as pq

FILES = 6          # data files of the Parquet table, one per write task
PER_FILE = 200     # rows per file
MARKER = "BLOOMINDEX-MIGRATE-RESULT "

# The child: a Hive-enabled session whose spark_catalog is Iceberg's SparkSessionCatalog, a Parquet
# table of FILES files with hashed keys (Iceberg's min/max metrics isolate no key), `migrate`, an
# index, queries with pruning on and off, an append and REFRESH. argv[1]: a temporary folder.
CHILD = r'''
import glob, json, os, re, sys, traceback
from pyspark.sql import SparkSession
import bloomindex
from bloomindex import BloomIndex

tmp, files, per_file, marker = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
builder = (SparkSession.builder.master("local[2]")
           .appName("bloomindex-iceberg-migrate-test")
           .config("spark.ui.enabled", "false")
           .config("spark.sql.shuffle.partitions", "2")
           .config("spark.default.parallelism", "2")
           .config("spark.sql.session.timeZone", "UTC")
           .config("spark.sql.catalogImplementation", "hive")
           .config("spark.sql.warehouse.dir", os.path.join(tmp, "warehouse"))
           .config("spark.hadoop.javax.jdo.option.ConnectionURL",
                   f"jdbc:derby:;databaseName={os.path.join(tmp, 'metastore_db')};create=true")
           .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={tmp}")
           .config("spark.sql.catalog.spark_catalog", "org.apache.iceberg.spark.SparkSessionCatalog")
           .config("spark.sql.catalog.spark_catalog.type", "hive")
           # Iceberg's Hive commits take a metastore lock by default, through the metastore's
           # transaction tables (HIVE_LOCKS, NEXT_LOCK_ID), which an embedded Derby metastore
           # does not create (and whose default BoneCP pool Spark does not ship): migrate fails
           # at its commit. Without the lock Iceberg commits by a conditional alter_table.
           .config("spark.hadoop.iceberg.engine.hive.lock-enabled", "false")
           .config("spark.bloomindex.refresh.default", "manual")
           .config("spark.bloomindex.root", os.path.join(tmp, "indexes")))
spark = bloomindex.configure(builder, iceberg=True).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
out = {}
T = "default.src"


def key(i):
    return f"key-{i * 7919 % 100003}"


def rows(sql):
    return sorted((list(r) for r in spark.sql(sql).collect()), key=repr)


def same(sql):
    """Rows with pruning on and off."""
    on = rows(sql)
    spark.conf.set("spark.bloomindex.pruning.enabled", "false")
    try:
        off = rows(sql)
    finally:
        spark.conf.unset("spark.bloomindex.pruning.enabled")
    return {"on": on, "off": off}


def kept(sql):
    report = BloomIndex(spark).explain(spark.sql(sql))
    m = re.search(r"index ix \(log version \d+\) kept (\d+)/(\d+) files", report)
    return {"kept": [int(m.group(1)), int(m.group(2))] if m else None, "report": report}


def plan(sql):
    return spark.sql(sql)._jdf.queryExecution().executedPlan().toString()


def last_entry():
    return json.load(open(sorted(glob.glob(os.path.join(tmp, "indexes", "ix", "_log", "*.json")))[-1]))


def data_files():
    return sorted(r[0] for r in spark.sql(f"SELECT file_path FROM {T}.files WHERE content = 0").collect())


def queries(qs):
    return {q: {**same(q), **kept(q)} for q in qs}


try:
    src = os.path.join(tmp, "src")
    (spark.range(0, files * per_file, numPartitions=files)
     .selectExpr("id", "concat('key-', cast(id * 7919 % 100003 as string)) AS k", "cast(id % 13 AS int) AS v")
     .write.parquet(src))
    out["source_files"] = sorted("file:" + p for p in glob.glob(os.path.join(src, "*.parquet")))
    spark.sql(f"CREATE TABLE {T} (id BIGINT, k STRING, v INT) USING parquet LOCATION '{src}'")
    out["provider_before"] = spark.sql(f"DESCRIBE TABLE EXTENDED {T}").where("col_name = 'Provider'").head()[1]

    out["migrate"] = [r.asDict() for r in spark.sql(f"CALL spark_catalog.system.migrate(table => '{T}')").collect()]
    out["props"] = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {T}").collect()}
    out["files_migrated"] = data_files()

    spark.sql(f"CREATE BLOOM INDEX ix ON {T} FOR COLUMNS (k, id)")
    out["entry_create"] = last_entry()
    out["snapshot"] = spark.sql(f"SELECT snapshot_id FROM {T}.snapshots ORDER BY committed_at DESC LIMIT 1").head()[0]
    point = f"SELECT id, k, v FROM {T} WHERE k = '{key(777)}'"
    out["point"] = point
    out["created"] = queries([
        point,
        f"SELECT id, k, v FROM {T} WHERE k = '{key(250)}'",
        f"SELECT id, k, v FROM {T} WHERE k = '{key(1100)}'",
        f"SELECT id FROM {T} WHERE id = 555",
        f"SELECT id FROM {T} WHERE k IN ('{key(3)}', '{key(650)}', 'absent')",
        f"SELECT id FROM {T} WHERE k = 'absent'",
        f"SELECT count(*), sum(v) FROM {T} WHERE v = 3",
        f"SELECT count(*), sum(v) FROM spark_catalog.{T} WHERE k = '{key(431)}' OR k = '{key(432)}'",
    ])
    out["plan"] = plan(point)

    # An append through Iceberg (a file with field ids), read unpruned until REFRESH indexes it.
    new_lo = files * per_file
    (spark.range(new_lo, new_lo + per_file, numPartitions=1)
     .selectExpr("id", "concat('key-', cast(id * 7919 % 100003 as string)) AS k", "cast(id % 13 AS int) AS v")
     .writeTo(f"spark_catalog.{T}").append())
    new_point = f"SELECT id, k, v FROM {T} WHERE k = '{key(new_lo + 17)}'"
    out["new_point"] = new_point
    out["stale"] = queries([point, new_point])
    spark.sql("REFRESH BLOOM INDEX ix")
    out["entry_refresh"] = last_entry()
    out["snapshot_refresh"] = spark.sql(
        f"SELECT snapshot_id FROM {T}.snapshots ORDER BY committed_at DESC LIMIT 1").head()[0]
    out["files_refresh"] = data_files()
    out["refreshed"] = queries([point, new_point, f"SELECT count(*) FROM {T}"])
except Exception:
    out["error"] = traceback.format_exc()
finally:
    print(marker + json.dumps(out), flush=True)
    spark.stop()
'''


def _key(i: int) -> str:
    return f"key-{i * 7919 % 100003}"


def _run_child(tmp_path) -> tuple[dict, float]:
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), str(FILES), str(PER_FILE), MARKER],
                       cwd=tmp_path, capture_output=True, text=True, timeout=900)
    elapsed = time.monotonic() - start
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith(MARKER)]
    tail = "\n".join(p.stderr.splitlines()[-40:])
    assert lines, f"the child session printed no result (exit {p.returncode}); stderr ends:\n{tail}"
    out = json.loads(lines[-1][len(MARKER):])
    assert "error" not in out, f"the child session failed:\n{out['error']}\nstderr ends:\n{tail}"
    assert p.returncode == 0, f"the child session exited with {p.returncode}; stderr ends:\n{tail}"
    return out, elapsed


def _has_field_ids(path: str) -> bool:
    schema = pq.read_schema(path.removeprefix("file:"))
    return any(f.metadata and b"PARQUET:field_id" in f.metadata for f in schema)


def _check_same(results: dict, stage: str) -> None:
    for q, r in results.items():
        assert r["off"] == r["on"], f"{stage}: {q}: pruning on {r['on']}, pruning off {r['off']}"


def test_index_over_migrated_table(tmp_path):
    out, elapsed = _run_child(tmp_path)
    print(f"child session: {elapsed:.0f} s")

    # migrate turned the Parquet table into an Iceberg table over the same files, in place; those
    # files have no field ids, so Iceberg reads them by the name mapping migrate wrote.
    assert out["provider_before"] == "parquet"
    assert out["migrate"] == [{"migrated_files_count": FILES}], out["migrate"]
    props = out["props"]
    assert props.get("migrated") == "true" and props.get("format", "").startswith("iceberg/"), props
    assert props.get("schema.name-mapping.default", "").startswith("["), props
    assert out["files_migrated"] == out["source_files"] and len(out["source_files"]) == FILES, \
        (out["files_migrated"], out["source_files"])
    assert not any(_has_field_ids(f) for f in out["source_files"]), "Spark wrote Parquet field ids"

    # The build read every migrated file (by the mapping) at the migrated snapshot.
    entry = out["entry_create"]
    assert entry["state"] == "ACTIVE" and entry["spec"]["source"]["format"] == "iceberg", entry
    assert entry["data"]["indexedFiles"] == FILES, entry["data"]
    assert entry["data"]["tableVersion"] == out["snapshot"], (entry["data"], out["snapshot"])

    # Every query answers as without the index, and a point lookup keeps 1 of the 6 files.
    created = out["created"]
    _check_same(created, "after CREATE")
    point = out["point"]
    assert [r[0] for r in created[point]["on"]] == [777], created[point]
    assert created[point]["kept"] == [1, FILES], created[point]["report"]
    assert f"files kept 1 of {FILES}" in out["plan"] and "BloomIndexPruned [index=ix" in out["plan"], out["plan"]
    expected = {
        f"SELECT id, k, v FROM default.src WHERE k = '{_key(250)}'": [250],
        f"SELECT id, k, v FROM default.src WHERE k = '{_key(1100)}'": [1100],
        "SELECT id FROM default.src WHERE id = 555": [555],
        f"SELECT id FROM default.src WHERE k IN ('{_key(3)}', '{_key(650)}', 'absent')": [3, 650],
        "SELECT id FROM default.src WHERE k = 'absent'": [],
    }
    for q, ids in expected.items():
        assert sorted(r[0] for r in created[q]["on"]) == ids, (q, created[q]["on"])
        assert created[q]["kept"] is not None and created[q]["kept"][0] == len(ids), (q, created[q]["report"])
    in_list = f"SELECT id FROM default.src WHERE k IN ('{_key(3)}', '{_key(650)}', 'absent')"
    assert created[in_list]["kept"] == [2, FILES], created[in_list]["report"]
    # Through the catalog's full name: the same index.
    both = f"SELECT count(*), sum(v) FROM spark_catalog.default.src WHERE k = '{_key(431)}' OR k = '{_key(432)}'"
    assert created[both]["on"] == [[2, 431 % 13 + 432 % 13]], created[both]
    assert created[both]["kept"] is not None and created[both]["kept"][0] == 1, created[both]["report"]

    # After an append (Iceberg writes a file with field ids) the new file is read until REFRESH.
    new_point = out["new_point"]
    stale = out["stale"]
    _check_same(stale, "after the append, before REFRESH")
    assert [r[0] for r in stale[new_point]["on"]] == [FILES * PER_FILE + 17], stale[new_point]
    assert stale[point]["kept"] == [2, FILES + 1], stale[point]["report"]  # its file and the new one

    entry = out["entry_refresh"]
    assert entry["operation"] == "REFRESH INCREMENTAL" and entry["state"] == "ACTIVE", entry
    assert entry["data"]["indexedFiles"] == FILES + 1 == len(out["files_refresh"]), entry["data"]
    assert entry["data"]["tableVersion"] == out["snapshot_refresh"], (entry["data"], out["snapshot_refresh"])
    [new_file] = sorted(set(out["files_refresh"]) - set(out["files_migrated"]))
    assert _has_field_ids(new_file), f"{new_file}: Iceberg's own file should carry field ids"

    refreshed = out["refreshed"]
    _check_same(refreshed, "after REFRESH")
    assert refreshed[point]["kept"] == [1, FILES + 1], refreshed[point]["report"]
    assert refreshed[new_point]["kept"] == [1, FILES + 1], refreshed[new_point]["report"]
    assert [r[0] for r in refreshed[new_point]["on"]] == [FILES * PER_FILE + 17], refreshed[new_point]
    assert refreshed["SELECT count(*) FROM default.src"]["on"] == [[(FILES + 1) * PER_FILE]]
