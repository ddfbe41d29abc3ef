package bloomindex.indexing

import bloomindex.log.ColumnSpec
import bloomindex.source.SourceFile

import org.apache.datasketches.hll.HllSketch
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.HadoopFsRelation

/**
 * Distinct values per file, estimated from a few of the files before a build sizes anything:
 * what `fpp = 'auto'` needs to weigh filter bytes (the build counts every file exactly, but
 * only as it sizes and fills that file's filter). Reads up to [[MaxFiles]] files, spread over
 * the list, stopping once [[MaxBytes]] are taken (one file at least), with the build's own scan
 * ([[BuildScan]]: the same hashes, text units included), and counts each (file, column) with
 * an HLL sketch.
 */
object NdvSample {

  val MaxFiles = 8
  val MaxBytes: Long = 256L << 20

  /** The files read: every k-th of `files` sorted by path, within the limits. */
  def pick(files: Seq[SourceFile]): Seq[SourceFile] = {
    val sorted = files.sortBy(_.path)
    val step = math.max(1, sorted.size / MaxFiles)
    val spread = sorted.indices.by(step).map(sorted).take(MaxFiles)
    val out = Seq.newBuilder[SourceFile]
    var bytes = 0L
    spread.iterator.takeWhile(_ => bytes < MaxBytes).foreach { f => out += f; bytes += f.size }
    out.result()
  }

  /**
   * Per column of `columns` (in order): distinct values per byte of file over the sampled
   * files of `files` (their distinct counts summed over their bytes), None when nothing was
   * read (no files, or only empty ones).
   */
  def perByte(spark: SparkSession, relation: HadoopFsRelation, files: Seq[SourceFile],
      columns: Seq[ColumnSpec]): Array[Option[Double]] = {
    val n = columns.size
    val sample = pick(files)
    val bytes = sample.iterator.map(_.size).sum
    if (sample.isEmpty || n == 0 || bytes <= 0) return Array.fill(n)(None)
    val scan = new BuildScan(spark, relation, sample, columns)
    val wanted = spark.sparkContext.broadcast(sample.map(f => f.path -> Array.fill(n)(true)).toMap)
    // Per task: (file, column) -> the sketch's bytes; the driver sums the estimates per column.
    val counts = scan.run(wanted) { (_, batches) =>
      val sketches = scala.collection.mutable.HashMap[(String, Int), HllSketch]()
      batches.foreach { b =>
        var i = 0
        while (i < n) {
          if (b.counts(i) > 0) {
            val sk = sketches.getOrElseUpdate((b.path, i), IndexFilters.sketch())
            IndexFilters.sketchOf(b.hashes(i), 0, b.counts(i), sk)
          }
          i += 1
        }
      }
      sketches.iterator.map { case ((p, i), sk) => (p, i, sk.toCompactByteArray) }
    }.collect()
    wanted.destroy()
    // A file split over tasks has one sketch per task: union them per (file, column).
    val perFile: Seq[(Int, Double)] = counts.groupBy(x => (x._1, x._2)).toSeq.map { case ((_, i), xs) =>
      val u = IndexFilters.union()
      xs.foreach(x => u.update(HllSketch.heapify(x._3)))
      i -> u.getEstimate
    }
    (0 until n).map { i =>
      val total = perFile.iterator.filter(_._1 == i).map(_._2).sum
      Some(total / bytes.toDouble)
    }.toArray
  }
}
