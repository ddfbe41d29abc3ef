package bloomindex.pruning

import scala.util.control.NonFatal

import bloomindex.catalog.{Decision, IndexCatalog, PruningInfo}
import bloomindex.compat.SparkShim
import bloomindex.source.{IcebergFiles, IcebergTables}

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.expressions.{And, Expression, PlanExpression}
import org.apache.spark.sql.catalyst.planning.PhysicalOperation
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.connector.expressions.NamedReference
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory, Scan, SupportsRuntimeV2Filtering}
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2ScanRelation, DataSourceV2Strategy}
import org.apache.spark.sql.types.StructType

/**
 * Bloom index pruning of Apache Iceberg scans, at planning time, after Iceberg's own planning.
 *
 * Iceberg plans a read in its scan (`SparkBatchQueryScan`): partition pruning, metrics and its
 * residual filters choose the data files, which it groups into tasks; the batch's input
 * partitions each carry a group of file scan tasks. For a filtered Iceberg read this strategy
 * asks the index catalog about the data files of those tasks (the files Iceberg would read),
 * and plans the scan through Spark's own `DataSourceV2Strategy` with the scan wrapped in a
 * [[PrunedIcebergScan]], whose batch hands out Iceberg's input partitions minus the tasks of
 * the skipped files. Everything else (the reader, deletes, runtime filtering, metrics) stays
 * Iceberg's. Only plain reads are pruned: the scans of row-level rewrites (copy-on-write
 * DELETE, UPDATE, MERGE) and changelogs are other classes, left alone.
 *
 * See docs/decisions.md (issue 19) for why here and not through Iceberg's filter APIs.
 */
class IcebergScanPruning(spark: SparkSession) extends SparkStrategy {

  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case PhysicalOperation(_, filters, s: DataSourceV2ScanRelation)
        if IcebergFiles.isBatchQueryScan(s.scan) && IcebergFiles.isIcebergTable(s.relation.table) =>
      IcebergScanPruning.decision(spark, filters, s)
        .filter(_.skipped.nonEmpty)
        .map { d =>
          val wrapped = PrunedIcebergScan(s.scan, d.skipped, d.info)
          val pruned = plan.transformUp { case rel: DataSourceV2ScanRelation if rel eq s => SparkShim.withScan(s, wrapped) }
          new DataSourceV2Strategy(spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession]).apply(pruned)
        }
        .getOrElse(Nil)
    case _ => Nil
  }
}

object IcebergScanPruning {

  private def usable(e: Expression): Boolean = e.deterministic && !e.exists(_.isInstanceOf[PlanExpression[_]])

  /**
   * What the indexes decide for an Iceberg read under `filters` (None: no usable filter, pruning
   * off, or no index over the table): for the strategy and `BloomIndex.explain`. The files are
   * those of the tasks Iceberg planned for the scan (its cached plan: planning again costs
   * nothing). A task group that is not only data file tasks makes no decision.
   */
  def decision(spark: SparkSession, filters: Seq[Expression], s: DataSourceV2ScanRelation): Option[Decision] = {
    val conds = filters.filter(usable)
    if (conds.isEmpty || !spark.sessionState.conf.getConf(BloomIndexSQLConf.PRUNING_ENABLED)) return None
    try {
      val source = IcebergTables.scanSource(s.relation)
      val catalog = new IndexCatalog(spark)
      // No index over the table: Iceberg's batch is not asked for (its partitions broadcast the table).
      if (catalog.viewsFor(source).isEmpty) return None
      val partitions = s.scan.toBatch.planInputPartitions().toSeq
      val perPartition = partitions.map(IcebergTables.partitionFiles)
      if (perPartition.exists(_.isEmpty)) return None
      val files = perPartition.flatMap(_.get)
        .groupBy(f => f.getPath.toString).values.map(_.head).toSeq
      catalog.decide(conds.reduce(And), source, files)
    } catch {
      case NonFatal(e) =>
        IndexCatalog.warnOnce(s"bloomindex: Iceberg scan not pruned (${e.getMessage})")
        None
    }
  }
}

/**
 * An Iceberg scan whose batch leaves out the tasks of `skipped` data files (normalized paths).
 * Runtime filtering (dynamic partition pruning) goes to Iceberg's scan, whose next batch is
 * pruned the same way.
 */
final case class PrunedIcebergScan(delegate: Scan, skipped: Set[String], info: PruningInfo)
    extends Scan with SupportsRuntimeV2Filtering {

  override def readSchema(): StructType = delegate.readSchema()
  override def description(): String = s"${delegate.description()} [Bloom index ${info.index}: " +
    s"files kept ${info.filesKept} of ${info.filesTotal}]"
  override def toBatch: Batch = PrunedIcebergBatch(delegate.toBatch, skipped)
  override def columnarSupportMode(): Scan.ColumnarSupportMode = delegate.columnarSupportMode()
  override def supportedCustomMetrics(): Array[CustomMetric] = delegate.supportedCustomMetrics()
  override def reportDriverMetrics(): Array[CustomTaskMetric] = delegate.reportDriverMetrics()

  override def filterAttributes(): Array[NamedReference] = delegate match {
    case r: SupportsRuntimeV2Filtering => r.filterAttributes()
    case _ => Array.empty
  }
  override def filter(predicates: Array[Predicate]): Unit = delegate match {
    case r: SupportsRuntimeV2Filtering => r.filter(predicates)
    case _ =>
  }
  // Spark 4.2 added these two with defaults, Spark 4.1 has neither: the delegate's are called by
  // name (without these overrides scalac compiles forwarders to 4.2's defaults into this class,
  // references that 4.1's jars do not resolve: make test-spark-versions' link check).
  override def pushedPredicates(): Array[Predicate] =
    SparkShim.callIfPresent(delegate, "pushedPredicates", Array.empty[Predicate])
  override def supportsIterativePushdown(): Boolean =
    SparkShim.callIfPresent(delegate, "supportsIterativePushdown", false)
}

/** Iceberg's batch, its input partitions without the skipped files' tasks. */
final case class PrunedIcebergBatch(delegate: Batch, skipped: Set[String]) extends Batch {
  override def planInputPartitions(): Array[InputPartition] =
    delegate.planInputPartitions().flatMap { p =>
      // A partition that cannot be narrowed (another Iceberg's partition class) is read whole.
      try IcebergTables.prunePartition(p, skipped) catch {
        case NonFatal(e) =>
          IndexCatalog.warnOnce(s"bloomindex: Iceberg input partition not pruned (${e.getMessage})")
          Some(p)
      }
    }
  override def createReaderFactory(): PartitionReaderFactory = delegate.createReaderFactory()
}
