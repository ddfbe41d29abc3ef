package bloomindex.source.iceberg

import scala.util.control.NonFatal

import bloomindex.catalog.{IndexCatalog, PruningInfo, SkippedFiles}
import bloomindex.compat.RuntimeFilteringForwarders
import bloomindex.pruning.PrunedScan

import org.apache.spark.sql.connector.expressions.NamedReference
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory, Scan, SupportsRuntimeV2Filtering}
import org.apache.spark.sql.types.StructType


/**
 * An Iceberg scan whose batch leaves out the tasks of `skipped` data files (normalized paths).
 * Runtime filtering (dynamic partition pruning) goes to Iceberg's scan, whose next batch is
 * pruned the same way.
 */
final case class PrunedIcebergScan(delegate: Scan, skipped: SkippedFiles, info: PruningInfo)
    extends Scan with RuntimeFilteringForwarders with PrunedScan {

  override def readSchema(): StructType = delegate.readSchema()
  override def description(): String = s"${delegate.description()} [Bloom index ${info.index}: " +
    s"files kept ${info.filesKept} of ${info.filesTotal}]"
  override def toBatch: Batch = PrunedIcebergBatch(delegate.toBatch, skipped)
  override def columnarSupportMode(): Scan.ColumnarSupportMode = delegate.columnarSupportMode()
  override def supportedCustomMetrics(): Array[CustomMetric] = delegate.supportedCustomMetrics()
  override def reportDriverMetrics(): Array[CustomTaskMetric] = delegate.reportDriverMetrics()

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
        case NonFatal(e) =>
          IndexCatalog.warnOnce(s"bloomindex: Iceberg input partition not pruned (${e.getMessage})")
          Some(p)
      }
    }
  override def createReaderFactory(): PartitionReaderFactory = delegate.createReaderFactory()
}
