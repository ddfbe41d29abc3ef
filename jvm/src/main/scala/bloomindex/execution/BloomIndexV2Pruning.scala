package bloomindex.execution

import bloomindex.catalog.{IndexCatalog, PruningInfo}
import bloomindex.config.BloomIndexConf
import bloomindex.optimizer.{BloomIndexPruning, BloomPrunedV2FileIndex}
import bloomindex.source.FileTableProvider

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{And, Expression}
import org.apache.spark.sql.catalyst.planning.PhysicalOperation
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.trees.TreeNodeTag
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2ScanRelation, DataSourceV2Strategy, FileScan}

/**
 * File pruning for V2 file scans. Their `DataSourceV2ScanRelation` only exists after the
 * optimizer's scan push-down, which comes after the pre-CBO batch where [[BloomIndexPruning]]
 * runs; so this is a planner strategy: for a filtered V2 file scan it makes the same decision,
 * gives the scan a [[BloomPrunedV2FileIndex]] over the kept files, and lets Spark's own
 * `DataSourceV2Strategy` plan the result. Anything it does not handle it leaves to Spark.
 */
class BloomIndexV2Pruning(spark: SparkSession) extends SparkStrategy {

  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case PhysicalOperation(_, filters, s @ DataSourceV2ScanRelation(r, scan: FileScan, _, _, _, _))
        if filters.nonEmpty && filters.forall(_.deterministic) && BloomIndexConf.pruningEnabled(spark) &&
          !scan.fileIndex.isInstanceOf[BloomPrunedV2FileIndex] =>
      val condition: Expression = filters.reduce(And)
      val files = scan.fileIndex.listFiles(scan.partitionFilters, scan.dataFilters).flatMap(_.files).map(_.fileStatus)
      val decision = FileTableProvider.ofScan(r, scan).flatMap(source => new IndexCatalog(spark).decide(condition, source, files))
      // What was decided, kept on the logical scan for BloomIndex.explain (even when nothing is skipped).
      decision.foreach(d => s.setTagValue(BloomIndexV2Pruning.InfoTag, d.info))
      decision
        .filter(_.skipped.nonEmpty)
        .flatMap(d => BloomPrunedV2FileIndex.prune(spark, scan, d))
        .map { newScan =>
          val pruned = plan.transformUp { case rel: DataSourceV2ScanRelation if rel eq s => s.copy(scan = newScan) }
          // Sessions that run strategies are classic ones.
          new DataSourceV2Strategy(spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession]).apply(pruned)
        }
        .getOrElse(Nil)
    case _ => Nil
  }
}

object BloomIndexV2Pruning {
  /** The decision made for a V2 scan, on its logical node. */
  val InfoTag: TreeNodeTag[PruningInfo] = TreeNodeTag[PruningInfo]("bloomindex.v2.pruningInfo")
}
