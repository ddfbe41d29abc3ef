package bloomindex.source

import bloomindex.log.ColumnDecoding

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.execution.datasources.FileIndex
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

/**
 * A scan of files as the index catalog sees it, whatever kind of source it comes from: who it
 * is (its provider, table name, root folders), and how it decodes its files (format, reader
 * options, data schema). Made by a [[SourceProvider]]; the scan's files are listed by the
 * caller, which knows which partition filters apply.
 *
 * @param index the scan's file index (unwrapped from our own pruning wrappers)
 * @param tableCreated when a catalog table is scanned, its creation time (a table dropped and
 *                     created again under the same name is another table)
 */
final case class ScanSource(
    provider: SourceProvider,
    table: Option[String],
    format: String,
    roots: Seq[Path],
    options: Map[String, String],
    dataSchema: StructType,
    index: FileIndex,
    tableCreated: Option[Long] = None) {

  def display: String = table.getOrElse(roots.headOption.map(_.toString).getOrElse("?"))

  /** Who the scanned source is, as [[SourceProvider.sameSource]] compares sources. */
  def identity: SourceIdentity =
    SourceIdentity.of(provider.name, table, roots.map(_.toString))

  /** How this scan decodes `column` (its exact name) under `conf`; None when it has no such column. */
  def decoding(conf: SQLConf, column: String): Option[ColumnDecoding] =
    dataSchema.fields.find(_.name == column).map { f =>
      val d = provider.decoding(conf, this, f)
      d.copy(physical = d.physical ++ tableCreated.map(DecodingContext.TableCreated -> _.toString))
    }

  /** Whether the scan's listing may be older than the files it names ([[SourceProvider.listingMayBeStale]]). */
  def listingMayBeStale: Boolean = provider.listingMayBeStale

  /** Every file the scan may read, whatever a query's filters (for coverage checks). */
  def allFiles(): Seq[org.apache.hadoop.fs.FileStatus] = index.listFiles(Nil, Nil).flatMap(_.files).map(_.fileStatus)
}
