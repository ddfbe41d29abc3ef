"""Run by tests/spark_versions/test_spark_version.py in a Spark version's venv: `build ROOT`
writes a Parquet folder of UNICODE_CI strings (one file each) and indexes it; `query ROOT` runs
point lookups with the index on and off and prints one `RESULT` line per lookup (JSON); both
print the ICU version of the running Spark."""

import json
import sys

from pyspark.sql import SparkSession

import bloomindex

VALUES = ["a#1", "zzz", "x@y.com", "qqq", "50%", "plain"]
LOOKUPS = ["'A#1'", "'X@Y.COM'", "'50%'", "'PLAIN'", "'absent'"]

mode, root = sys.argv[1], sys.argv[2]
spark = (bloomindex.configure(SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
                              .config("spark.sql.shuffle.partitions", "2"))
         .config("spark.bloomindex.root", root + "/indexes").config("spark.bloomindex.fpp.default", "0.001")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
print("ICU", spark._jvm.com.ibm.icu.util.VersionInfo.ICU_VERSION.toString(), flush=True)
table = f"parquet.`{root}/t`"
if mode == "build":
    for i, v in enumerate(VALUES):
        spark.sql(f"SELECT '{v}' COLLATE UNICODE_CI AS s, {i} AS id").write.mode("append").parquet(root + "/t")
    spark.sql(f"CREATE BLOOM INDEX coll_ix ON {table} FOR COLUMNS (s)")
else:
    for lit in LOOKUPS:
        q = f"SELECT id FROM {table} WHERE s = {lit}"
        answers = {}
        for on in ("true", "false"):
            spark.conf.set("spark.bloomindex.pruning.enabled", on)
            answers[on] = sorted(r.id for r in spark.sql(q).collect())
        spark.conf.set("spark.bloomindex.pruning.enabled", "true")
        report = bloomindex.BloomIndex(spark).explain(spark.sql(q))
        print("RESULT " + json.dumps({"lookup": lit, "on": answers["true"], "off": answers["false"],
                                      "report": str(report)}), flush=True)
spark.stop()
