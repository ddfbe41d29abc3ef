package bloomindex.actions

import java.util.Locale

import bloomindex.crypto.IndexEncryption
import bloomindex.errors.BloomIndexErrors
import bloomindex.filter.FilterAlgorithm
import bloomindex.hash.ParquetHash
import bloomindex.log.{ColumnSpec, IndexRoot, IndexSpec, RefreshMode, SourceSpec}
import bloomindex.sbbf.SbbfSizing.Sizing
import bloomindex.source.SourceResolver

import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.{DataFrame, SparkSession}

/**
 * What a CREATE names, checked and turned into an [[IndexSpec]]: the index and column
 * `OPTIONS` (fpp, ndv / numItems, sizing, algorithm, global, refresh, allow_unencrypted_index), the
 * columns (they exist, once each, not partition columns, of an indexable type).
 */
object IndexOptions {

  private val ColumnOptions = Set("fpp", "ndv", "numitems", "sizing", "algorithm")
  private val TableOnly = Set("global", "refresh", IndexEncryption.AllowOption)
  private val TableOptions = ColumnOptions ++ TableOnly

  /** Validates everything a CREATE names before anything is written. */
  def plan(spark: SparkSession, name: String, source: SourceSpec, columns: Seq[ColumnRequest],
      options: Map[String, String], frame: Option[DataFrame] = None): IndexSpec = {
    new IndexRoot(spark).checkName(name)
    val opts = lowerKeys(options, TableOptions, "index")
    val global = opts.get("global").map(v => parseBool("global", v)).getOrElse(false)
    val allowUnencrypted = opts.get(IndexEncryption.AllowOption).exists(v => parseBool(IndexEncryption.AllowOption, v))
    val refresh = parseRefresh(opts.getOrElse("refresh", spark.sessionState.conf.getConf(BloomIndexSQLConf.REFRESH_DEFAULT)))
    if (columns.isEmpty) throw BloomIndexErrors.noColumns()
    val df = frame.getOrElse(SourceResolver.dataFrame(spark, source))
    val resolver = spark.sessionState.conf.resolver
    val seen = scala.collection.mutable.Set[String]()
    val specs = columns.map { c =>
      val field = df.schema.fields.find(f => resolver(f.name, c.name)).getOrElse(
        throw BloomIndexErrors.sourceColumnNotFound(c.name, source.display, df.schema.fieldNames.toSeq))
      if (!seen.add(field.name.toLowerCase(Locale.ROOT))) {
        throw BloomIndexErrors.duplicateColumn(field.name)
      }
      if (source.partitionColumns.exists(p => resolver(p, field.name))) {
        throw BloomIndexErrors.partitionColumn(field.name, source.display)
      }
      try ParquetHash.checkIndexable(field.dataType) catch {
        case e: IllegalArgumentException =>
          throw BloomIndexErrors.unsupportedColumnType(field.name, field.dataType.sql, e.getMessage.stripPrefix("type: "))
      }
      val colOpts = opts.filter { case (k, _) => !TableOnly.contains(k) } ++ lowerKeys(c.options, ColumnOptions, s"column '${c.name}'")
      val fpp = colOpts.get("fpp").map(v => parseFpp(v)).getOrElse(spark.sessionState.conf.getConf(BloomIndexSQLConf.FPP_DEFAULT))
      val ndv = colOpts.get("ndv").orElse(colOpts.get("numitems")).map(v => parseNdv(v))
      val sizing = colOpts.get("sizing").map { v =>
        try Sizing.fromName(v) catch { case _: IllegalArgumentException =>
          throw BloomIndexErrors.invalidOptionValue("sizing", v, "expected 'exact' or 'power-of-two'") }
      }.getOrElse(Sizing.Exact)
      val algorithm = colOpts.get("algorithm").map { v =>
        try FilterAlgorithm.fromName(v) catch { case _: IllegalArgumentException =>
          throw BloomIndexErrors.invalidOptionValue("algorithm", v,
            s"expected one of ${FilterAlgorithm.names.map(n => s"'$n'").mkString(", ")}") }
      }.getOrElse(FilterAlgorithm.Default)
      // A design may not reach every target (classic: at most 64 hash functions): say so now.
      try algorithm.numBytes(1, fpp, sizing) catch { case e: IllegalArgumentException =>
        throw BloomIndexErrors.fppUnreachable(fpp, algorithm.name, e.getMessage.stripPrefix("fpp: ")) }
      ColumnSpec(field.name, field.dataType.sql, fpp, ndv, sizing, algorithm)
    }
    IndexSpec(name, source, specs, global, allowUnencrypted, refresh)
  }

  /** A `refresh` option's value, or BLOOM_INDEX_INVALID_OPTION_VALUE naming the modes (CREATE and ALTER). */
  private[actions] def parseRefresh(v: String): RefreshMode =
    try RefreshMode.fromName(v.trim) catch { case _: IllegalArgumentException =>
      throw BloomIndexErrors.invalidOptionValue("refresh", v, RefreshMode.all.map(m => s"'${m.name}'").mkString("expected one of ", ", ", ""))
    }

  private def lowerKeys(options: Map[String, String], allowed: Set[String], where: String): Map[String, String] =
    options.map { case (k, v) =>
      val key = k.toLowerCase(Locale.ROOT)
      if (!allowed.contains(key)) throw BloomIndexErrors.unknownOption(k, where, allowed.toSeq)
      key -> v
    }

  private def parseFpp(v: String): Double = {
    val d = try v.trim.toDouble catch { case _: NumberFormatException => Double.NaN }
    if (!(d > 0 && d < 1)) throw BloomIndexErrors.invalidOptionValue("fpp", v, "must be a number in (0, 1)")
    d
  }

  private def parseNdv(v: String): Long = {
    val n = try v.trim.toLong catch { case _: NumberFormatException => -1L }
    if (n <= 0) throw BloomIndexErrors.invalidOptionValue("ndv", v, "must be a whole number > 0")
    n
  }

  private def parseBool(key: String, v: String): Boolean = v.trim.toLowerCase(Locale.ROOT) match {
    case "true" => true
    case "false" => false
    case _ => throw BloomIndexErrors.invalidBooleanOption(key, v)
  }
}
