package bloomindex.sql

import bloomindex.catalog.PruningInfo
import bloomindex.join.{BloomMightContain, InjectBloomJoinFilters}
import bloomindex.pruning.{BloomIndexV2Pruning, BloomPrunedFileIndex, DeltaScanPruning, IcebergScanPruning}
import bloomindex.source.{DeltaSource, IcebergFiles}

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, Expression}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LogicalPlan}
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2ScanRelation, FileScan}
import org.apache.spark.sql.types.StringType

/**
 * `EXPLAIN BLOOM INDEX FOR <query>`: one row, column `plan`, with [[ExplainBloomIndexCommand.report]]
 * of the query. The query is kept as text and planned when the command runs, in the session
 * that runs it (so a temporary view a Spark Connect client registered resolves).
 */
case class ExplainBloomIndexCommand(query: String) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(AttributeReference("plan", StringType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] = Seq(Row(ExplainBloomIndexCommand.report(spark.sql(query))))
}

object ExplainBloomIndexCommand {

  /**
   * What Bloom indexes do to each file scan of `df`'s optimized plan: one line per scan,
   * then a line per index that did not apply and why; per join pre-filter the index, column
   * and key it checks, and why a join got none.
   */
  def report(df: DataFrame): String = {
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
      case s: DataSourceV2ScanRelation if IcebergFiles.isBatchQueryScan(s.scan) =>
        // Iceberg reads are pruned at planning, after Iceberg's own planning: the same decision.
        val what = s.relation.identifier.map(_.toString).getOrElse(s.relation.table.name())
        IcebergScanPruning.decision(df.sparkSession, v2Filters.getOrElse(s, Nil), s)
          .map(d => describe(d.info, what))
          .getOrElse(s"scan of $what: no Bloom index pruned this Iceberg scan")
      // A type pattern: DataSourceV2ScanRelation's arity differs between Spark versions (SparkShim).
      case s: DataSourceV2ScanRelation if s.scan.isInstanceOf[FileScan] =>
        val (r, scan) = (s.relation, s.scan.asInstanceOf[FileScan])
        // V2 scans are pruned at planning: the same decision, for the filters right above the scan.
        val what = r.identifier.map(_.toString).getOrElse(r.table.name())
        BloomIndexV2Pruning.decision(df.sparkSession, v2Filters.getOrElse(s, Nil), r, scan).map(d => describe(d.info, what))
          .getOrElse(s"scan of $what: no Bloom index pruned this V2 scan")
      case l @ LogicalRelation(rel: HadoopFsRelation, _, table, _, _) if DeltaSource.isDeltaRelation(rel) =>
        // Delta scans are pruned once planned (DeltaScanPruning): decide on this relation's
        // planned scan (its output is the relation's attributes, so a self-join's two scans differ;
        // a scan of a table with deletion vectors also outputs Delta's own row columns).
        val what = table.map(_.identifier.unquotedString).getOrElse(rel.location.rootPaths.mkString(", "))
        deltaScans.find(s => s.relation.location.rootPaths == rel.location.rootPaths &&
            (s.output.isEmpty || s.output.exists(l.outputSet.contains)))
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
}
