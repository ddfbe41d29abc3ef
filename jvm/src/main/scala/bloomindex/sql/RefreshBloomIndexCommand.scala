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

/** `OPTIMIZE BLOOM INDEX name`; one row, `log_version`: the index's log version after it (unchanged when already compact). */
case class OptimizeBloomIndexCommand(name: String) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(AttributeReference("log_version", LongType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] = Seq(Row(new IndexManager(spark).optimize(name).version))
}

/**
 * `VACUUM BLOOM INDEX name [RETAIN n HOURS]`; one row: `folders_deleted`, `bytes_deleted`
 * (the data folders of versions replaced longer ago than the retention, and leftovers of failed
 * builds), `log_entries_deleted` (the entries before a version replaced longer ago than that).
 */
case class VacuumBloomIndexCommand(name: String, retainHours: Option[Double]) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("folders_deleted", LongType, nullable = false)(),
    AttributeReference("bytes_deleted", LongType, nullable = false)(),
    AttributeReference("log_entries_deleted", LongType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] = {
    val (folders, bytes, entries) = new IndexManager(spark).vacuum(name, retainHours.map(h => (h * 3600 * 1000).toLong))
    Seq(Row(folders, bytes, entries))
  }
}
