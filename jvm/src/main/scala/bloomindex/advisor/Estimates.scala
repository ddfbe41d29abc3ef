package bloomindex.advisor

import bloomindex.source.SourceResolver

import org.apache.spark.sql.Column
import org.apache.spark.sql.functions._

/**
 * What the data says about one column of a source, measured on the source's sample of files.
 *
 * @param files          the source's files
 * @param ndvPerFile     distinct values per file (mean over the sampled files)
 * @param filterBytes    the column's filters at `fpp` summed over every file is [[bytesAt]]
 * @param holdFraction   the share of the files that hold a value looked up (a value drawn from
 *                       the column's distinct values): 1 for a value in every file, 1/files
 *                       for a value in one file
 * @param perFileNdv     each sampled file's distinct count (for the filters' sizes)
 */
final case class ColumnProfile(column: String, dataType: String, files: Long, sampledFiles: Int,
    ndvPerFile: Double, distinct: Double, holdFraction: Double, perFileNdv: Seq[Long], avgFileBytes: Double,
    footer: Option[FooterBytes]) {

  /** The column's filters at `fpp`, every file (the sampled files' sizes scaled). */
  def bytesAt(fpp: Double): Long = {
    if (perFileNdv.isEmpty) return 0L
    val algorithm = bloomindex.filter.FilterAlgorithm.Default
    val sum = perFileNdv.map(n => algorithm.numBytes(math.max(1L, n), fpp,
      bloomindex.sbbf.SbbfSizing.Sizing.Exact).toLong).sum
    math.round(sum.toDouble * files / perFileNdv.size)
  }

  /** What a build reads for the column: its chunks' bytes, its footer filters, or whole files. */
  def buildBytes: (Long, String) = footer match {
    case Some(f) if f.footerFilters => (math.round(f.filterBytesPerFile * files), "footer filters")
    case Some(f) => (math.round(f.chunkBytesPerFile * files), "column data")
    case None => (math.round(avgFileBytes * files), "files")
  }
}

object ColumnProfile {

  /**
   * The profiles of `columns` of `s`: two Spark jobs over the sampled files (per file: each
   * column's distinct count; over the sample: each column's distinct count).
   *
   * The share of files holding a looked-up value: with every file read, the pairs
   * (value, file) over the distinct values. From a sample of `n` of `N` files, values are taken
   * as spread alike, each in a share `p` of the files: then the sample's pairs over its distinct
   * values is `p n / (1 - (1 - p)^n)`, solved for `p` (at least 1/N: each value is in a file).
   */
  def of(s: SourceSample, columns: Seq[String]): Map[String, ColumnProfile] = {
    if (columns.isEmpty) return Map.empty
    val cols = columns.zipWithIndex
    val perFile = s.rows.groupBy(col("__file")).agg(
      count(lit(1)).as("__rows"), cols.map { case (c, i) => approx_count_distinct(col(quote(c))).as(s"n$i") }: _*).collect()
    val overall = s.rows.agg(approx_count_distinct(col(quote(cols.head._1))).as("d0"),
      cols.tail.map { case (c, i) => approx_count_distinct(col(quote(c))).as(s"d$i") }: _*).collect().head
    val n = math.max(1, s.sampled.size)
    val bigN = math.max(1L, s.files.size.toLong)
    cols.map { case (c, i) =>
      val ndvs = perFile.map(_.getAs[Long](s"n$i")).toSeq
      // Files the sample read with no row are files holding no value: they count in n.
      val pairs = ndvs.sum.toDouble
      val distinct = math.max(1.0, overall.getAs[Long](s"d$i").toDouble)
      val p =
        if (pairs <= 0) 0.0
        else if (!s.isSampled) math.min(1.0, pairs / (distinct * bigN))
        else solveShare(pairs / distinct, n, bigN)
      val dt = s.field(c).map(_.dataType.sql).getOrElse("?")
      val allNdvs = ndvs ++ Seq.fill(math.max(0, n - ndvs.size))(0L)
      c -> ColumnProfile(c, dt, bigN, n, pairs / n, if (s.isSampled) pairs / (p * n).max(1e-9) else distinct,
        p, allNdvs, s.avgFileBytes, s.footerColumnBytes(c))
    }.toMap
  }

  /** `p` in [1/N, 1] with `p n / (1 - (1 - p)^n)` = `ratio` (the left side grows with p: bisection). */
  private[advisor] def solveShare(ratio: Double, n: Int, bigN: Long): Double = {
    def f(p: Double) = p * n / (1 - math.pow(1 - p, n))
    var lo = 1.0 / bigN
    var hi = 1.0
    if (ratio <= f(lo)) return lo
    if (ratio >= n) return 1.0
    for (_ <- 0 until 60) {
      val mid = (lo + hi) / 2
      if (f(mid) < ratio) lo = mid else hi = mid
    }
    (lo + hi) / 2
  }

  def quote(c: String): String = s"`${c.replace("`", "``")}`"

  /**
   * For each sampled file (normalized path) and each of `leaves` (a column, its literals),
   * whether the file holds one of the literals: one Spark job. Files with no row hold none.
   */
  def holding(s: SourceSample, leaves: Seq[Lookup]): Map[String, Array[Boolean]] = {
    if (leaves.isEmpty) return s.sampled.map(f => f.path -> Array.empty[Boolean]).toMap
    val flags: Seq[Column] = leaves.zipWithIndex.map { case (l, i) =>
      val values = l.values.getOrElse(Nil).map(v => expr(v.sql))
      val c = col(quote(l.column))
      max(when(if (values.size == 1) c === values.head else c.isin(values: _*), 1).otherwise(0)).as(s"h$i")
    }
    val rows = s.rows.groupBy(col("__file")).agg(flags.head, flags.tail: _*).collect()
    val found = rows.map { r =>
      SourceResolver.normalize(r.getString(0)) -> leaves.indices.map(i => r.getAs[Int](s"h$i") == 1).toArray
    }.toMap
    s.sampled.map(f => f.path -> found.getOrElse(f.path, Array.fill(leaves.size)(false))).toMap
  }
}
