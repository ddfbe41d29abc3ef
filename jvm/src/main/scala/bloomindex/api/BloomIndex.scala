package bloomindex.api

import scala.jdk.CollectionConverters._

import bloomindex.actions.IndexManager
import bloomindex.execution.BloomFilterExec
import bloomindex.sql.{ExplainBloomIndexCommand, ExplainBloomIndexWhatIfCommand, RecommendBloomIndexesCommand, ShowBloomIndexesCommand}

import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanExec, QueryStageExec}
import org.apache.spark.sql.functions.{call_function, col, lit}

/**
 * Bloom indexes from Scala and Java: create, refresh, drop, list, describe and explain, the
 * same operations (the same [[IndexManager]] underneath) as the SQL statements. The session
 * needs `spark.sql.extensions=bloomindex.BloomIndexExtensions` for queries to be pruned.
 *
 * {{{
 *   import bloomindex.api.BloomIndex
 *
 *   val bi = BloomIndex(spark)
 *   bi.create("orders_idx").onTable("orders").columns("user_id", "email").fpp(0.01).globalFilter().execute()
 *   bi.create("events_ip").onPath("parquet", "/data/events").column("ip", Map("fpp" -> "0.05")).execute()
 *   bi.refresh("orders_idx")                      // new and changed files; refresh(name, full = true) rebuilds
 *   bi.list().show()                              // as SHOW BLOOM INDEXES
 *   bi.describe("orders_idx")("files_indexed")    // DESCRIBE BLOOM INDEX, by key
 *   println(bi.explain(spark.table("orders").where("user_id = 42")))
 *   bi.drop("orders_idx", ifExists = true)
 * }}}
 *
 * From Java: `BloomIndex.forSession(spark).create("orders_idx").onTable("orders").columns("user_id").execute()`;
 * the builder also takes `java.util.Map` options. Errors are `AnalysisException`s with an error
 * condition (`getCondition`), as the SQL statements raise them.
 */
final class BloomIndex private (val spark: SparkSession) {

  /** Starts a CREATE BLOOM INDEX: name the source and the columns, then [[CreateBloomIndexBuilder.execute]]. */
  def create(name: String): CreateBloomIndexBuilder = new CreateBloomIndexBuilder(spark, name)

  /**
   * Indexes the files added or changed since the index's version (`full = false`, as
   * `REFRESH BLOOM INDEX name`) or every file (`full = true`, `... FULL`); returns the new log version.
   */
  def refresh(name: String, full: Boolean): Long = new IndexManager(spark).refresh(name, full).version

  /** `REFRESH BLOOM INDEX name`: incremental. */
  def refresh(name: String): Long = refresh(name, full = false)

  /**
   * How the index follows its source's writes from now on: `on_write`, `background` or `manual`
   * (`ALTER BLOOM INDEX name SET OPTIONS (refresh = ...)`); the new log version.
   */
  def setRefresh(name: String, mode: String): Long = new IndexManager(spark).alter(name, Map("refresh" -> mode)).version

  /**
   * `OPTIMIZE BLOOM INDEX name`: rewrites each column's small probe files together into few
   * (and takes in what an incremental refresh would); the log version after it.
   */
  def optimize(name: String): Long = new IndexManager(spark).optimize(name).version

  /**
   * `VACUUM BLOOM INDEX name [RETAIN n HOURS]`: deletes the index data no version replaced less
   * than `retainHours` ago (default `spark.bloomindex.vacuum.retention`) reads; (folders, bytes,
   * log entries) deleted.
   */
  def vacuum(name: String, retainHours: Option[Double] = None): (Long, Long, Long) = {
    retainHours.foreach(h => require(h >= 0 && !h.isNaN && !h.isInfinite, s"retainHours: must be 0 or more, got $h"))
    new IndexManager(spark).vacuum(name, retainHours.map(h => (h * 3600 * 1000).toLong))
  }

  /** Drops the index; false when there was none and `ifExists` (else an error). */
  def drop(name: String, ifExists: Boolean): Boolean = new IndexManager(spark).drop(name, ifExists)

  /** `DROP BLOOM INDEX name`: an error when there is none. */
  def drop(name: String): Boolean = drop(name, ifExists = false)

  /** The indexes as `SHOW BLOOM INDEXES` shows them: name, source, columns, state, version, files_indexed, bytes. */
  def list(): DataFrame = {
    // The command itself, not spark.sql: listing needs no parser extension in the session.
    val cmd = ShowBloomIndexesCommand(None)
    spark.createDataFrame(cmd.run(spark).asJava, DataTypeUtils.fromAttributes(cmd.output))
  }

  /**
   * The workload history, as `SELECT * FROM bloom_index_history()` shows it: one row per scan of
   * an indexable source this root's queries planned with a filter, oldest first.
   */
  def history(): DataFrame =
    spark.createDataFrame(bloomindex.history.HistoryFunction.rows(spark).asJava, bloomindex.history.HistoryFunction.schema)

