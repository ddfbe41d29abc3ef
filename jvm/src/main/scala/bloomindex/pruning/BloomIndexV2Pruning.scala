package bloomindex.pruning

import bloomindex.catalog.{Decision, IndexCatalog}
import bloomindex.compat.SparkShim
import bloomindex.source.FileTableProvider

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.expressions.{And, Expression}
import org.apache.spark.sql.catalyst.planning.PhysicalOperation
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation, DataSourceV2ScanRelation, DataSourceV2Strategy, FileScan}

/**
 * File pruning for V2 file scans. Their `DataSourceV2ScanRelation` only exists after the
 * optimizer's scan push-down, which comes after the pre-CBO batch where [[BloomIndexPruning]]
 * runs; so this is a planner strategy: for a filtered V2 file scan it makes the same decision,
 * gives the scan a [[BloomPrunedV2FileIndex]] over the kept files, and lets Spark's own
 * `DataSourceV2Strategy` plan the result. Anything it does not handle it leaves to Spark.
 */
class BloomIndexV2Pruning(spark: SparkSession) extends SparkStrategy {

  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    // A type pattern: DataSourceV2ScanRelation's arity differs between Spark versions (SparkShim).
    case PhysicalOperation(_, filters, s: DataSourceV2ScanRelation) if s.scan.isInstanceOf[FileScan] =>
      val scan = s.scan.asInstanceOf[FileScan]
      BloomIndexV2Pruning.decision(spark, filters, s.relation, scan)
        .filter(_.skipped.nonEmpty)
        .flatMap(d => BloomPrunedV2FileIndex.prune(spark, scan, d))
        .map { newScan =>
          val pruned = plan.transformUp { case rel: DataSourceV2ScanRelation if rel eq s => SparkShim.withScan(s, newScan) }
          // Sessions that run strategies are classic ones.
          new DataSourceV2Strategy(spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession]).apply(pruned)
        }
        .getOrElse(Nil)
    case _ => Nil
  }
}

object BloomIndexV2Pruning {

  /**
   * What the indexes decide for a V2 file scan under `filters` (None: no filter, pruning off, an
   * already pruned scan, or no index over the source): the strategy's decision, and what
   * `BloomIndex.explain` reports for the scan.
   */
  def decision(spark: SparkSession, filters: Seq[Expression], r: DataSourceV2Relation, scan: FileScan): Option[Decision] =
    if (filters.isEmpty || !filters.forall(_.deterministic) || !spark.sessionState.conf.getConf(BloomIndexSQLConf.PRUNING_ENABLED) ||
        scan.fileIndex.isInstanceOf[BloomPrunedV2FileIndex]) None
    else {
      val files = scan.fileIndex.listFiles(scan.partitionFilters, scan.dataFilters).flatMap(_.files).map(_.fileStatus)
      FileTableProvider.ofScan(r, scan).flatMap(source => new IndexCatalog(spark).decide(filters.reduce(And), source, files))
    }
}
