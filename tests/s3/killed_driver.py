"""A second driver for tests/s3's kill test: a `local[1]` session with the S3A settings of the
tests, which runs one statement on an index root on s3a:// and is killed (SIGKILL, with its JVM)
while the statement runs.

Usage: python killed_driver.py ENDPOINT ROOT TASK_DELAY_MS STATEMENT
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bloomindex  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from s3_helpers import TEST_JAR, s3_jars, s3a_conf  # noqa: E402


def main() -> None:
    endpoint, root, delay, statement = sys.argv[1:5]
    builder = (SparkSession.builder.master("local[1]").appName("bloomindex-s3-killed-driver")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "1")
               .config("spark.driver.extraClassPath", os.pathsep.join([str(TEST_JAR)] + s3_jars()))
               .config("spark.driver.memory", "768m")
               .config("spark.bloomindex.root", root)
               # One build task per source file, run one after the other (local[1]): the first
               # tasks' data is written while the later ones still sleep.
               .config("spark.sql.files.openCostInBytes", str(128 * 1024 * 1024))
               .config("spark.internal.bloomindex.test.buildTaskDelayMs", delay))
    for k, v in s3a_conf(endpoint).items():
        builder = builder.config(f"spark.hadoop.{k}", v)
    spark = bloomindex.configure(builder).getOrCreate()
    spark.sql(statement).collect()
    # Not reached when the test kills it in time.
    print("finished", flush=True)


if __name__ == "__main__":
    main()
