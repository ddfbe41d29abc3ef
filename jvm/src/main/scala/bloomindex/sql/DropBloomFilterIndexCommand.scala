package bloomindex.sql

import java.util.Locale

import bloomindex.actions.IndexManager
import bloomindex.catalog.IndexCatalog
import bloomindex.errors.BloomIndexErrors
import bloomindex.source.{SourceRef, SourceResolver}

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/**
 * Databricks' `DROP BLOOMFILTER INDEX ON [TABLE] t [FOR COLUMNS (c, ...)]`: drops the Bloom
 * indexes on `t` (all of them, or those of the listed columns). An index over several columns
 * that includes a listed one is refused rather than silently dropped whole.
 */
case class DropBloomFilterIndexCommand(source: SourceRef, columns: Option[Seq[String]]) extends LeafRunnableCommand {

  override def run(spark: SparkSession): Seq[Row] = {
    val manager = new IndexManager(spark)
    val spec = SourceResolver.resolve(spark, source)
    // Not an index over a folder the source lies inside (one that answers reads of a partition's
    // folder): DROP ... ON a partition's folder does not drop the whole folder's index.
    val indexes = new IndexCatalog(spark).indexesOn(spec, inside = false)
    val targets = columns match {
      case None => indexes
      case Some(cols) =>
        val wanted = cols.map(_.toLowerCase(Locale.ROOT)).toSet
        val hits = indexes.filter(_.spec.columns.exists(c => wanted.contains(c.name.toLowerCase(Locale.ROOT))))
        hits.find(_.spec.columns.size > 1).foreach { e =>
          throw BloomIndexErrors.filterIndexMultiColumn(e.spec.name, e.spec.columns.map(_.name))
        }
        val covered = hits.flatMap(_.spec.columns.map(_.name.toLowerCase(Locale.ROOT))).toSet
        (wanted -- covered).headOption.foreach(c =>
          throw BloomIndexErrors.filterIndexNotFound(s"Column '$c' of ${spec.display}"))
        hits
    }
    if (targets.isEmpty) throw BloomIndexErrors.filterIndexNotFound(spec.display)
    targets.foreach(e => manager.drop(e.spec.name, ifExists = true))
    Seq.empty
  }
}
