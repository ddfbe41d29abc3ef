package bloomindex.source.iceberg

import scala.util.control.NonFatal

import bloomindex.catalog.{IndexCatalog, PruningInfo, SkippedFiles, StorageCheck}
import bloomindex.compat.{RuntimeFilteringForwarders, SparkShim}
import bloomindex.pruning.CheckedSkips

import org.apache.hadoop.fs.FileStatus
import org.apache.spark.sql.connector.expressions.NamedReference
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory, Scan, SupportsRuntimeV2Filtering}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.apache.spark.sql.types.StructType


/**
 * An Iceberg scan whose batch leaves out the tasks of `skipped` data files (normalized paths).
 * Runtime filtering (dynamic partition pruning) goes to Iceberg's scan, whose next batch is
 * pruned the same way. `check`: what a run of the plan must find as the decision found it
 * ([[bloomindex.pruning.RecheckedScan]]); for an Iceberg snapshot, whose files are never
 * rewritten in place, only the session's `lower()` folding ([[StorageCheck.foldingChanged]]).
 * Spark plans the batch's partitions while it plans the query (Iceberg's scans report their
 * columnar reads per partition), so a run that finds the folding changed reads a copy.
 */
final case class PrunedIcebergScan(delegate: Scan, skipped: SkippedFiles, info: PruningInfo,
    check: Option[StorageCheck] = None) extends Scan with RuntimeFilteringForwarders with CheckedSkips {

  override def readSchema(): StructType = delegate.readSchema()
  override def description(): String = s"${delegate.description()} [Bloom index ${info.index}: " +
    s"files kept ${info.filesKept} of ${info.filesTotal}]"
  override def toBatch: Batch = PrunedIcebergBatch(delegate.toBatch, skipped)
  override def columnarSupportMode(): Scan.ColumnarSupportMode = delegate.columnarSupportMode()
  override def supportedCustomMetrics(): Array[CustomMetric] = delegate.supportedCustomMetrics()
  override def reportDriverMetrics(): Array[CustomTaskMetric] = delegate.reportDriverMetrics()

  /** Never asked: the decision checked no file against storage ([[StorageCheck.checksStorage]]). */
  override def skippedNow(): IndexedSeq[FileStatus] =
    throw new UnsupportedOperationException("the files of an Iceberg snapshot are not checked against storage")
  override def skipping(skipped: SkippedFiles, info: PruningInfo): PrunedIcebergScan =
    PrunedIcebergScan(delegate, skipped, info)
  override def inScan(scan: SparkPlan): Option[SparkPlan] = scan match {
    case b: BatchScanExec if b.scan.isInstanceOf[PrunedIcebergScan] => Some(SparkShim.replaceArg(b, b.scan, this))
    case _ => None
  }

  override def filterAttributes(): Array[NamedReference] = delegate match {
    case r: SupportsRuntimeV2Filtering => r.filterAttributes()
    case _ => Array.empty
  }
  override def filter(predicates: Array[Predicate]): Unit = delegate match {
    case r: SupportsRuntimeV2Filtering => r.filter(predicates)
    case _ =>
  }
}

/** Iceberg's batch, its input partitions without the skipped files' tasks. */
final case class PrunedIcebergBatch(delegate: Batch, skipped: SkippedFiles) extends Batch {
  override def planInputPartitions(): Array[InputPartition] =
    delegate.planInputPartitions().flatMap { p =>
      // A partition that cannot be narrowed (another Iceberg's partition class) is read whole.
      try IcebergTables.prunePartition(p, skipped) catch {
        // Read whole, a partition would be read twice beside the scan as planned.
        case NonFatal(e) if skipped.isInstanceOf[SkippedFiles.AllBut] => throw e
        case NonFatal(e) =>
          IndexCatalog.warnOnce(s"bloomindex: Iceberg input partition not pruned (${e.getMessage})")
          Some(p)
      }
    }
  override def createReaderFactory(): PartitionReaderFactory = delegate.createReaderFactory()
}
