package bloomindex.sql

import bloomindex.actions.IndexManager

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.StringType

/**
 * `DESCRIBE BLOOM INDEX [EXTENDED] name`: (info_name, info_value) rows, like DESCRIBE TABLE.
 * EXTENDED also lists the source and compares it with the index ([[bloomindex.actions.DescribeAction]]).
 */
case class DescribeBloomIndexCommand(name: String, extended: Boolean = false) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("info_name", StringType, nullable = false)(),
    AttributeReference("info_value", StringType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] =
    new IndexManager(spark).describe(name, extended).map { case (k, v) => Row(k, v) }
}
