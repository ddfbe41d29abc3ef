package bloomindex.sql

import bloomindex.actions.IndexManager

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.LongType

/** `REFRESH BLOOM INDEX name [INCREMENTAL | FULL]`; one row, `log_version`: the index's new log version. */
case class RefreshBloomIndexCommand(name: String, full: Boolean) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(AttributeReference("log_version", LongType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] = Seq(Row(new IndexManager(spark).refresh(name, full).version))
}

/** `ALTER BLOOM INDEX name SET OPTIONS (...)`; one row, `log_version`: the index's new log version. */
case class AlterBloomIndexCommand(name: String, options: Map[String, String]) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(AttributeReference("log_version", LongType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] = Seq(Row(new IndexManager(spark).alter(name, options).version))
}
