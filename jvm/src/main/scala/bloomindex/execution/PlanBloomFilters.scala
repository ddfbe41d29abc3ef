package bloomindex.execution

import bloomindex.compat.SparkShim
import bloomindex.join.BloomMightContain

import org.apache.spark.sql.catalyst.expressions.{And, Expression}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{FilterExec, SparkPlan}

/**
 * Turns the `bloom_might_contain` conjuncts of a filter (from the join rule or written by
 * hand) into a [[BloomFilterExec]] right below what is left of the filter, so the bulk check
 * runs first, on the scan's batches. Only when the rest of the condition is deterministic:
 * then the order in which the conjuncts drop rows does not matter.
 */
object PlanBloomFilters extends Rule[SparkPlan] {

  override def apply(plan: SparkPlan): SparkPlan = plan.transformUp {
    case f @ FilterExec(condition, child) if condition.exists(_.isInstanceOf[BloomMightContain]) =>
      val (checks, rest) = SparkShim.conjuncts(condition).partition(_.isInstanceOf[BloomMightContain])
      if (checks.isEmpty || !rest.forall(_.deterministic)) f
      else {
        val exec = BloomFilterExec(checks.map(_.asInstanceOf[BloomMightContain]), child)
        if (rest.isEmpty) exec else FilterExec(rest.reduce[Expression](And), exec)
      }
  }
}
