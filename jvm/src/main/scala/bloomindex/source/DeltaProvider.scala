package bloomindex.source

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.{FileIndex, HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.types.{DataType, StructField, StructType}

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
