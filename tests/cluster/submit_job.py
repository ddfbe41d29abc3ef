"""A small bloomindex job for `spark-submit`, with nothing but Spark's own confs (no
`bloomindex.configure()`): the test in test_spark_submit.py passes `--jars`,
`spark.sql.extensions` and the Vector API flag by hand, as the README shows.

Usage: spark-submit ... submit_job.py <work dir>. Prints one line `RESULT <json>`.
"""

import json
import os
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main(work: str) -> None:
    spark = (SparkSession.builder.appName("bloomindex-submit-job")
             .config("spark.sql.warehouse.dir", os.path.join(work, "warehouse"))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    data = os.path.join(work, "events")
    (spark.range(0, 4000, 1, 8)
     .select("id", F.concat(F.lit("user"), (F.col("id") % 500).cast("string")).alias("user"))
     .write.parquet(data))

    spark.sql(f"CREATE BLOOM INDEX events_id ON parquet.`{data}` FOR COLUMNS (id, user)")
    q = f"SELECT * FROM parquet.`{data}` WHERE id IN (7, 3500)"
    on = sorted(tuple(r) for r in spark.sql(q).collect())
    files_read = len(spark.sql(q).inputFiles())
    spark.conf.set("spark.bloomindex.pruning.enabled", "false")
    off = sorted(tuple(r) for r in spark.sql(q).collect())
    files_total = len(spark.sql(q).inputFiles())
    spark.conf.unset("spark.bloomindex.pruning.enabled")

    # The kernels of the driver and of the JVMs that ran tasks, through the jar's Python facade.
    loader = spark.sparkContext._jvm.Thread.currentThread().getContextClassLoader()
    api = loader.loadClass("bloomindex.api.PythonApi$").getField("MODULE$").get(None)
    tasks = [str(line).split("\t") for line in api.taskKernels(spark._jsparkSession, 4)]
    result = {
        "rows_on": on, "rows_off": off, "files_read": files_read, "files_total": files_total,
        "indexes": [r.name for r in spark.sql("SHOW BLOOM INDEXES").collect()],
        "driver_kernel": str(api.defaultKernel()),
        # The driver JVM's own word on the CPU's vectors (the executors run on the same one).
        "vector_bits": int(spark.sparkContext._jvm.jdk.incubator.vector.IntVector.SPECIES_PREFERRED.vectorBitSize()),
        "driver_pid": spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid(),
        "tasks": [{"executor": e, "pid": int(p), "sbbf": k} for e, p, k, _ in tasks],
        "master": spark.sparkContext.master,
    }
    print("RESULT " + json.dumps(result), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
