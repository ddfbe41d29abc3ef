package bloomindex.actions

import java.util.Locale

import bloomindex.source.DecodingContext
import bloomindex.advisor.FppModel
import bloomindex.crypto.IndexEncryption
import bloomindex.errors.BloomIndexErrors
import bloomindex.filter.FilterAlgorithm
import bloomindex.hash.ParquetHash
import bloomindex.log.{ColumnSpec, IndexRoot, IndexSpec, RefreshMode, SourceSpec, TextColumn}
import bloomindex.catalog.TextSession
import bloomindex.text.{CaseFolding, Separators, TextFilterSpec, TextKind}
import bloomindex.sbbf.SbbfSizing
import bloomindex.sbbf.SbbfSizing.Sizing
import bloomindex.source.SourceResolver

import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.{StringType, StructField}

/**
 * What a CREATE names, checked and turned into an [[IndexSpec]]: the index and column
 * `OPTIONS` (fpp: a rate or `auto`, ndv / numItems, sizing, algorithm, global, refresh, allow_unencrypted_index), the
 * columns (they exist, once each, not partition columns, of an indexable type).
 */
object IndexOptions {

  private val ColumnOptions = Set("fpp", "ndv", "numitems", "sizing", "algorithm")
  /** Options of a text filter (`col USING TOKENS | NGRAMS (n)`) besides the column options. */
  private val TextOptions = Set("case", "separators")
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
      val text = c.using.map(u => textColumn(spark, field, u, c.options))
      val key = text.fold(field.name)(t => TextColumn.key(field.name, t.spec.kind))
      if (!seen.add(key.toLowerCase(Locale.ROOT))) {
        throw BloomIndexErrors.duplicateColumn(text.fold(field.name)(t => s"${field.name} USING ${t.kindSql}"))
      }
      if (source.partitionColumns.exists(p => resolver(p, field.name))) {
        throw BloomIndexErrors.partitionColumn(field.name, source.display)
      }
      // By its exact name, as Spark's readers match it.
      if (DecodingContext.corruptRecordColumn(spark.sessionState.conf, source.format, source.options).contains(field.name)) {
        throw BloomIndexErrors.corruptRecordColumn(field.name, source.display)
      }
      if (DecodingContext.xmlWildcardColumn(source.format, source.options).contains(field.name)) {
        throw BloomIndexErrors.xmlWildcardColumn(field.name, source.display)
      }
      if (text.isEmpty) try ParquetHash.checkIndexable(field.dataType) catch {
        case e: IllegalArgumentException =>
          throw BloomIndexErrors.unsupportedColumnType(field.name, field.dataType.sql, e.getMessage.stripPrefix("type: "))
      }
      val tableOpts = opts.filter { case (k, _) => !TableOnly.contains(k) }
      val ownOpts = lowerKeys(c.options, if (text.isDefined) ColumnOptions ++ TextOptions else ColumnOptions, s"column '${c.name}'")
        .filter { case (k, _) => !TextOptions.contains(k) }
      val colOpts = tableOpts ++ ownOpts
      // None: `auto`, chosen by each build (AutoFpp); until the first one, a placeholder.
      val chosen = parseFpp(colOpts.getOrElse("fpp", spark.sessionState.conf.getConf(BloomIndexSQLConf.FPP_DEFAULT)))
      val fpp = chosen.getOrElse(AutoFpp.Placeholder)
      // The column's own ndv (or numItems) over the index's.
      val ndv = ndvOption(ownOpts, s"column '${c.name}'").orElse(ndvOption(tableOpts, "the index")).map(v => parseNdv(v))
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
      // `auto` may choose down to FppModel.MinFpp.
      val hardest = chosen.getOrElse(FppModel.MinFpp)
      val oneValue = try algorithm.numBytes(1, hardest, sizing) catch { case e: IllegalArgumentException =>
        throw BloomIndexErrors.fppUnreachable(hardest, algorithm.name, e.getMessage.stripPrefix("fpp: ")) }
      // A rate only the largest filter meets even for one value (a typo such as 1e-300) would
      // make every file's filter 128 MiB, however few values it holds.
      if (oneValue >= SbbfSizing.MaxBytes) throw BloomIndexErrors.fppUnreachable(hardest, algorithm.name,
        s"a filter of a single value would need more than the largest filter a file may have " +
          s"(${SbbfSizing.MaxBytes >> 20} MiB, ${sizing.name} sizing)")
      ColumnSpec(key, field.dataType.sql, fpp, ndv, sizing, algorithm, text, fppAuto = chosen.isEmpty)
    }
    IndexSpec(name, source, specs, global, allowUnencrypted, refresh)
  }

  /**
   * The text filter `field USING <using> OPTIONS (options)` asks for: `tokens` or `ngrams(n)`,
   * `case` = 'none' | 'lower' (Spark's `lower()`, as this session runs it: ICU's mapping unless
   * `spark.sql.icu.caseMappings.enabled` is off), `separators` (tokens only) = the separator
   * characters (default: every code point that is not a letter or digit). Only a STRING column of
   * the default collation: under another collation Spark's LIKE and `contains` do not compare the
   * bytes (or their `lower()`) a filter holds.
   */
  private def textColumn(spark: SparkSession, field: StructField, using: String, options: Map[String, String]): TextColumn = {
    field.dataType match {
      case s: StringType if s.sql == "STRING" =>
      case other => throw BloomIndexErrors.unsupportedColumnType(field.name, other.sql,
        "a text filter (USING TOKENS or NGRAMS) needs a STRING column of the default collation (UTF8_BINARY)")
    }
    val opts = options.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    val NGrams = """ngrams\((\d+)\)""".r
    val kind = using match {
      case "tokens" =>
        TextKind.Tokens(opts.get("separators").map { v =>
          if (v.isEmpty) throw BloomIndexErrors.invalidOptionValue("separators", v, "expected the separator characters, at least one")
          Separators.Only.of(v)
        }.getOrElse(Separators.NotLetterOrDigit))
      case NGrams(n) =>
        if (opts.contains("separators")) throw BloomIndexErrors.invalidOptionValue("separators", opts("separators"),
          "separators apply to USING TOKENS only; an n-gram filter holds every run of n characters")
        val k = scala.util.Try(n.toInt).getOrElse(-1)
        if (k < 1 || k > TextKind.MaxN) throw BloomIndexErrors.invalidOptionValue("NGRAMS", n, s"n must be in [1, ${TextKind.MaxN}]")
        TextKind.NGrams(k)
      case other => throw BloomIndexErrors.invalidOptionValue("USING", other, "expected TOKENS or NGRAMS (n)")
    }
    val folding = opts.get("case").map(_.trim.toLowerCase(Locale.ROOT)) match {
      case None | Some("none") => CaseFolding.Off
      case Some("lower") =>
        if (!CaseFolding.foldsAsRoot(Locale.getDefault)) throw BloomIndexErrors.invalidOptionValue("case", "lower",
          s"the JVM's default locale (${Locale.getDefault}) lower-cases otherwise than the root locale the filter folds with")
        TextSession.folding(spark.sessionState.conf)
      case Some(v) => throw BloomIndexErrors.invalidOptionValue("case", v, "expected 'none' or 'lower'")
    }
    TextColumn(field.name, TextFilterSpec(kind, folding))
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

  /**
   * The `ndv` of one level of OPTIONS (`whose`: the index's, or a column's), given as `ndv` or its
   * alias `numItems`; both, with different numbers, is refused rather than one chosen silently.
   */
  private def ndvOption(opts: Map[String, String], whose: String): Option[String] =
    (opts.get("ndv"), opts.get("numitems")) match {
      case (Some(a), Some(b)) if parseNdv(a) != parseNdv(b) =>
        throw BloomIndexErrors.invalidOptionValue("numItems", b,
          s"$whose also gives ndv = '$a', and numItems is another name of ndv: give one of them")
      case (a, b) => a.orElse(b)
    }

  /** An `fpp` option's value: a rate, or None for `auto` (any case, blanks around it ignored). */
  private[actions] def parseFpp(v: String): Option[Double] = {
    if (v.trim.equalsIgnoreCase(AutoFpp.Name)) return None
    val d = try v.trim.toDouble catch { case _: NumberFormatException => Double.NaN }
    if (!(d > 0 && d < 1)) throw BloomIndexErrors.invalidOptionValue("fpp", v, "must be 'auto' or a number in (0, 1)")
    Some(d)
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
