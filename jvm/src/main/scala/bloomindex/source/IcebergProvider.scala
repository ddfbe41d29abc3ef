package bloomindex.source

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.connector.catalog.Table
import org.apache.spark.sql.connector.read.Scan
import org.apache.spark.sql.execution.datasources.{FileIndex, PartitionDirectory}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation, DataSourceV2ScanRelation}
import org.apache.spark.sql.types.StructType

/**
 * Apache Iceberg tables, recognised by class name: nothing here names an Iceberg type, so this
 * object loads (and the catalog asks it about every scan) without Iceberg on the class path.
 * Everything that touches Iceberg's API is in [[IcebergTables]], reached only once a plan
 * holds an Iceberg table.
 */
object IcebergFiles {
  val Format = "iceberg"

  private val SparkTableClass = "org.apache.iceberg.spark.source.SparkTable"
  /** The scan of a plain read (Iceberg's other scans: row-level rewrites, changelogs, ...). */
  private val BatchQueryScanClass = "org.apache.iceberg.spark.source.SparkBatchQueryScan"

  private def isA(o: AnyRef, name: String): Boolean = {
    var c: Class[_] = o.getClass
    while (c != null) {
      if (c.getName == name) return true
      c = c.getSuperclass
    }
    false
  }

  def isIcebergTable(t: Table): Boolean = t != null && isA(t, SparkTableClass)

  /** A plain read of an Iceberg table (not a copy-on-write rewrite's scan, not a changelog). */
  def isBatchQueryScan(s: Scan): Boolean = s != null && s.getClass.getName == BatchQueryScanClass
}

/** Iceberg tables read through Iceberg's Spark catalog or its `iceberg` data source. */
object IcebergProvider extends SourceProvider {

  def describe(plan: LogicalPlan): Option[ScanSource] = plan match {
    case r: DataSourceV2Relation if IcebergFiles.isIcebergTable(r.table) => Some(IcebergTables.scanSource(r))
    case s: DataSourceV2ScanRelation if IcebergFiles.isIcebergTable(s.relation.table) =>
      Some(IcebergTables.scanSource(s.relation))
    case _ => None
  }
}

/**
 * The data files of one Iceberg snapshot as a file index (listed on first use): what a scan's
 * coverage checks (join filters, `bloom_might_contain`) compare an index with. Iceberg data
 * files are immutable and identified by path and size; they carry no modification time (0).
 */
final class IcebergFileIndex(root: Path, list: () => Seq[SourceFile]) extends FileIndex {
  private lazy val statuses: Array[FileStatus] =
    list().map(f => new FileStatus(f.size, false, 1, 0L, f.modificationTime, new Path(f.path))).toArray

  override def rootPaths: Seq[Path] = Seq(root)
  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    Seq(PartitionDirectory(InternalRow.empty, statuses))
  override def inputFiles: Array[String] = statuses.map(_.getPath.toString)
  override def refresh(): Unit = ()
  override def sizeInBytes: Long = statuses.map(_.getLen).sum
  override def partitionSchema: StructType = new StructType()
}
