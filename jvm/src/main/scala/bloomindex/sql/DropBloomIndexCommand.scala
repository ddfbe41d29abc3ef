package bloomindex.sql

import bloomindex.actions.IndexManager

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.BooleanType

/**
 * `DROP BLOOM INDEX [IF EXISTS] name`: the log says DELETED first, then the data goes. One row,
 * `dropped`: false when the index did not exist and IF EXISTS was given.
 */
case class DropBloomIndexCommand(name: String, ifExists: Boolean) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(AttributeReference("dropped", BooleanType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] = Seq(Row(new IndexManager(spark).drop(name, ifExists)))
}
