package bloomindex.api

import scala.jdk.CollectionConverters._

import bloomindex.actions.{ColumnRequest, IndexManager}
import bloomindex.execution.BloomFilterExec
import bloomindex.log.SourceSpec
import bloomindex.source.{SourceRef, SourceResolver}
import bloomindex.sql.{ExplainBloomIndexCommand, ShowBloomIndexesCommand}

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanExec, QueryStageExec}

/**
 * The index operations for Python's `BloomIndex`, through py4j: the same [[IndexManager]]
 * the SQL commands use. Collections arrive as java.util ones (py4j converts Python's).
 */
object IndexApi {

  private def columns(names: java.util.List[String], options: java.util.Map[String, java.util.Map[String, String]]) =
    names.asScala.toSeq.map { n =>
      val o = Option(options).flatMap(m => Option(m.get(n))).map(_.asScala.toMap).getOrElse(Map.empty[String, String])
      ColumnRequest(n, o)
    }

  /** Source: a table name, or `format` + `path` when `format` is not null. */
  def createOnTableOrPath(
      spark: SparkSession,
      name: String,
      source: String,
      format: String,
      columnNames: java.util.List[String],
      columnOptions: java.util.Map[String, java.util.Map[String, String]],
      options: java.util.Map[String, String],
      ifNotExists: Boolean): Boolean = {
    create(spark, name, columnNames, columnOptions, options, ifNotExists) {
      if (format == null) SourceResolver.resolveFrame(spark, SourceRef(spark.sessionState.sqlParser.parseMultipartIdentifier(source)))
      else SourceResolver.resolvePathFrame(spark, format.toLowerCase(java.util.Locale.ROOT), source)
    }
  }

  def createOnDataFrame(
      df: DataFrame,
      name: String,
      columnNames: java.util.List[String],
      columnOptions: java.util.Map[String, java.util.Map[String, String]],
      options: java.util.Map[String, String],
      ifNotExists: Boolean): Boolean =
    create(df.sparkSession, name, columnNames, columnOptions, options, ifNotExists)(
      (SourceResolver.resolveDataFrame(df), df))

  /** Checks the name before resolving the source, then plans and builds, as CREATE does. */
  private def create(
      spark: SparkSession,
      name: String,
      columnNames: java.util.List[String],
      columnOptions: java.util.Map[String, java.util.Map[String, String]],
      options: java.util.Map[String, String],
      ifNotExists: Boolean)(source: => (SourceSpec, DataFrame)): Boolean = {
    val manager = new IndexManager(spark)
    manager.checkName(name)
    val (spec, frame) = source
    val plan = manager.plan(name, spec, columns(columnNames, columnOptions), options.asScala.toMap, Some(frame))
    manager.createFromSpec(plan, ifNotExists, Some(frame)).isDefined
  }

  def refresh(spark: SparkSession, name: String, full: Boolean): Long = new IndexManager(spark).refresh(name, full).version

  def drop(spark: SparkSession, name: String, ifExists: Boolean): Boolean = new IndexManager(spark).drop(name, ifExists)

  def list(spark: SparkSession): DataFrame = {
    val cmd = ShowBloomIndexesCommand(None)
    val rows = cmd.run(spark)
    spark.createDataFrame(rows.asJava, org.apache.spark.sql.catalyst.types.DataTypeUtils.fromAttributes(cmd.output))
  }

  /** DESCRIBE as ordered (key, value) pairs: a flat java.util.List of 2-element lists. */
  def describe(spark: SparkSession, name: String): java.util.List[java.util.List[String]] =
    new IndexManager(spark).describe(name).map { case (k, v) => java.util.Arrays.asList(k, v) }.asJava

  def jobGroup(name: String): String = IndexManager.jobGroup(name)

  /**
   * What Bloom indexes did to each file scan of `df`'s optimized plan: one line per scan,
   * then a line per index that did not apply and why (`EXPLAIN BLOOM INDEX FOR` in SQL).
   */
  def explain(df: DataFrame): String = ExplainBloomIndexCommand.report(df)

  /**
   * The SQL metrics of every [[BloomFilterExec]] in `df`'s executed plan (after an action:
   * the final adaptive plan), as maps of metric name -> value.
   */
  def joinFilterMetrics(df: DataFrame): java.util.List[java.util.Map[String, java.lang.Long]] = {
    def nodes(p: SparkPlan): Seq[SparkPlan] = p match {
      case a: AdaptiveSparkPlanExec => nodes(a.executedPlan)
      case q: QueryStageExec => nodes(q.plan)
      case other => other +: (other.children ++ other.subqueries).flatMap(nodes)
    }
    nodes(df.queryExecution.executedPlan).collect { case b: BloomFilterExec =>
      b.metrics.map { case (k, m) => k -> java.lang.Long.valueOf(m.value) }.asJava
    }.asJava
  }
}
