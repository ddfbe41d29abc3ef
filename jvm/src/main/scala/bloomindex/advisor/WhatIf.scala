package bloomindex.advisor

import bloomindex.errors.BloomIndexErrors
import bloomindex.hash.ParquetHash

import org.apache.spark.sql.SparkSession

/**
 * One scan of EXPLAIN BLOOM INDEX WHATIF: the files an index on `columns` (with `fpp`) would
 * keep of the files the scan lists, estimated without building it: `holding` files hold a value
 * of each lookup the filter needs (measured), the others are kept at the filters' false
 * positive rate. `sampled` of `listed` files were read (all: the range is the false positives' only).
 */
final case class WhatIfRow(source: String, columns: Seq[String], fpp: Double, listed: Long, kept: Double,
    keptLow: Double, keptHigh: Double, holding: Double, sampledFiles: Int, method: String)

object WhatIf {

  /**
   * The estimate for each scan of `query` with a filter on a source that has one of `columns`.
   * A column no scanned source has is BLOOM_INDEX_WHATIF_COLUMN_NOT_FOUND; one of a type a
   * filter cannot hold, BLOOM_INDEX_UNSUPPORTED_COLUMN_TYPE.
   */
  def estimate(spark: SparkSession, columns: Seq[String], fpp: Option[Double], query: String): Seq[WhatIfRow] =
    bloomindex.history.WorkloadHistory.unrecorded(run(spark, columns, fpp, query))

  private def run(spark: SparkSession, columns: Seq[String], fpp: Option[Double], query: String): Seq[WhatIfRow] = {
    fpp.filterNot(d => d > 0 && d < 1).foreach(d => throw BloomIndexErrors.invalidOptionValue("fpp", d.toString, "must be a number in (0, 1)"))
    // No fpp given: the session's default; under 'auto', the advisor's rate per column (FppModel's).
    val fixed: Option[Double] = fpp.orElse(scala.util.Try(spark.sessionState.conf.getConf(
      org.apache.spark.sql.bloomindex.BloomIndexSQLConf.FPP_DEFAULT).trim.toDouble).toOption)
    val scans = Workload.fromQuery(spark, query, "EXPLAIN BLOOM INDEX WHATIF")
    val bySource = scans.groupBy(_.source.key).values.toSeq.sortBy(_.head.source.display)
    val samples = bySource.map { ss =>
      ss -> SourceSample.of(spark, ss.head.source, Advisor.sampleFiles(spark),
        Some(ss.flatMap(_.listing.getOrElse(Nil)).toSet).filter(_.nonEmpty))
    }
    val resolver = spark.sessionState.conf.resolver
    columns.foreach { c =>
      val fields = samples.flatMap(_._2.field(c))
      if (fields.isEmpty) throw BloomIndexErrors.whatIfColumnNotFound(c,
        samples.map(_._2.display).mkString(", ") match { case "" => "(no filtered scan)"; case s => s })
      fields.foreach { fd =>
        if (!ParquetHash.isIndexable(fd.dataType)) throw BloomIndexErrors.unsupportedColumnType(fd.name, fd.dataType.sql,
          s"a Bloom filter holds tinyint, smallint, int, bigint, float, double, decimal, string, binary, date, timestamp and timestamp_ntz values")
      }
    }
    samples.flatMap { case (ss, sample) =>
      val mine = columns.flatMap(sample.field).map(_.name).distinct
      if (mine.isEmpty) Nil
      else {
        val leaves = ss.flatMap(_.cond.lookups).filter(l => mine.exists(resolver(_, l.column)) && l.values.isDefined).distinct
        val holds = ColumnProfile.holding(sample, leaves)
        val indexed: Map[String, Double] = fixed match {
          case Some(f) => mine.map(_ -> f).toMap
          case None =>
            val profiles = ColumnProfile.of(sample, mine)
            mine.map { c =>
              val p = profiles(c)
              val looks = ss.flatMap(_.cond.lookups).filter(l => resolver(l.column, c))
              val values = if (looks.isEmpty) 1.0 else looks.map(_.count).sum.toDouble / looks.size
              c -> FppPick.choose(p.files, p.ndvPerFile, p.avgFileBytes, values, None, 1L).fpp
            }.toMap
        }
        val f = indexed.values.max
        ss.map { s =>
          val listing = s.listing.getOrElse(sample.files.map(_.path))
          val files = listing.flatMap(holds.get)
          val e = ScanEstimate.FromFiles(listing.size.toDouble, s.cond, leaves, files)
          val k = e.kept(indexed)
          val method = if (files.size >= listing.size) s"measured on every listed file"
            else s"measured on ${files.size} of ${listing.size} listed files, scaled"
          WhatIfRow(sample.display, mine, f, listing.size.toLong, k.expected, k.low, k.high, e.holding(indexed), files.size, method)
        }
      }
    }
  }
}
