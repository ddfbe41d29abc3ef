package bloomindex.sql

import bloomindex.actions.{ColumnRequest, IndexManager}
import bloomindex.catalog.IndexCatalog
import bloomindex.errors.BloomIndexErrors
import bloomindex.source.{SourceRef, SourceResolver}

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/**
 * Databricks' `CREATE BLOOMFILTER INDEX ON [TABLE] t FOR COLUMNS (c OPTIONS (...), ...)`: one
 * index per column, named `bloomfilter_<table>_<column>` (`DROP BLOOMFILTER INDEX ... FOR
 * COLUMNS (c)` finds it by its source and column, not by name). Where that name is another
 * source's index (a table of the same name in another database) or another column's of the same
 * statement (`a b` and `a_b`), a short hash of the source and column is appended. A column of
 * the source that already has an index is refused, before any index is created.
 * `numItems` is the per-file distinct count.
 */
case class CreateBloomFilterIndexCommand(
    source: SourceRef,
    columns: Seq[ColumnRequest],
    options: Map[String, String]) extends LeafRunnableCommand {

  override def run(spark: SparkSession): Seq[Row] = {
    val manager = new IndexManager(spark)
    val spec = SourceResolver.resolve(spark, source)
    val existing = new IndexCatalog(spark).indexesOn(spec, inside = false)
    val taken = scala.collection.mutable.Set[String]()
    // Validate every column and choose every name before creating any index.
    val plans = columns.map { c =>
      existing.find(_.spec.columns.exists(_.name.equalsIgnoreCase(c.name))).foreach { e =>
        throw BloomIndexErrors.filterIndexAlreadyExists(c.name, spec.display, e.spec.name)
      }
      val name = BloomFilterIndexNames.candidates(spec, c.name).find(n => !taken.contains(n) && !manager.exists(n))
        .getOrElse(throw BloomIndexErrors.filterIndexAlreadyExists(c.name, spec.display, BloomFilterIndexNames.forColumn(spec, c.name)))
      taken += name
      manager.plan(name, spec, Seq(c), options)
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

  /** [[forColumn]], then the same with a hash of the source and the column (the first 119 characters and 8 hex digits). */
  def candidates(source: bloomindex.log.SourceSpec, column: String): Seq[String] = {
    val base = forColumn(source, column)
    val crc = new java.util.zip.CRC32()
    crc.update(s"${source.display}\u0000$column".getBytes(java.nio.charset.StandardCharsets.UTF_8))
    Seq(base, f"${base.take(119)}_${crc.getValue}%08x")
  }
}
