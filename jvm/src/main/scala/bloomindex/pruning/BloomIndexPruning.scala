package bloomindex.pruning

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.FILTER

/**
 * Skips the files of a scan whose Bloom filters prove the scan's filter cannot match: the
 * optimizer's entry point. Runs as a pre-CBO rule, once, after the operator optimizations have
 * pushed filters down onto the scans, and before statistics are computed from the file index;
 * each `Filter` right on a leaf is handed to the leaf's provider ([[ScanPruner.pruneFiltered]]).
 * Scans whose node exists only later are pruned by [[BloomIndexPlanning]] (planner) or
 * [[PlannedScanPruning]] (physical plan), with the same decision.
 */
class BloomIndexPruning(spark: SparkSession) extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!spark.sessionState.conf.getConf(BloomIndexSQLConf.PRUNING_ENABLED)) plan
    else plan.transformWithPruning(_.containsPattern(FILTER)) {
      case f @ Filter(condition, leaf) if leaf.children.isEmpty && condition.deterministic =>
        ScanPruner.of(leaf).flatMap(_.pruneFiltered(spark, f)).getOrElse(f)
    }
}

/**
 * The planner's entry point: scans whose node only exists after the optimizer's push-down (V2
 * file scans, table formats that plan their own files) are planned with their files narrowed
 * by their provider ([[ScanPruner.planPruned]]). Extra strategies are tried before Spark's; a
 * provider hands the pruned plan to Spark's own strategy, and what none handles is Spark's.
 */
class BloomIndexPlanning(spark: SparkSession) extends org.apache.spark.sql.execution.SparkStrategy {

  override def apply(plan: LogicalPlan): Seq[org.apache.spark.sql.execution.SparkPlan] =
    ScanPruner.all.iterator.map(_.planPruned(spark, plan)).find(_.nonEmpty).getOrElse(Nil)
}

/**
 * The physical plan's entry point, before columnar transitions (every plan, adaptive or not):
 * scans a format plans with its own rules and strategies (which match its own file index
 * classes) are narrowed once planned, by their provider ([[ScanPruner.prunePlanned]]).
 */
class PlannedScanPruning(spark: SparkSession) extends Rule[org.apache.spark.sql.execution.SparkPlan] {

  override def apply(plan: org.apache.spark.sql.execution.SparkPlan): org.apache.spark.sql.execution.SparkPlan =
    plan.transformUp {
      case s if s.children.isEmpty => ScanPruner.all.iterator.flatMap(_.prunePlanned(spark, s)).nextOption().getOrElse(s)
    }
}
