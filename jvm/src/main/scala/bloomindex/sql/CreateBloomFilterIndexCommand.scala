package bloomindex.sql

import bloomindex.actions.{ColumnRequest, IndexManager}
import bloomindex.errors.BloomIndexErrors
import bloomindex.source.{SourceRef, SourceResolver}

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/**
 * Databricks' `CREATE BLOOMFILTER INDEX ON [TABLE] t FOR COLUMNS (c OPTIONS (...), ...)`: one
 * index per column, named `bloomfilter_<table>_<column>`, so that `DROP BLOOMFILTER INDEX ...
 * FOR COLUMNS (c)` drops exactly that column's. `numItems` is the per-file distinct count.
 */
case class CreateBloomFilterIndexCommand(
    source: SourceRef,
    columns: Seq[ColumnRequest],
    options: Map[String, String]) extends LeafRunnableCommand {

  override def run(spark: SparkSession): Seq[Row] = {
    val manager = new IndexManager(spark)
    val spec = SourceResolver.resolve(spark, source)
    // Validate every column before creating any index.
    val plans = columns.map { c =>
      val name = BloomFilterIndexNames.forColumn(spec, c.name)
      manager.plan(name, spec, Seq(c), options)
    }
    plans.foreach { p =>
      if (manager.exists(p.name)) {
        throw BloomIndexErrors.filterIndexAlreadyExists(p.columns.head.name, spec.display, p.name)
      }
    }
    plans.foreach(p => manager.createFromSpec(p, ifNotExists = false))
    Seq.empty
  }
}

object BloomFilterIndexNames {
  def forColumn(source: bloomindex.log.SourceSpec, column: String): String = {
    val table = source.table.getOrElse(source.paths.mkString("_")).split('.').last
    s"bloomfilter_${table}_$column".replaceAll("[^A-Za-z0-9_-]", "_").take(128)
  }
}
