package bloomindex.sql

import bloomindex.actions.IndexManager

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/** `REFRESH BLOOM INDEX name [INCREMENTAL | FULL]`. */
case class RefreshBloomIndexCommand(name: String, full: Boolean) extends LeafRunnableCommand {
  override def run(spark: SparkSession): Seq[Row] = {
    new IndexManager(spark).refresh(name, full)
    Seq.empty
  }
}
