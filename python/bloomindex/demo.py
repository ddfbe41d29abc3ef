"""`make demo` / `python -m bloomindex.demo`: the project's main job on a local Spark session.

Writes a sample Parquet table with Spark, asking parquet-java for Bloom filters on two
columns; then, for every file, builds the same filters with bloomindex on the JVM (through
the session) and in Python, and shows they match the file's own bit for bit.
"""

from __future__ import annotations

import glob
import os
import sys
import tempfile
import time


def main(argv: list[str] | None = None) -> int:
    from pyspark.sql import SparkSession, functions as F

    import bloomindex
    from bloomindex.parquet import read_bloom_filter
    from bloomindex.session import jvm_api

    spark = (bloomindex.configure(SparkSession.builder.master("local[2]").appName("bloomindex-demo"))
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    api = jvm_api(spark)
    print(f"bloomindex {bloomindex.__version__} on Spark {spark.version}; "
          f"JVM filter kernel: {api.defaultKernel()}")

    with tempfile.TemporaryDirectory(prefix="bloomindex-demo-") as tmp:
        table = os.path.join(tmp, "orders")
        rows, files = 200_000, 8
        t0 = time.perf_counter()
        orders = (spark.range(rows)
                  .select((F.col("id") * 7919 % 1_000_003).alias("user_id"),
                          F.concat(F.lit("user"), (F.col("id") % 50_000).cast("string"),
                                   F.lit("@example.com")).alias("email"),
                          (F.col("id") % 997 / 10).cast("decimal(9,1)").alias("amount"))
                  .repartition(files))
        (orders.write.mode("overwrite")
         .option("parquet.bloom.filter.enabled#user_id", "true")
         .option("parquet.bloom.filter.expected.ndv#user_id", str(rows // files))
         .option("parquet.bloom.filter.enabled#email", "true")
         .option("parquet.bloom.filter.expected.ndv#email", str(rows // files))
         # parquet-java drops a chunk's filter when every page is dictionary-encoded.
         .option("parquet.enable.dictionary", "false")
         .parquet(table))
        print(f"wrote {rows:,} rows in {files} files with parquet-java's Bloom filters "
              f"in {time.perf_counter() - t0:.1f}s\n")

        print(f"{'file':<12} {'column':<8} {'bytes':>7} {'JVM == file':>12} {'Python == file':>15}")
        all_match = True
        for path in sorted(glob.glob(os.path.join(table, "*.parquet"))):
            df = spark.read.parquet(path)
            for column, type_name in (("user_id", "bigint"), ("email", "string")):
                theirs = read_bloom_filter(path, column)
                jvm = bytes(api.buildFilter(df._jdf, column, theirs.num_bytes, api.defaultKernel()))
                ours = bloomindex.Sbbf(theirs.num_bytes)
                ours.insert([r[0] for r in df.select(column).collect()], type_name)
                jvm_ok, py_ok = jvm == theirs.to_bytes(), ours == theirs
                all_match &= jvm_ok and py_ok
                print(f"{os.path.basename(path)[:10]:<12} {column:<8} {theirs.num_bytes:>7} "
                      f"{str(jvm_ok):>12} {str(py_ok):>15}")
        print("\nall filters match the files' own, bit for bit" if all_match else "\nMISMATCH")
    spark.stop()
    return 0 if all_match else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
