package bloomindex.source

import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import bloomindex.log.ColumnDecoding

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.{FileIndex, HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation, DataSourceV2ScanRelation, FileScan, FileTable}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.{DataType, StructField, StructType}

/**
 * A scan of files as the index catalog sees it, whatever kind of source it comes from: who it
 * is (table name, root folders), and how it decodes its files (format, reader options, data
 * schema). Made by a [[SourceProvider]]; the scan's files are listed by the caller, which knows
 * which partition filters apply.
 *
 * @param index the scan's file index (unwrapped from our own pruning wrappers)
 * @param tableCreated when a catalog table is scanned, its creation time (a table dropped and
 *                     created again under the same name is another table)
 */
final case class ScanSource(
    kind: String,
    table: Option[String],
    format: String,
    roots: Seq[Path],
    options: Map[String, String],
    dataSchema: StructType,
    index: FileIndex,
    tableCreated: Option[Long] = None) {

  def display: String = table.getOrElse(roots.headOption.map(_.toString).getOrElse("?"))

  def isDelta: Boolean = format == DeltaFiles.Format

  def isIceberg: Boolean = format == IcebergFiles.Format

  /** How this scan decodes `column` (its exact name) under `conf`; None when it has no such column. */
  def decoding(conf: SQLConf, column: String): Option[ColumnDecoding] =
    dataSchema.fields.find(_.name == column).map { f =>
      val d = DecodingContext.column(conf, format, options, f)
      d.copy(physical = d.physical ++ DecodingContext.mapping(conf, format, options, dataSchema, f.name) ++
        tableCreated.map(DecodingContext.TableCreated -> _.toString))
    }

  /**
   * Whether the scan's listing may be older than the files it names: a file index of plain
   * files keeps the listing it took (a catalog table's for the session), while a file may be
   * rewritten in place since. Delta and Iceberg list a snapshot of immutable files from their logs.
   */
  def listingMayBeStale: Boolean = !isDelta && !isIceberg

  /** Every file the scan may read, whatever a query's filters (for coverage checks). */
  def allFiles(): Seq[org.apache.hadoop.fs.FileStatus] = index.listFiles(Nil, Nil).flatMap(_.files).map(_.fileStatus)
}

/**
 * One kind of source: turns the plan nodes of its scans into [[ScanSource]]s. A new table
 * format is one more provider (and its build-side reading in [[bloomindex.source.SourceResolver]]).
 */
trait SourceProvider {
  /** The source a logical leaf reads, if it is of this provider's kind. */
  def describe(plan: LogicalPlan): Option[ScanSource]
}

/** Plain file sources read through Spark's V1 path (`HadoopFsRelation`). */
object FileRelationProvider extends SourceProvider {

  def formatOf(rel: HadoopFsRelation): String = rel.fileFormat match {
    case r: DataSourceRegister => r.shortName().toLowerCase(Locale.ROOT)
    case other => other.getClass.getName
  }

  def describe(plan: LogicalPlan): Option[ScanSource] = plan match {
    case l @ LogicalRelation(rel: HadoopFsRelation, _, table, _, _) if !DeltaFiles.isDeltaIndex(rel.location) =>
      Some(of(rel, table))
    case _ => None
  }

  def of(rel: HadoopFsRelation, table: Option[CatalogTable]): ScanSource = {
    val index = FileIndexes.unwrap(rel.location)
    ScanSource("files", table.map(_.identifier.unquotedString), formatOf(rel), index.rootPaths, rel.options,
      rel.dataSchema, index, table.map(_.createTime))
  }
}

/** File sources read through Spark's DataSource V2 path (`FileTable`, `FileScan`). */
object FileTableProvider extends SourceProvider {

  def describe(plan: LogicalPlan): Option[ScanSource] = plan match {
    case r @ DataSourceV2Relation(t: FileTable, _, _, _, _, _) => Some(of(r, t.dataSchema, t.fileIndex))
    // Type patterns, not the case classes' extractors: their arity differs between Spark versions.
    case s: DataSourceV2ScanRelation => s.scan match {
      case scan: FileScan => ofScan(s.relation, scan)
      case _ => None
    }
    case _ => None
  }

