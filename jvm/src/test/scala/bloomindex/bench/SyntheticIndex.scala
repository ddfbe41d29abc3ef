package bloomindex.bench

import scala.collection.mutable

import bloomindex.config.BloomIndexConf
import bloomindex.filter.FilterAlgorithm
import bloomindex.layout.{IndexFiles, IndexSummary, ProbeFile, ReusedProbes}
import bloomindex.log.IndexLog
import bloomindex.sbbf.SbbfSizing
import bloomindex.source.SourceResolver

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.SparkSession

/**
 * A harness of the large-scale benches (bench/bench_s3_latency.py, bench/bench_scale.py at
 * 1,000,000 files, issue 26): the index entries of many source files without building them
 * from the data, written through the index's own writers.
 *
 * The index `name` is first created by CREATE BLOOM INDEX over `source` while it holds only a
 * few real files (the sample: a real log entry, decoding context, probe files and summary). Then
 * the source gets its other files, `part-<n>.parquet` each (the bench writes them: empty Parquet
 * files, no row), and [[extend]] adds an entry for each file under `source` the active version
 * does not hold: its path, size and modification time as a listing of `source` gives them (as
 * the scan will see them), and a split block filter (fpp 0.01, exact sizing, as the build sizes
 * it) of the `rowsPerFile` bigint keys `n * rowsPerFile until (n + 1) * rowsPerFile` of column
 * `column` (the files hold no row: a filter that says "maybe" for values a file lacks loses no
 * row). The entries go into `probeFiles` new probe files in the column's folder of the active
 * version (written by [[ProbeFile.Writer]], block-major as a build task writes them; the caller
 * picks the count a build of these rows writes: one per `spark.bloomindex.optimize.targetFileBytes`
 * of the column's rows since 2026-12-01, one per task before), and the
 * summary is written again by [[IndexSummary.write]] (the CREATE's own probe files and the new
 * ones, with the rows' counts). The log entry is left as CREATE wrote it (its `indexedFiles`
 * counts the sample's files only; nothing that prunes reads it but a warning when fewer files
 * load than it says).
 *
 * Returns JSON: files added, probe files written, their bytes, seconds.
 */
object SyntheticIndex {

  def extend(spark: SparkSession, name: String, source: String, column: String, probeFiles: Int,
      rowsPerFile: Int): String = {
    val t0 = System.nanoTime()
    val conf = spark.sessionState.newHadoopConf()
    val indexDir = new Path(BloomIndexConf.root(spark), name)
    val entry = new IndexLog(indexDir, conf).lastActive().getOrElse(sys.error(s"index $name has no active version"))
    val data = entry.data.get
    require(data.layout == "probes", s"layout ${data.layout}")
    val col = entry.spec.columns.find(_.name == column).getOrElse(sys.error(s"no column $column"))
    require(col.algorithm == FilterAlgorithm.SplitBlock, "sbbf columns only")
    val dir = new Path(indexDir, data.dir)
    val folder = new Path(dir, s"column=$column")
    val fs = folder.getFileSystem(conf)
    // What the CREATE wrote: its rows (for the summary) and the files it holds.
    val own = fs.listStatus(folder).filter(_.getPath.getName.endsWith(ProbeFile.Suffix))
    val rows = mutable.ArrayBuffer[IndexFiles.RowWritten]()
    val held = mutable.HashSet[String]()
    own.foreach { s =>
      val f = ProbeFile.readFilters(conf, s.getPath, s.getLen, column)
      try f.foreach { case (e, filter) =>
        held += e.path
        rows += IndexFiles.RowWritten(e.path, e.size, column, filter.length, e.fromFooter)
      } finally f.close()
    }
    // The source's files, listed as a scan lists them (flat: one folder; listStatus, as Spark's
    // file index lists: listFiles' located statuses of local files read each one's permissions
    // with a process of its own).
    val src = new Path(source)
    val listed = mutable.ArrayBuffer[FileStatus]()
    src.getFileSystem(conf).listStatus(src).foreach { s =>
      val n = s.getPath.getName
      if (s.isFile && n.startsWith("part-") && n.endsWith(".parquet") && !held.contains(SourceResolver.normalize(s.getPath))) listed += s
    }
    val added = listed.sortBy(_.getPath.getName).toArray
    val hasher = FilterAlgorithm.SplitBlock.hash
    val numBytes = FilterAlgorithm.SplitBlock.numBytes(rowsPerFile, 0.01, SbbfSizing.Sizing.Exact)
    val per = math.max(1, (added.length + probeFiles - 1) / probeFiles)
    var written = 0L
    var files = 0
    added.grouped(per).zipWithIndex.foreach { case (group, g) =>
      val path = new Path(folder, f"_part-synthetic-$g%05d${ProbeFile.Suffix}")
      val w = new ProbeFile.Writer(conf, path, FilterAlgorithm.SplitBlock, column)
      group.foreach { s =>
        val n = s.getPath.getName.stripPrefix("part-").stripSuffix(".parquet").toLong
        val f = FilterAlgorithm.SplitBlock.empty(numBytes, 0.01)
        var k = 0L
        while (k < rowsPerFile) { f.insert(hasher.hashLong(n * rowsPerFile + k)); k += 1 }
        val bytes = f.toBytes
        w.add(SourceResolver.normalize(s.getPath), s.getLen, s.getModificationTime, rowsPerFile, 0L, rowsPerFile,
          false, bytes)
        rows += IndexFiles.RowWritten(SourceResolver.normalize(s.getPath), s.getLen, column, bytes.length, false)
      }
      written += w.close()
      files += 1
    }
    // The summary again: the column folder's probe files (the CREATE's and these), every row.
    fs.delete(IndexSummary.path(dir), false)
    IndexSummary.write(conf, dir.toString, entry.spec, rows.toSeq, ReusedProbes.None)
    f"""{"added": ${added.length}, "probe_files": $files, "probe_bytes": $written, "seconds": ${(System.nanoTime() - t0) / 1e9}%.1f}"""
  }
}
