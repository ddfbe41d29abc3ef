package bloomindex.source.files

import scala.collection.mutable

import bloomindex.catalog.{Decision, PruningInfo, SkippedFiles, StorageCheck}
import bloomindex.compat.SparkShim
import bloomindex.pruning.CheckedSkips

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.datasources.{PartitionDirectory, PartitionSpec, PartitioningAwareFileIndex}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.datasources.v2.{BatchScanExec, FileScan}
import org.apache.spark.sql.execution.datasources.v2.csv.CSVScan
import org.apache.spark.sql.execution.datasources.v2.json.JsonScan
import org.apache.spark.sql.execution.datasources.v2.orc.OrcScan
import org.apache.spark.sql.execution.datasources.v2.parquet.ParquetScan
import org.apache.spark.sql.types.StructType

/**
 * For V2 file scans: the scan's own file index minus the files the decision skipped, tested by
 * identity (path, size, modification time) each time the scan lists (a `REFRESH TABLE` between
 * planning and running gives the scan a new listing: a skipped path rewritten since, and files
 * added since, are read). Partition values and partition pruning are the delegate's. V2 scans
 * take a `PartitioningAwareFileIndex`, hence a subclass that delegates, not a wrapper.
 */
class BloomPrunedV2FileIndex(
    spark: SparkSession,
    val delegate: PartitioningAwareFileIndex,
    val skipped: SkippedFiles,
    val info: PruningInfo,
    val check: Option[StorageCheck] = None)
  extends PartitioningAwareFileIndex(spark, Map.empty, Some(delegate.partitionSchema)) with CheckedSkips {

  def skippedNow(): IndexedSeq[FileStatus] = delegate.allFiles().filter(skipped.contains).toIndexedSeq

  override def skippedAsListedNow(): () => IndexedSeq[FileStatus] =
    CheckedSkips.inHeldListing(delegate, skipped).getOrElse(() => skippedNow())

  def skipping(skipped: SkippedFiles, info: PruningInfo): BloomPrunedV2FileIndex =
    new BloomPrunedV2FileIndex(spark, delegate, skipped, info)

  def inScan(scan: SparkPlan): Option[SparkPlan] = scan match {
    case b: BatchScanExec => b.scan match {
      case f: FileScan => BloomPrunedV2FileIndex.withIndex(f, this).map(s => SparkShim.replaceArg(b, b.scan, s))
      case _ => None
    }
    case _ => None
  }

  override def rootPaths: Seq[Path] = delegate.rootPaths

  override def partitionSpec(): PartitionSpec = delegate.partitionSpec()

  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    delegate.listFiles(partitionFilters, dataFilters).map { pd =>
      pd.copy(files = pd.files.filterNot(f => skipped.contains(f.fileStatus)))
    }.filter(_.files.nonEmpty)

  override def allFiles(): Seq[FileStatus] = delegate.allFiles().filterNot(skipped.contains)

  override protected def leafFiles: mutable.LinkedHashMap[Path, FileStatus] =
    mutable.LinkedHashMap(allFiles().map(f => f.getPath -> f): _*)

  override protected def leafDirToChildrenFiles: Map[Path, Array[FileStatus]] =
    allFiles().toArray.groupBy(_.getPath.getParent)

  override def refresh(): Unit = delegate.refresh()

  override def toString: String =
    s"BloomPrunedV2FileIndex(${info.index} v${info.version}: kept ${info.filesKept} of ${info.filesTotal} files)"
}

object BloomPrunedV2FileIndex {

  /** The scan over the kept files, or None for a scan type we do not know how to rebuild. */
  def prune(spark: SparkSession, scan: FileScan, d: Decision): Option[FileScan] =
    withIndex(scan, new BloomPrunedV2FileIndex(spark, scan.fileIndex, d.skipped, d.info, d.check))

  /** `scan` over `idx`, or None for a scan type we do not know how to rebuild. */
  def withIndex(scan: FileScan, idx: => PartitioningAwareFileIndex): Option[FileScan] = scan match {
    case p: ParquetScan => Some(p.copy(fileIndex = idx))
    case o: OrcScan => Some(o.copy(fileIndex = idx))
    case c: CSVScan => Some(c.copy(fileIndex = idx))
    case j: JsonScan => Some(j.copy(fileIndex = idx))
    case _ => None
  }
}
