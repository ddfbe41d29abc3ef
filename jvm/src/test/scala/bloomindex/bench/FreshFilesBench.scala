package bloomindex.bench

import scala.collection.mutable

import bloomindex.catalog.FreshFiles

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.SparkSession

/**
 * What checking the files a query would skip against storage costs (bench/bench_fresh.py): the
 * files under `root` are listed once (as a scan's file index would have), then
 * [[FreshFiles.unchanged]] is timed on all of them (`threads` for local files, `requests` S3
 * listings at once): the first call on this JVM, then the median of `repeats` more. Returns JSON.
 */
object FreshFilesBench {

  def run(spark: SparkSession, root: String, threads: Int, requests: Int, repeats: Int): String = {
    val conf = spark.sessionState.newHadoopConf()
    val p = new Path(root)
    val fs = p.getFileSystem(conf)
    // Locally listStatus, as Spark's file index lists (listFiles' located statuses read each
    // local file's permissions with a process each); on an object store one flat listing (a
    // listing per folder there is one request per folder: 100,000 of them for the partitioned
    // layout, which is the setup's cost, not the check's).
    val files = mutable.ArrayBuffer[FileStatus]()
    def visible(f: FileStatus) = { val n = f.getPath.getName; !n.startsWith(".") && !n.startsWith("_") }
    if (fs.getScheme == "file") {
      val dirs = mutable.Stack(p)
      while (dirs.nonEmpty) {
        fs.listStatus(dirs.pop()).foreach { f =>
          if (f.isDirectory) dirs.push(f.getPath) else if (visible(f)) files += f
        }
      }
    } else {
      val it = fs.listFiles(p, true)
      while (it.hasNext) { val f = it.next(); if (visible(f)) files += f }
    }
    val folders = files.map(_.getPath.getParent).distinct.size
    def once(): Double = {
      val t0 = System.nanoTime()
      val kept = FreshFiles.unchanged(conf, files.toIndexedSeq, threads, requests).cardinality()
      val ms = (System.nanoTime() - t0) / 1e6
      require(kept == files.size, s"${files.size - kept} files reported changed")
      ms
    }
    val first = once()
    val rest = (1 to repeats).map(_ => once())
    f"""{"files": ${files.size}, "folders": $folders, "threads": $threads, "requests": $requests, "first_ms": $first%.1f, "median_ms": ${Timing.median(rest)}%.1f}"""
  }
}
