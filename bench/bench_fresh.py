"""`make bench-fresh`: what checking the files a query would skip against storage costs (issue 30).

A scan of plain files is pruned only after the files to skip are found unchanged on storage
(`bloomindex.catalog.FreshFiles`: one listing per folder, or one status per file where a folder
holds at most two of them). This times that check alone, on every file of a folder tree (the
worst case: a point lookup that skips every file), in two layouts:
  flat          N files in one folder (a table without partitions): one listing
  partitioned   N folders of one file (a table partitioned to the file): one status per file
at N = 1,000 and 100,000 on local disk, and on S3 against a moto server on 127.0.0.1 through
S3A (when `make test-s3` has copied the S3 client jars into .tools/s3; BENCH_FRESH_S3=0 skips
it). Each figure: the first check in a new JVM and the median of 5 more. On S3 the check lists
in runs of 1,000 keys, 64 at once (S3Listing); moto runs in the benches' mode
(`BLOOMINDEX_MOTO_SEED=1`, tests/s3/moto_server.py): objects stored in bulk, and ListObjectsV2
answered at the cost S3's is (1,000 keys a page, moto's own answer kept sorted).

BENCH_FRESH_SIZES (default 1000,100000) and BENCH_FRESH_S3_SIZES (default 1000,100000) choose N;
BENCH_FRESH_S3_LAYOUTS (default flat,partitioned) the layouts on S3.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "s3"))

OUT = ROOT / "bench" / "out"
SIZES = [int(x) for x in os.environ.get("BENCH_FRESH_SIZES", "1000,100000").split(",") if x]
S3_SIZES = [int(x) for x in os.environ.get("BENCH_FRESH_S3_SIZES", "1000,100000").split(",") if x]
S3 = os.environ.get("BENCH_FRESH_S3", "1") != "0"
S3_LAYOUTS = [k for k in os.environ.get("BENCH_FRESH_S3_LAYOUTS", "flat,partitioned").split(",") if k]
TEST_JAR = ROOT / "target" / "bloomindex-tests.jar"
THREADS = 8
REQUESTS = 64  # spark.bloomindex.load.requests' default


def layout(n: int, kind: str) -> list[str]:
    if kind == "flat":
        return [f"part-{i:06d}.parquet" for i in range(n)]
    return [f"p={i:06d}/part-0.parquet" for i in range(n)]


def local_tree(n: int, kind: str) -> str:
    path = OUT / f"fresh_{kind}_{n}"
    if not (path / "_done").exists():
        shutil.rmtree(path, ignore_errors=True)
        for name in layout(n, kind):
            f = path / name
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(b"x" * 64)
        (path / "_done").write_text("")
    return str(path)


def s3_tree(server, bucket: str, n: int, kind: str) -> str:
    """The layout's objects stored straight into moto's backend (MotoServer.seed)."""
    prefix = f"fresh_{kind}_{n}"
    server.seed(bucket, prefix, layout(n, kind), b"x" * 64)
    return f"s3a://{bucket}/{prefix}"


def session(extra_jars: list[str], hadoop: dict[str, str]):
    import bloomindex
    from pyspark.sql import SparkSession

    b = (SparkSession.builder.master("local[2]").appName("bench-fresh")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         # The bench class calls bloomindex's: both on the driver's own class path.
         .config("spark.driver.extraClassPath", os.pathsep.join(
             [str(TEST_JAR)] + [str(j) for j in bloomindex.jar_paths()] + extra_jars)))
    for k, v in hadoop.items():
        b = b.config(f"spark.hadoop.{k}", v)
    spark = bloomindex.configure(b).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def measure(store: str, root: str, kind: str, extra_jars: list[str], hadoop: dict[str, str]) -> dict:
    """One figure, from a new Python process and JVM (the first check is a cold one)."""
    import subprocess

    code = ("import json, sys; sys.path[:0] = %r; import bench_fresh as b; "
            "s = b.session(%r, %r); "
            "print('RESULT ' + s._jvm.bloomindex.bench.FreshFilesBench.run(s._jsparkSession, %r, %d, %d, 5))"
            % ([str(ROOT / "bench")], extra_jars, hadoop, root, THREADS, REQUESTS))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    r = json.loads(next(ln for ln in out.splitlines() if ln.startswith("RESULT "))[7:])
    r.update(store=store, layout=kind)
    return r


def main() -> None:
    if not TEST_JAR.is_file():
        sys.exit(f"{TEST_JAR} is missing: `make bench-fresh` stages it")
    results = []
    for n in SIZES:
        for kind in ("flat", "partitioned"):
            results.append(measure("local", local_tree(n, kind), kind, [], {}))
            print(json.dumps(results[-1]), flush=True)
    if S3:
        import s3_helpers
        jars = sorted(str(p) for p in (ROOT / ".tools" / "s3").glob("*.jar"))
        if not jars:
            sys.exit("no S3 client jars in .tools/s3: `make bench-fresh` copies them")
        tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-fresh-moto-"))
        os.environ["BLOOMINDEX_MOTO_SEED"] = "1"  # bulk setup, S3-like listing (moto_server.py)
        server = s3_helpers.MotoServer(tmp)
        try:
            server.client().create_bucket(Bucket=s3_helpers.BUCKET)
            for n in S3_SIZES:
                for kind in S3_LAYOUTS:
                    root = s3_tree(server, s3_helpers.BUCKET, n, kind)
                    results.append(measure("s3 (moto)", root, kind, jars, s3_helpers.s3a_conf(server.endpoint)))
                    print(json.dumps(results[-1]), flush=True)
        finally:
            server.stop()
    (OUT / "bench_fresh.json").write_text(json.dumps(results, indent=1))
    print("\n| store | layout | files | folders | first check (ms) | median (ms) |\n|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['store']} | {r['layout']} | {r['files']:,} | {r['folders']:,} | {r['first_ms']:.0f} | {r['median_ms']:.0f} |")


if __name__ == "__main__":
    main()
