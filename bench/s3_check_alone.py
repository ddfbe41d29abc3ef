"""The check against storage on S3 alone: `FreshFiles.unchanged` over N listed files on a moto
server (no proxy, no delay), each page read by bloomindex's reader (S3ListPage) and by the AWS
SDK's, alternately, in one driver; wall time and CPU of the driver and of the server per call.

  .venv/bin/python bench/s3_check_alone.py        (BENCH_CHECK_FILES, default 100000; BENCH_CHECK_ROUNDS, default 4)

Needs the jars `make bench-s3-latency` stages (target/bloomindex-tests.jar, .tools/s3). The server
is the benches' (BLOOMINDEX_MOTO_SEED=1: the objects stored in bulk, listing pages kept once
answered), so from the second round on its CPU is small and the driver's is the figure.
"""

from __future__ import annotations

import os
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests"), str(ROOT / "tests" / "s3")]
os.environ["BLOOMINDEX_MOTO_SEED"] = "1"

import bench_s3_latency as lat  # noqa: E402
import s3_helpers  # noqa: E402

FILES = int(os.environ.get("BENCH_CHECK_FILES", "100000"))
ROUNDS = int(os.environ.get("BENCH_CHECK_ROUNDS", "4"))


def main() -> None:
    jars = sorted(str(p) for p in (ROOT / ".tools" / "s3").glob("*.jar"))
    if not jars or not lat.TEST_JAR.is_file():
        sys.exit("the S3 client jars or the test jar are missing: run `make bench-s3-latency` once")
    moto = s3_helpers.MotoServer(pathlib.Path(tempfile.mkdtemp(prefix="bench-s3-check-")))
    try:
        moto.client().create_bucket(Bucket=s3_helpers.BUCKET)
        moto.seed(s3_helpers.BUCKET, "check/table", [f"part-{i:07d}.parquet" for i in range(FILES)], lat.empty_parquet())
        spark = lat.session(jars, s3_helpers.s3a_conf(moto.endpoint), {}, f"s3a://{s3_helpers.BUCKET}/check/indexes")
        jvm = spark._jvm
        conf = spark._jsparkSession.sessionState().newHadoopConf()
        path = jvm.org.apache.hadoop.fs.Path(f"s3a://{s3_helpers.BUCKET}/check/table")
        files = jvm.scala.collection.immutable.ArraySeq.unsafeWrapArray(path.getFileSystem(conf).listStatus(path))
        pid = jvm.java.lang.ProcessHandle.current().pid()
        print(f"{FILES:,} files; load average {os.getloadavg()[0]:.1f}")
        print("| round | pages read by | wall s | driver CPU s | server CPU s | unchanged |\n|---|---|---|---|---|---|")
        for r in range(ROUNDS):
            for own in (True, False):
                c0, m0, t0 = lat.process_cpu_s(pid), lat.process_cpu_s(moto.proc.pid), time.perf_counter()
                bits = jvm.bloomindex.catalog.FreshFiles.unchanged(conf, files, 8, 64, 1000, own)
                print(f"| {r + 1} | {'bloomindex' if own else 'AWS SDK'} | {time.perf_counter() - t0:.2f} "
                      f"| {lat.process_cpu_s(pid) - c0:.2f} | {lat.process_cpu_s(moto.proc.pid) - m0:.2f} | {bits.cardinality():,} |",
                      flush=True)
        spark.stop()
    finally:
        moto.stop()


if __name__ == "__main__":
    main()
