"""The Spark session every benchmark uses: local[2], quiet, indexes under bench/out."""

from __future__ import annotations

import os

from pyspark.sql import SparkSession

import bloomindex


def bench_session(app: str, out: str, kernel: str | None = None) -> SparkSession:
    spark = (bloomindex.configure(SparkSession.builder.master("local[2]").appName(app), kernel=kernel)
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "8g").config("spark.sql.shuffle.partitions", "8")
             .config("spark.bloomindex.root", os.path.join(out, "indexes"))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark
