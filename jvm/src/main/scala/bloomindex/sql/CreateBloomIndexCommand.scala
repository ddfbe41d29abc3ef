package bloomindex.sql

import bloomindex.actions.{ColumnRequest, IndexManager}
import bloomindex.source.SourceRef

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/** `CREATE BLOOM INDEX [IF NOT EXISTS] name ON source FOR COLUMNS (...) [OPTIONS (...)]`. */
case class CreateBloomIndexCommand(
    name: String,
    source: SourceRef,
    columns: Seq[ColumnRequest],
    options: Map[String, String],
    ifNotExists: Boolean) extends LeafRunnableCommand {

  override def run(spark: SparkSession): Seq[Row] = {
    new IndexManager(spark).create(name, source, columns, options, ifNotExists)
    Seq.empty
  }
}
