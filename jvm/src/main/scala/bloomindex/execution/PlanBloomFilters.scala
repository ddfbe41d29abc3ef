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
 * then the order in which the conjuncts drop rows does not matter (otherwise the join rule's
 * checks are dropped, and checks written by hand run row by row in the filter), nor does it
 * for a key that fails on a row the rest drops: the operator lets such a row through.
 */
object PlanBloomFilters extends Rule[SparkPlan] {

  override def apply(plan: SparkPlan): SparkPlan = plan.transformUp {
    case f @ FilterExec(condition, child) if condition.exists(_.isInstanceOf[BloomMightContain]) =>
      val all = SparkShim.conjuncts(condition)
      val (checks, rest) = all.partition(_.isInstanceOf[BloomMightContain])
      if (checks.isEmpty) f
      else if (!rest.forall(_.deterministic)) {
        // The join rule's checks run only as the operator, which tests when the plan runs that
        // the indexed side still lists the files the filter holds: here they are left out.
        val kept = all.filterNot {
          case b: BloomMightContain => b.coverage.isDefined
          case _ => false
        }
        if (kept.size == all.size) f else if (kept.isEmpty) child else FilterExec(kept.reduce[Expression](And), child)
      } else {
        val exec = BloomFilterExec(checks.map(_.asInstanceOf[BloomMightContain]), child)
        if (rest.isEmpty) exec else FilterExec(rest.reduce[Expression](And), exec)
      }
  }
}
