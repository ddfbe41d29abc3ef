package bloomindex.execution

import bloomindex.pruning.{MarkPrunedScans, PlannedScanPruning}

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{ColumnarRule, SparkPlan}

/**
 * The columnar hook: before transitions, prunes the scans formats plan themselves ([[PlannedScanPruning]]), marks
 * pruned scans ([[MarkPrunedScans]]) and plans Bloom filter checks as [[BloomFilterExec]]
 * ([[PlanBloomFilters]]), and guards the indexed sides of join filters whose filtered side Spark keeps
 * between runs ([[GuardJoinFilterSides]]).
 */
class BloomIndexColumnarRule(spark: SparkSession) extends ColumnarRule {
  private val plannedPruning = new PlannedScanPruning(spark)
  override def preColumnarTransitions: Rule[SparkPlan] =
    plan => GuardJoinFilterSides(PlanBloomFilters(MarkPrunedScans(plannedPruning(plan))))
}
