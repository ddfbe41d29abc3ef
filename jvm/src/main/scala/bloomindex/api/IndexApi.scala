package bloomindex.api

import scala.jdk.CollectionConverters._

import bloomindex.actions.IndexManager

import org.apache.spark.sql.{DataFrame, SparkSession}

/**
 * The index operations for Python's `BloomIndex`, through py4j: calls of the Scala API
 * ([[BloomIndex]]) with py4j's `java.util` collections converted. Nothing is decided here.
 */
object IndexApi {

  /**
   * The columns as parallel lists: name, kind (null for an equality filter, "tokens" or
   * "ngrams(n)" for a text filter) and options, so one column may carry several filters.
   */
  private def withColumns(
      b: CreateBloomIndexBuilder,
      columnNames: java.util.List[String],
      columnKinds: java.util.List[String],
      columnOptions: java.util.List[java.util.Map[String, String]],
      options: java.util.Map[String, String],
      ifNotExists: Boolean): CreateBloomIndexBuilder = {
    columnNames.asScala.indices.foreach { i =>
      b.request(columnNames.get(i), columnKinds.get(i),
        Option(columnOptions.get(i)).map(_.asScala.toMap).getOrElse(Map.empty[String, String]))
    }
    b.options(options.asScala.toMap)
    if (ifNotExists) b.ifNotExists() else b
  }

  /** Source: a table name, or `format` + `path` when `format` is not null. */
  def createOnTableOrPath(
      spark: SparkSession,
      name: String,
      source: String,
      format: String,
      columnNames: java.util.List[String],
      columnKinds: java.util.List[String],
      columnOptions: java.util.List[java.util.Map[String, String]],
      options: java.util.Map[String, String],
      ifNotExists: Boolean): Boolean = {
    val b = BloomIndex(spark).create(name)
    if (format == null) b.onTable(source) else b.onPath(format, source)
    withColumns(b, columnNames, columnKinds, columnOptions, options, ifNotExists).execute()
  }

  def createOnDataFrame(
      df: DataFrame,
      name: String,
      columnNames: java.util.List[String],
      columnKinds: java.util.List[String],
      columnOptions: java.util.List[java.util.Map[String, String]],
      options: java.util.Map[String, String],
      ifNotExists: Boolean): Boolean =
    withColumns(BloomIndex(df.sparkSession).create(name).onDataFrame(df), columnNames, columnKinds, columnOptions,
      options, ifNotExists).execute()

  def refresh(spark: SparkSession, name: String, full: Boolean): Long = BloomIndex(spark).refresh(name, full)

  def drop(spark: SparkSession, name: String, ifExists: Boolean): Boolean = BloomIndex(spark).drop(name, ifExists)

  def setRefresh(spark: SparkSession, name: String, mode: String): Long = BloomIndex(spark).setRefresh(name, mode)

  def optimize(spark: SparkSession, name: String): Long = BloomIndex(spark).optimize(name)

  /** (folders deleted, bytes deleted, log entries deleted); `retainHours` < 0: the configured retention. */
  def vacuum(spark: SparkSession, name: String, retainHours: Double): Array[Long] = {
    val (folders, bytes, entries) = BloomIndex(spark).vacuum(name, if (retainHours < 0) None else Some(retainHours))
    Array(folders, bytes, entries)
  }

  def list(spark: SparkSession): DataFrame = BloomIndex(spark).list()

  /** DESCRIBE as ordered (key, value) pairs: a flat java.util.List of 2-element lists. */
  def describe(spark: SparkSession, name: String, extended: Boolean): java.util.List[java.util.List[String]] =
    BloomIndex(spark).describe(name, extended).rows.map { case (k, v) => java.util.Arrays.asList(k, v) }.asJava

  def jobGroup(name: String): String = IndexManager.jobGroup(name)

  /** (source files read, source files) of the last build in job group `group` in this JVM; null before one. */
  def filesProgress(group: String): Array[Long] =
    IndexManager.filesProgress(group).map { case (done, total) => Array(done, total) }.orNull

  /** What Bloom indexes did to each file scan of `df`'s optimized plan ([[BloomIndex.explain]]). */
  def explain(df: DataFrame): String = BloomIndex(df.sparkSession).explain(df)

  /** The SQL metrics of every Bloom join filter operator of `df`'s executed plan, as maps of metric name -> value. */
  def joinFilterMetrics(df: DataFrame): java.util.List[java.util.Map[String, java.lang.Long]] =
    BloomIndex(df.sparkSession).joinFilterMetrics(df).map(_.map { case (k, v) => k -> java.lang.Long.valueOf(v) }.asJava).asJava
}
