"""The Python BloomIndex API: the same JVM code as SQL, PySpark's exceptions on errors."""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException

from bloomindex import BloomIndex
from index_helpers import assert_filters_hold_values, log_entries




@pytest.fixture()
def bi(spark):
    return BloomIndex(spark, progress=False)


def test_create_on_table_path_and_dataframe(spark, root, bi, tmp_path):
    spark.sql("DROP TABLE IF EXISTS api_t")
    spark.range(500).selectExpr("id", "cast(id * 3 as string) as s").repartition(3).write.saveAsTable("api_t")
    path = str(tmp_path / "api_p")
    spark.table("api_t").write.parquet(path)

    assert bi.create("by_table", "api_t", ["id", "s"], fpp=0.02, global_filter=True)
    assert bi.create("by_path", path, {"s": {"fpp": 0.1}}, source_format="parquet")
    assert bi.create("by_df", spark.read.parquet(path), ["id"], ndv=1000, sizing="power-of-two")
    assert not bi.create("by_df", spark.read.parquet(path), ["id"], if_not_exists=True)

    listed = {r.name: r for r in bi.list().collect()}
    assert set(listed) == {"by_table", "by_path", "by_df"}
    d = bi.describe("by_table")
    assert d["column.id.fpp"] == "0.02" and d["global"] == "true" and d["files_indexed"] == "3"
    assert bi.describe("by_path")["column.s.fpp"] == "0.1"
    d = bi.describe("by_df")
    assert d["column.id.ndv"] == "1000" and d["column.id.sizing"] == "power-of-two"
    assert_filters_hold_values(spark, root, "by_table", spark.table("api_t"), {"id": "bigint", "s": "string"})

    spark.range(500, 600).selectExpr("id", "cast(id * 3 as string) as s").coalesce(1).write.mode("append").parquet(path)
    assert bi.describe("by_path")["files_new_or_changed"] == "1"
    version = bi.refresh("by_path")
    assert bi.describe("by_path")["log_version"] == str(version)
    assert bi.refresh("by_path", mode="full") == version + 2
    assert bi.drop("by_path") and not bi.drop("by_path", if_exists=True)
    assert log_entries(root, "by_path")[-1]["state"] == "DELETED"


def test_errors_are_pyspark_exceptions_with_the_jvm_message(spark, root, bi):
    spark.sql("DROP TABLE IF EXISTS api_e")
    spark.range(5).selectExpr("id", "id > 2 as b").write.saveAsTable("api_e")
    with pytest.raises(AnalysisException, match="Column 'zz' does not exist"):
        bi.create("e1", "api_e", ["zz"])
    with pytest.raises(AnalysisException, match="BOOLEAN cannot be indexed"):
        bi.create("e1", "api_e", ["b"])
    with pytest.raises(AnalysisException, match="Invalid fpp"):
        bi.create("e1", "api_e", ["id"], fpp=2)
    with pytest.raises(AnalysisException, match="Invalid Bloom index name"):
        bi.create("../escape", "api_e", ["id"])
    with pytest.raises(AnalysisException, match="Unknown option 'colour'"):
        bi.create("e1", "api_e", ["id"], colour="red")
    with pytest.raises(AnalysisException, match="does not exist"):
        bi.refresh("nope")
    with pytest.raises(AnalysisException, match="does not exist"):
        bi.describe("nope")
    with pytest.raises(ValueError, match="mode"):
        bi.refresh("nope", mode="partial")
    with pytest.raises(ValueError, match="columns"):
        bi.create("e1", "api_e", [])
    with pytest.raises(ValueError, match="source"):
        bi.create("e1", 42, ["id"])
    assert bi.list().count() == 0
