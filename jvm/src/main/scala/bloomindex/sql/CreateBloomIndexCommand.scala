package bloomindex.sql

import bloomindex.actions.{ColumnRequest, IndexManager}
import bloomindex.source.{SourceRef, SourceResolver}

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.BooleanType

/**
 * `CREATE BLOOM INDEX [IF NOT EXISTS] name ON {source | VIEW v | LOCATION 'path' USING format}
 * FOR COLUMNS (...) [OPTIONS (...)]`; one row, `created`: false when the index existed and
 * IF NOT EXISTS was given.
 *
 * `ON VIEW v` indexes the files view `v` reads directly, as Python's `create()` does for a
 * DataFrame (the index records those files' table or path and format, not the view): how a
 * Spark Connect client, which has no DataFrame on the server, indexes one. `ON LOCATION
 * 'path' USING format` is Python's `create(path, source_format=format)` (`source` holds the
 * path, `format` the format).
 */
case class CreateBloomIndexCommand(
    name: String,
    source: SourceRef,
    columns: Seq[ColumnRequest],
    options: Map[String, String],
    ifNotExists: Boolean,
    view: Boolean = false,
    format: Option[String] = None) extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(AttributeReference("created", BooleanType, nullable = false)())

  override def run(spark: SparkSession): Seq[Row] = {
    val manager = new IndexManager(spark)
    val created = if (!view && format.isEmpty) manager.create(name, source, columns, options, ifNotExists)
    else {
      manager.checkName(name)
      val (spec, frame) = format match {
        case Some(f) => SourceResolver.resolvePathFrame(spark, f.toLowerCase(java.util.Locale.ROOT), source.parts.head)
        case None =>
          SourceResolver.resolveDataFrameFrame(spark.table(source.sql))
      }
      val plan = manager.plan(name, spec, columns, options, Some(frame))
      manager.createFromSpec(plan, ifNotExists, Some(frame))
    }
    Seq(Row(created.isDefined))
  }
}
