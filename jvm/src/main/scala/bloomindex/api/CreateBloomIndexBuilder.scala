package bloomindex.api

import java.util.Locale

import scala.annotation.varargs
import scala.collection.mutable
import scala.jdk.CollectionConverters._

import bloomindex.actions.{ColumnRequest, IndexManager}
import bloomindex.errors.BloomIndexErrors
import bloomindex.log.SourceSpec
import bloomindex.source.{SourceRef, SourceResolver}

import org.apache.spark.sql.{DataFrame, SparkSession}

/**
 * A `CREATE BLOOM INDEX`, built up call by call ([[BloomIndex.create]]); nothing is checked or
 * written before [[execute]], which checks everything CREATE checks (name, source, columns,
 * options), then builds the index.
 *
 * {{{
 *   BloomIndex(spark).create("orders_idx")
 *     .onTable("orders")                              // or onPath("parquet", "/data/orders"), onDataFrame(df)
 *     .column("user_id")
 *     .column("email", Map("fpp" -> "0.05"))          // per-column OPTIONS
 *     .tokens("comment", Map("case" -> "lower"))      // comment USING TOKENS OPTIONS (case = 'lower')
 *     .ngrams("url", 3)                               // url USING NGRAMS (3)
 *     .fpp(0.01).globalFilter()                       // index OPTIONS; option("sizing", "power-of-two")
 *     .ifNotExists()
 *     .execute()                                      // false: it existed (with ifNotExists)
 * }}}
 */
final class CreateBloomIndexBuilder private[api] (spark: SparkSession, name: String) {

  private var source: Option[() => (SourceSpec, DataFrame)] = None
  private val columnRequests = mutable.ArrayBuffer.empty[ColumnRequest]
  private val indexOptions = mutable.LinkedHashMap.empty[String, String]
  private var ifNotExistsFlag = false

  /** A catalog table (`db.table`, `catalog.db.table`; `delta.`/path`` and `parquet.`/path`` too, as in SQL). */
  def onTable(table: String): this.type = from {
    SourceResolver.resolveFrame(spark, SourceRef(spark.sessionState.sqlParser.parseMultipartIdentifier(table)))
  }

  /** Files by path: `format` is the data source (`parquet`, `orc`, `csv`, `json`, `delta`). */
  def onPath(format: String, path: String): this.type = from {
    SourceResolver.resolvePathFrame(spark, format.toLowerCase(Locale.ROOT), path)
  }

  /** A DataFrame that reads files directly (`spark.read.parquet(...)`, a table). */
  def onDataFrame(df: DataFrame): this.type = from(SourceResolver.resolveDataFrameFrame(df))

  private def from(resolve: => (SourceSpec, DataFrame)): this.type = { source = Some(() => resolve); this }

  /** An indexed column with the index's options. */
  def column(column: String): this.type = this.column(column, Map.empty[String, String])

  /** An indexed column with options of its own (`fpp`, `ndv`, `sizing`, `algorithm`). */
  def column(column: String, options: Map[String, String]): this.type = {
    columnRequests += ColumnRequest(column, options)
    this
  }

  def column(column: String, options: java.util.Map[String, String]): this.type = this.column(column, options.asScala.toMap)

  /**
   * A token filter on string `column` (`column USING TOKENS OPTIONS (...)`): LIKE, contains,
   * startswith, endswith, RLIKE, = and IN prune on whole words. Options: `case` ('none' or
   * 'lower': ILIKE and `lower(c)` prune too), `separators` (the separator characters; default:
   * everything that is not a letter or digit), and the column options.
   */
  def tokens(column: String, options: Map[String, String] = Map.empty): this.type = {
    columnRequests += ColumnRequest(column, options, Some("tokens"))
    this
  }

  def tokens(column: String, options: java.util.Map[String, String]): this.type = tokens(column, options.asScala.toMap)

  /**
   * An n-gram filter on string `column` (`column USING NGRAMS (n) OPTIONS (...)`): the same
   * predicates prune on any literal run of `n` or more characters. Options: `case`, and the column options.
   */
  def ngrams(column: String, n: Int, options: Map[String, String] = Map.empty): this.type = {
    columnRequests += ColumnRequest(column, options, Some(s"ngrams($n)"))
    this
  }

  def ngrams(column: String, n: Int, options: java.util.Map[String, String]): this.type = ngrams(column, n, options.asScala.toMap)

  /** A column as SQL's FOR COLUMNS has it: `using` is null, "tokens" or "ngrams(n)" (for Python). */
  private[api] def request(column: String, using: String, options: Map[String, String]): this.type = {
    columnRequests += ColumnRequest(column, options, Option(using))
    this
  }

  /** Indexed columns with the index's options. */
  @varargs def columns(columns: String*): this.type = { columns.foreach(c => column(c)); this }

  /** An index option, as in `OPTIONS (key = value)`: a default for every column, or `global`, `sizing`, ... */
  def option(key: String, value: String): this.type = { indexOptions(key) = value; this }
  def option(key: String, value: Double): this.type = option(key, value.toString)
  def option(key: String, value: Long): this.type = option(key, value.toString)
  def option(key: String, value: Boolean): this.type = option(key, value.toString)

  def options(options: Map[String, String]): this.type = { indexOptions ++= options; this }
  def options(options: java.util.Map[String, String]): this.type = this.options(options.asScala.toMap)

  /** The false positive rate of every column without its own, in (0, 1). */
  def fpp(fpp: Double): this.type = option("fpp", fpp)

  /** `fpp = 'auto'` (or a rate, as text) for every column without its own: see [[fppAuto]]. */
  def fpp(fpp: String): this.type = option("fpp", fpp)

  /**
   * `OPTIONS (fpp = 'auto')`, the default of `spark.bloomindex.fpp.default`: each build chooses
   * each column's rate from its files, their distinct values and the workload history.
   */
  def fppAuto(): this.type = option("fpp", "auto")

  /** The distinct count each file's filter is sized for (default: the file's own). */
  def ndv(ndv: Long): this.type = option("ndv", ndv)

  /** The filter design: `sbbf` (default), `sbbf-murmur3` or `classic`. */
  def algorithm(algorithm: String): this.type = option("algorithm", algorithm)

  /** Also one table-wide filter per column, for join pre-filters (`OPTIONS (global = true)`). */
  def globalFilter(): this.type = option("global", true)
  def globalFilter(enabled: Boolean): this.type = option("global", enabled)

  /** `CREATE ... IF NOT EXISTS`: an index of this name already there is not an error. */
  def ifNotExists(): this.type = { ifNotExistsFlag = true; this }

  /**
   * Checks the name, then resolves the source, checks columns and options, and builds the index,
   * as CREATE BLOOM INDEX does; returns false when an index of this name exists and
   * [[ifNotExists]] was set.
   */
  def execute(): Boolean = {
    val manager = new IndexManager(spark)
    manager.checkName(name)
    val resolve = source.getOrElse(throw BloomIndexErrors.noSource(name))
    val (spec, frame) = resolve()
    val plan = manager.plan(name, spec, columnRequests.toSeq, indexOptions.toMap, Some(frame))
    manager.createFromSpec(plan, ifNotExistsFlag, Some(frame)).isDefined
  }
}
