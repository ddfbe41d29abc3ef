package bloomindex.api

import scala.jdk.CollectionConverters._

import bloomindex.actions.{ColumnRequest, IndexManager}
import bloomindex.catalog.PruningInfo
import bloomindex.execution.{BloomFilterExec, BloomIndexV2Pruning, DeltaScanPruning}
import bloomindex.join.{BloomMightContain, InjectBloomJoinFilters}
import bloomindex.log.SourceSpec
import bloomindex.optimizer.BloomPrunedFileIndex
import bloomindex.source.{DeltaSource, SourceRef, SourceResolver}
import bloomindex.sql.ShowBloomIndexesCommand

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LogicalPlan}
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanExec, QueryStageExec}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2ScanRelation, FileScan}

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
   * then a line per index that did not apply and why.
   */
  def explain(df: DataFrame): String = {
    def describe(i: PruningInfo, what: String): String = {
      val applied =
        if (i.index == "none") s"scan of $what: no index applied; files kept ${i.filesKept}/${i.filesTotal}"
        else s"scan of $what: index ${i.index} (log version ${i.version}) kept ${i.filesKept}/${i.filesTotal} " +
          s"files, skipped ${i.filesTotal - i.filesKept} files (${i.bytesSkipped} bytes)"
      (applied +: i.notApplied.map(r => s"  not applied: $r")).mkString("\n")
    }
    val planned = df.queryExecution.sparkPlan
    val v2Filters: Map[LogicalPlan, Seq[Expression]] = df.queryExecution.optimizedPlan.collect {
      case Filter(condition, s: DataSourceV2ScanRelation) => (s: LogicalPlan) -> splitConjuncts(condition)
    }.toMap
    lazy val deltaScans = planned.collect {
      case s: FileSourceScanExec if DeltaSource.isDeltaIndex(s.relation.location) => s
    }
    val lines = df.queryExecution.optimizedPlan.collect {
      case s: DataSourceV2ScanRelation if bloomindex.source.IcebergFiles.isBatchQueryScan(s.scan) =>
        // Iceberg reads are pruned at planning, after Iceberg's own planning: the same decision.
        val what = s.relation.identifier.map(_.toString).getOrElse(s.relation.table.name())
        bloomindex.execution.IcebergScanPruning.decision(df.sparkSession, v2Filters.getOrElse(s, Nil), s)
          .map(d => describe(d.info, what))
          .getOrElse(s"scan of $what: no Bloom index pruned this Iceberg scan")
      case s: DataSourceV2ScanRelation if s.scan.isInstanceOf[FileScan] =>
        val (r, scan) = (s.relation, s.scan.asInstanceOf[FileScan])
        // V2 scans are pruned at planning: the same decision, for the filters right above the scan.
        val what = r.identifier.map(_.toString).getOrElse(r.table.name())
        BloomIndexV2Pruning.decision(df.sparkSession, v2Filters.getOrElse(s, Nil), r, scan).map(d => describe(d.info, what))
          .getOrElse(s"scan of $what: no Bloom index pruned this V2 scan")
      case l @ LogicalRelation(rel: HadoopFsRelation, _, table, _, _) if DeltaSource.isDeltaRelation(rel) =>
        // Delta scans are pruned once planned (DeltaScanPruning): decide on this relation's
        // planned scan (its output is the relation's attributes, so a self-join's two scans differ).
        val what = table.map(_.identifier.unquotedString).getOrElse(rel.location.rootPaths.mkString(", "))
        deltaScans.find(s => s.relation.location.rootPaths == rel.location.rootPaths && s.output.forall(l.outputSet.contains))
          .flatMap(s => DeltaScanPruning.prunedIndex(df.sparkSession, s))
          .map(idx => describe(idx.info, what))
          .getOrElse(s"scan of $what: no Bloom index for this Delta table (or pruning disabled, or no filter to prune on)")
      case LogicalRelation(rel: HadoopFsRelation, _, table, _, _) =>
        val (roots, info) = rel.location match {
          case b: BloomPrunedFileIndex => (b.delegate.rootPaths, Some(b.info))
          case other => (other.rootPaths, None)
        }
        val what = table.map(_.identifier.unquotedString).getOrElse(roots.headOption.map(_.toString).getOrElse("?"))
        info.map(describe(_, what)).getOrElse(s"scan of $what: no Bloom index for this source (or pruning disabled)")
    }
    val joins = joinLines(df.queryExecution.optimizedPlan)
    if (lines.isEmpty && joins.isEmpty) "no file scans in this plan" else (lines ++ joins).mkString("\n")
  }

  private def splitConjuncts(e: Expression): Seq[Expression] = e match {
    case org.apache.spark.sql.catalyst.expressions.And(a, b) => splitConjuncts(a) ++ splitConjuncts(b)
    case other => Seq(other)
  }

  /** One line per Bloom filter check in the plan (join pre-filters and hand-written ones), then why joins got none. */
  private def joinLines(plan: LogicalPlan): Seq[String] = {
    val checks = plan.collect { case f: Filter => f.condition.collect { case b: BloomMightContain => b } }.flatten
    val applied = checks.map { c =>
      s"join filter: index ${c.global.ref.index} (log version ${c.global.ref.version}) global filter of " +
        s"${c.global.ref.column} (${c.global.numBytes} bytes) checks ${c.child.sql}"
    }
    val notApplied = plan.collect { case j: Join => j.getTagValue(InjectBloomJoinFilters.NotAppliedTag) }.flatten.flatten
      .map(r => s"  join filter not applied: $r")
    applied ++ notApplied
  }

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