  def ofScan(r: DataSourceV2Relation, scan: FileScan): Option[ScanSource] =
    Some(of(r, scan.dataSchema, FileIndexes.unwrap(scan.fileIndex)))

  private def of(r: DataSourceV2Relation, dataSchema: StructType, index: FileIndex): ScanSource = {
    val format = r.table match {
      case t: FileTable => t.formatName.toLowerCase(Locale.ROOT)
      case other => other.name()
    }
    ScanSource("files (V2)", r.identifier.map(_.toString), format, index.rootPaths,
      r.options.asCaseSensitiveMap().asScala.toMap, dataSchema, index)
  }
}

/**
 * Delta Lake tables. Delta hides column mapping from the relation's schema, so the columns'
 * physical names and field ids come from the table's own metadata, which Delta's file index
 * carries (read by reflection: this code has no compile-time dependency on Delta). Delta reads
 * its Parquet files with its own settings: reader options do not change values.
 */
object DeltaProvider extends SourceProvider {

  def describe(plan: LogicalPlan): Option[ScanSource] = plan match {
    case LogicalRelation(rel: HadoopFsRelation, _, table, _, _) if DeltaFiles.isDeltaIndex(rel.location) =>
      Some(of(rel, table.map(_.identifier.unquotedString)))
    case _ => None
  }

  def ofScan(s: FileSourceScanExec): ScanSource = of(s.relation, s.tableIdentifier.map(_.unquotedString))

  def of(rel: HadoopFsRelation, table: Option[String]): ScanSource = {
    val index = FileIndexes.unwrap(rel.location)
    ScanSource("delta", table, DeltaFiles.Format, index.rootPaths, Map.empty,
      withPhysical(rel.dataSchema, index), index)
  }

  /** `schema` with each field's column mapping metadata as the table's metadata records it. */
  def withPhysical(schema: StructType, index: FileIndex): StructType = {
    val table = tableSchema(index)
    StructType(schema.fields.map { f =>
      table.flatMap(_.fields.find(_.name == f.name)).map(t => f.copy(metadata = t.metadata)).getOrElse(f)
    })
  }

  private def tableSchema(index: FileIndex): Option[StructType] =
    try {
      val metadata = index.getClass.getMethod("metadata").invoke(index)
      val json = metadata.getClass.getMethod("schemaString").invoke(metadata).asInstanceOf[String]
      Some(DataType.fromJson(json).asInstanceOf[StructType])
    } catch { case NonFatal(_) => None }

  /** The field as Delta stores it, for the build (physical identity recorded in the log). */
  def fields(schema: StructType, index: FileIndex, names: Seq[String]): Seq[StructField] = {
    val s = withPhysical(schema, index)
    names.flatMap(n => s.fields.find(_.name == n))
  }
}

/** Delta Lake's file indexes, recognised without Delta on the classpath. */
object DeltaFiles {
  val Format = "delta"

  /** Delta's file indexes: `TahoeLogFileIndex`, `PreparedDeltaFileIndex`, ... all extend it. */
  private val TahoeFileIndexClass = "org.apache.spark.sql.delta.files.TahoeFileIndex"

  def isDeltaIndex(index: FileIndex): Boolean = {
    var c: Class[_] = index.getClass
    while (c != null) {
      if (c.getName == TahoeFileIndexClass) return true
      c = c.getSuperclass
    }
    false
  }
}

/** The providers, in the order the catalog asks them. */
object SourceProviders {
  val all: Seq[SourceProvider] = Seq(DeltaProvider, FileRelationProvider, FileTableProvider, IcebergProvider)

  def describe(plan: LogicalPlan): Option[ScanSource] = all.iterator.flatMap(_.describe(plan)).toSeq.headOption
}

/** A file index that narrows another's listing (our pruning wrappers). */
trait WrappingFileIndex extends FileIndex {
  def delegate: FileIndex
}

/** Our own wrappers around a scan's file index, seen through. */
object FileIndexes {
  def unwrap(index: FileIndex): FileIndex = index match {
    case b: WrappingFileIndex => unwrap(b.delegate)
    case other => other
  }
}
