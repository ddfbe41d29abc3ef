package bloomindex.source

import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.datasources.{FileIndex, HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation, DataSourceV2ScanRelation, FileScan, FileTable}
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.{DataType, StructField, StructType}

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
