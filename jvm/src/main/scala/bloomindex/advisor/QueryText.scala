package bloomindex.advisor

import bloomindex.errors.BloomIndexErrors

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.Command
import org.apache.spark.sql.execution.CommandExecutionMode

/**
 * The query that EXPLAIN BLOOM INDEX FOR, EXPLAIN BLOOM INDEX WHATIF and RECOMMEND BLOOM INDEXES
 * ... FOR take as text. `spark.sql` runs a command as soon as it is given one, so the text is
 * first analyzed with commands left unrun and refused when its plan holds one (DROP TABLE, an
 * INSERT, a CREATE ... AS SELECT, SET, another Bloom index command): these commands explain and
 * estimate, they never change anything.
 */
object QueryText {

  def dataFrame(spark: SparkSession, query: String, command: String): DataFrame = {
    val parsed = spark.sessionState.sqlParser.parsePlan(query)
    val analyzed = spark.sessionState.executePlan(parsed, CommandExecutionMode.SKIP).analyzed
    analyzed.collectFirst { case c: Command => c }.foreach(c => throw BloomIndexErrors.notAQuery(command, c.nodeName))
    spark.sql(query)
  }
}
