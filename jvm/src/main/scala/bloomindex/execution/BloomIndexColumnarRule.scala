package bloomindex.execution

import bloomindex.pruning.{DeltaScanPruning, MarkPrunedScans}

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{ColumnarRule, SparkPlan}

/**
 * The columnar hook: before transitions, prunes Delta Lake scans ([[DeltaScanPruning]]), marks
 * pruned scans ([[MarkPrunedScans]]) and plans Bloom filter checks as [[BloomFilterExec]]
 * ([[PlanBloomFilters]]).
 */
class BloomIndexColumnarRule(spark: SparkSession) extends ColumnarRule {
  private val deltaPruning = new DeltaScanPruning(spark)
  override def preColumnarTransitions: Rule[SparkPlan] =
    plan => PlanBloomFilters(MarkPrunedScans(deltaPruning(plan)))
}
