package bloomindex.sql

import bloomindex.advisor.QueryText
import bloomindex.join.{BloomMightContain, InjectBloomJoinFilters}
import bloomindex.pruning.PruningReport

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LogicalPlan}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StringType

/**
 * `EXPLAIN BLOOM INDEX FOR <query>`: one row, column `plan`, with [[ExplainBloomIndexCommand.report]]
 * of the query. The query is kept as text and planned when the command runs, in the session
 * that runs it (so a temporary view a Spark Connect client registered resolves); a command is
 * refused, not run ([[QueryText]]).
 */
case class ExplainBloomIndexCommand(query: String) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(AttributeReference("plan", StringType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] = Seq(Row(ExplainBloomIndexCommand.report(QueryText.dataFrame(spark, query, "EXPLAIN BLOOM INDEX FOR"))))
}

object ExplainBloomIndexCommand {

  /**
   * What Bloom indexes do to each file scan of `df`'s optimized plan: one line per scan,
   * then a line per index that did not apply and why; per join pre-filter the index, column
   * and key it checks, and why a join got none.
   */
  def report(df: DataFrame): String = {
    val lines = PruningReport.scanLines(df)
    val joins = joinLines(df.queryExecution.optimizedPlan)
    if (lines.isEmpty && joins.isEmpty) "no file scans in this plan" else (lines ++ joins).mkString("\n")
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
