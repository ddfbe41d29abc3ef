package bloomindex.sql

import bloomindex.actions.{ColumnRequest, IndexManager}
import bloomindex.source.{SourceRef, SourceResolver}

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.BooleanType

/**
 * `CREATE BLOOM INDEX [IF NOT EXISTS] name ON [VIEW] source FOR COLUMNS (...) [OPTIONS (...)]`;
 * one row, `created`: false when the index existed and IF NOT EXISTS was given.
 *
 * `ON VIEW v` indexes the files view `v` reads directly, as Python's `create()` does for a
 * DataFrame (the index records those files' table or path and format, not the view): how a
 * Spark Connect client, which has no DataFrame on the server, indexes one.
 */
case class CreateBloomIndexCommand(
    name: String,
    source: SourceRef,
    columns: Seq[ColumnRequest],
    options: Map[String, String],
    ifNotExists: Boolean,
    view: Boolean = false) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(AttributeReference("created", BooleanType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] = {
    val manager = new IndexManager(spark)
    val created = if (!view) manager.create(name, source, columns, options, ifNotExists)
    else {
      manager.checkName(name)
      val frame = spark.table(source.sql)
      val plan = manager.plan(name, SourceResolver.resolveDataFrame(frame), columns, options, Some(frame))
      manager.createFromSpec(plan, ifNotExists, Some(frame))
    }
    Seq(Row(created.isDefined))
  }
}
