"""Issue 31: the workload history records Iceberg scans (files listed and read, the index that
answered), with no literal value in what it stores."""

from __future__ import annotations

import glob
import os

from bloomindex import BloomIndex
from test_iceberg import FILES, _create_table, _fill, _key


def test_history_records_iceberg_scans(spark, root, table):
    plain = table + "_plain"
    _create_table(spark, plain)
    _fill(spark, plain, files=2)
    _create_table(spark, table)
    _fill(spark, table)
    spark.sql(f"CREATE BLOOM INDEX hist_ice ON {table} FOR COLUMNS (k)")
    assert [r.id for r in spark.sql(f"SELECT id FROM {table} WHERE k = '{_key(777)}'").collect()] == [777]
    spark.sql(f"SELECT id FROM {table} WHERE k IN ('{_key(3)}', 'absent-literal-9x')").collect()
    # A table with no index is recorded too; its files as Iceberg's scan reports them, if it planned them.
    spark.sql(f"SELECT id FROM {plain} WHERE v = 3").collect()
    spark.sql(f"DROP TABLE {plain}")
    rows = [r.asDict(recursive=True) for r in BloomIndex(spark).history().collect()]
    assert len(rows) == 3, rows
    other = rows.pop()
    assert (other["provider"], other["index_name"], other["pruned"]) == ("iceberg", None, False)
    assert [(p["column"], p["op"]) for p in other["predicates"]] == [("v", "=")]
    assert other["files_listed"] in (None, 2) and other["files_read"] == other["files_listed"]
    for r in rows:
        assert (r["provider"], r["format"], r["index_name"]) == ("iceberg", "iceberg", "hist_ice")
        assert 1 < r["files_listed"] <= FILES and r["files_read"] == 1 and r["pruned"]
        assert r["wall_time_ms"] is not None
    assert [(p["column"], p["op"], p["values"]) for p in rows[1]["predicates"]] == [("k", "IN", 2)]
    stored = "".join(open(f).read() for f in glob.glob(os.path.join(root, "_history", "*")))
    assert _key(777) not in stored and "absent-literal-9x" not in stored
