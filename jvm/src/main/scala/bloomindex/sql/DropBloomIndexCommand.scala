package bloomindex.sql

import bloomindex.actions.IndexManager

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/** `DROP BLOOM INDEX [IF EXISTS] name`: the log says DELETED first, then the data goes. */
case class DropBloomIndexCommand(name: String, ifExists: Boolean) extends LeafRunnableCommand {
  override def run(spark: SparkSession): Seq[Row] = {
    new IndexManager(spark).drop(name, ifExists)
    Seq.empty
  }
}