  /**
   * `RECOMMEND BLOOM INDEXES [ON source] [BUDGET size] [FOR query | FROM HISTORY]`: `source` a
   * table name or `format.`path`` (None: every source of the workload), `query` a SQL query
   * (None: the workload history), `budget` a size such as "512m" (None: no limit). One row
   * per recommendation (docs/advisor.md).
   */
  def recommend(source: Option[String] = None, query: Option[String] = None, budget: Option[String] = None): DataFrame = {
    val ref = source.map(s => bloomindex.source.SourceRef(spark.sessionState.sqlParser.parseMultipartIdentifier(s)))
    val cmd = RecommendBloomIndexesCommand(ref, query, budget)
    spark.createDataFrame(cmd.run(spark).asJava, RecommendBloomIndexesCommand.schema)
  }

  /**
   * `EXPLAIN BLOOM INDEX WHATIF (columns) [OPTIONS (fpp = x)] FOR query`: per scan, the files an
   * index on `columns` would keep, estimated without building it, with the estimate's range.
   */
  def whatIf(columns: Seq[String], query: String, fpp: Option[Double] = None): DataFrame = {
    val cmd = ExplainBloomIndexWhatIfCommand(columns, fpp.map(f => "fpp" -> f.toString).toMap, query)
    spark.createDataFrame(cmd.run(spark).asJava, ExplainBloomIndexWhatIfCommand.schema)
  }

  /**
   * `DESCRIBE BLOOM INDEX [EXTENDED] name`: its (key, value) rows in display order; `extended`
   * also lists the source for the freshness rows (files_new_or_changed, files_deleted).
   */
  def describe(name: String, extended: Boolean): BloomIndexDescription =
    BloomIndexDescription(name, new IndexManager(spark).describe(name, extended))

  /** `DESCRIBE BLOOM INDEX name`: the index alone, the source not listed. */
  def describe(name: String): BloomIndexDescription = describe(name, extended = false)

  /**
   * What Bloom indexes do to `df`: per file scan the index used, files kept of total and bytes
   * skipped, and why each other index did not apply; per join pre-filter the index and key
   * (`EXPLAIN BLOOM INDEX FOR <query>` in SQL).
   */
  def explain(df: DataFrame): String = ExplainBloomIndexCommand.report(df)

  /**
   * The SQL metrics of each Bloom join filter operator of `df`'s executed plan (run an action
   * first): `numInputRows`, `numOutputRows`, `filterTime` (ns).
   */
  def joinFilterMetrics(df: DataFrame): Seq[Map[String, Long]] = {
    def nodes(p: SparkPlan): Seq[SparkPlan] = p match {
      case a: AdaptiveSparkPlanExec => nodes(a.executedPlan)
      case q: QueryStageExec => nodes(q.plan)
      case other => other +: (other.children ++ other.subqueries).flatMap(nodes)
    }
    nodes(df.queryExecution.executedPlan).collect { case b: BloomFilterExec =>
      b.metrics.map { case (k, m) => k -> m.value }
    }
  }

  /**
   * `df` without the rows whose `key` is certainly absent from the global filter of `column`
   * in `index`: a join pre-filter by hand (`bloom_might_contain`). Refused when the index
   * does not hold every current file of its source, unless `allowStale`.
   */
  def prefilter(df: DataFrame, key: String, index: String, column: String, allowStale: Boolean): DataFrame =
    df.filter(BloomIndex.mightContain(index, column, col(key), allowStale))

  def prefilter(df: DataFrame, key: String, index: String, column: String): DataFrame =
    prefilter(df, key, index, column, allowStale = false)
}

object BloomIndex {

  /** The operations on `spark`'s indexes (under its `spark.bloomindex.root`). */
  def apply(spark: SparkSession): BloomIndex = new BloomIndex(spark)

  /** The same, for Java: `BloomIndex.forSession(spark)`. */
  def forSession(spark: SparkSession): BloomIndex = new BloomIndex(spark)

  /** The active session's. */
  def active(): BloomIndex = new BloomIndex(SparkSession.active)

  /**
   * `bloom_might_contain(index, column, key [, allowStale])` as a Column: false only when
   * `key` is certainly absent from the index's global filter of `column`.
   */
  def mightContain(index: String, column: String, key: Column, allowStale: Boolean): Column = {
    val args = Seq(lit(index), lit(column), key) ++ (if (allowStale) Seq(lit(true)) else Nil)
    call_function("bloom_might_contain", args: _*)
  }

  def mightContain(index: String, column: String, key: Column): Column = mightContain(index, column, key, allowStale = false)
}

/** `DESCRIBE BLOOM INDEX`'s rows: `apply(key)` / `get(key)` by key, `rows` in display order. */
final case class BloomIndexDescription(name: String, rows: Seq[(String, String)]) {
  def apply(key: String): String = get(key).getOrElse(throw new NoSuchElementException(s"DESCRIBE of '$name' has no key '$key'"))
  def get(key: String): Option[String] = rows.collectFirst { case (k, v) if k == key => v }
  def toMap: Map[String, String] = rows.toMap
  /** For Java: keys in display order. */
  def asJava: java.util.Map[String, String] = {
    val m = new java.util.LinkedHashMap[String, String]()
    rows.foreach { case (k, v) => m.put(k, v) }
    m
  }
}
