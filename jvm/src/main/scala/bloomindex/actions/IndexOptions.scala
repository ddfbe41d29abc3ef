package bloomindex.actions

import java.util.Locale

import bloomindex.config.BloomIndexConf
import bloomindex.crypto.IndexEncryption
import bloomindex.errors.BloomIndexErrors
import bloomindex.filter.FilterAlgorithm
import bloomindex.hash.ParquetHash
import bloomindex.log.{ColumnSpec, IndexRoot, IndexSpec, SourceSpec}
import bloomindex.sbbf.SbbfSizing.Sizing
import bloomindex.source.SourceResolver

import org.apache.spark.sql.{DataFrame, SparkSession}

/**
 * What a CREATE names, checked and turned into an [[IndexSpec]]: the index and column
 * `OPTIONS` (fpp, ndv / numItems, sizing, algorithm, global, allow_unencrypted_index), the
 * columns (they exist, once each, not partition columns, of an indexable type).
 */
object IndexOptions {

  private val ColumnOptions = Set("fpp", "ndv", "numitems", "sizing", "algorithm")
  private val TableOptions = ColumnOptions + "global" + IndexEncryption.AllowOption

  /** Validates everything a CREATE names before anything is written. */
  def plan(spark: SparkSession, name: String, source: SourceSpec, columns: Seq[ColumnRequest],
      options: Map[String, String], frame: Option[DataFrame] = None): IndexSpec = {
    new IndexRoot(spark).checkName(name)
    val opts = lowerKeys(options, TableOptions, "index")
    val global = opts.get("global").map(v => parseBool("global", v)).getOrElse(false)
    val allowUnencrypted = opts.get(IndexEncryption.AllowOption).exists(v => parseBool(IndexEncryption.AllowOption, v))
    if (columns.isEmpty) throw BloomIndexErrors.analysis("FOR COLUMNS needs at least one column")
    val df = frame.getOrElse(SourceResolver.dataFrame(spark, source))
    val resolver = spark.sessionState.conf.resolver
    val seen = scala.collection.mutable.Set[String]()
    val specs = columns.map { c =>
      val field = df.schema.fields.find(f => resolver(f.name, c.name)).getOrElse(
        throw BloomIndexErrors.analysis(
          s"Column '${c.name}' does not exist in ${source.display} (columns: ${df.schema.fieldNames.mkString(", ")})"))
      if (!seen.add(field.name.toLowerCase(Locale.ROOT))) {
        throw BloomIndexErrors.analysis(s"Column '${field.name}' is listed twice")
      }
      if (source.partitionColumns.exists(p => resolver(p, field.name))) {
        throw BloomIndexErrors.analysis(
          s"Column '${field.name}' is a partition column of ${source.display}: partition pruning already skips files on it")
      }
      try ParquetHash.checkIndexable(field.dataType) catch {
        case e: IllegalArgumentException => throw BloomIndexErrors.analysis(
          s"Column '${field.name}' of type ${field.dataType.sql} cannot be indexed: ${e.getMessage.stripPrefix("type: ")}")
      }
      val colOpts = opts.filter { case (k, _) => k != "global" && k != IndexEncryption.AllowOption } ++ lowerKeys(c.options, ColumnOptions, s"column '${c.name}'")
      val fpp = colOpts.get("fpp").map(v => parseFpp(v)).getOrElse(BloomIndexConf.defaultFpp(spark))
      val ndv = colOpts.get("ndv").orElse(colOpts.get("numitems")).map(v => parseNdv(v))
      val sizing = colOpts.get("sizing").map { v =>
        try Sizing.fromName(v) catch { case e: IllegalArgumentException => throw BloomIndexErrors.analysis(
          s"Invalid sizing '$v': expected 'exact' or 'power-of-two'") }
      }.getOrElse(Sizing.Exact)
      val algorithm = colOpts.get("algorithm").map { v =>
        try FilterAlgorithm.fromName(v) catch { case _: IllegalArgumentException => throw BloomIndexErrors.analysis(
          s"Invalid algorithm '$v': expected one of ${FilterAlgorithm.names.map(n => s"'$n'").mkString(", ")}") }
      }.getOrElse(FilterAlgorithm.Default)
      // A design may not reach every target (classic: at most 64 hash functions): say so now.
      try algorithm.numBytes(1, fpp, sizing) catch { case e: IllegalArgumentException =>
        throw BloomIndexErrors.analysis(s"Invalid fpp '$fpp' for algorithm '${algorithm.name}': ${e.getMessage.stripPrefix("fpp: ")}") }
      ColumnSpec(field.name, field.dataType.sql, fpp, ndv, sizing, algorithm)
    }
    IndexSpec(name, source, specs, global, allowUnencrypted)
  }

  private def lowerKeys(options: Map[String, String], allowed: Set[String], where: String): Map[String, String] =
    options.map { case (k, v) =>
      val key = k.toLowerCase(Locale.ROOT)
      if (!allowed.contains(key)) throw BloomIndexErrors.analysis(
        s"Unknown option '$k' for $where (known: ${allowed.toSeq.sorted.mkString(", ")})")
      key -> v
    }

  private def parseFpp(v: String): Double = {
    val d = try v.trim.toDouble catch { case _: NumberFormatException => Double.NaN }
    if (!(d > 0 && d < 1)) throw BloomIndexErrors.analysis(s"Invalid fpp '$v': must be a number in (0, 1)")
    d
  }

  private def parseNdv(v: String): Long = {
    val n = try v.trim.toLong catch { case _: NumberFormatException => -1L }
    if (n <= 0) throw BloomIndexErrors.analysis(s"Invalid ndv '$v': must be a whole number > 0")
    n
  }

  private def parseBool(key: String, v: String): Boolean = v.trim.toLowerCase(Locale.ROOT) match {
    case "true" => true
    case "false" => false
    case _ => throw BloomIndexErrors.analysis(s"Invalid value '$v' for $key: expected true or false")
  }
}
