package bloomindex.source.files

import bloomindex.catalog.{Decision, PruningInfo}
import bloomindex.pruning.PrunedScan

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.{FileStatusCache, InMemoryFileIndex, PartitionSpec}
import org.apache.spark.sql.execution.datasources.v2.FileScan
import org.apache.spark.sql.execution.datasources.v2.csv.CSVScan
import org.apache.spark.sql.execution.datasources.v2.json.JsonScan
import org.apache.spark.sql.execution.datasources.v2.orc.OrcScan
import org.apache.spark.sql.execution.datasources.v2.parquet.ParquetScan
import org.apache.spark.sql.types.StructType

/**
 * For V2 file scans: a file index over just the files kept, with the original index's
 * partition layout, so partition values and partition pruning work as before. V2 scans take
 * a `PartitioningAwareFileIndex`, hence a new index over the kept files, not a wrapper.
 */
class BloomPrunedV2FileIndex(
    spark: SparkSession,
    kept: Seq[Path],
    partitionSchema: Option[StructType],
    spec: Option[PartitionSpec],
    val info: PruningInfo)
  extends InMemoryFileIndex(spark, kept, Map.empty, partitionSchema, FileStatusCache.getOrCreate(spark), spec, None) with PrunedScan {

  // Its root paths are the kept files themselves (it lists them), so EXPLAIN's Location line
  // reads `BloomPrunedV2FileIndex(<kept> paths)[...]`.

  override def toString: String =
    s"BloomPrunedV2FileIndex(${info.index} v${info.version}: kept ${info.filesKept} of ${info.filesTotal} files)"
}

object BloomPrunedV2FileIndex {

  /** The scan over the kept files, or None for a scan type we do not know how to rebuild. */
  def prune(spark: SparkSession, scan: FileScan, d: Decision): Option[FileScan] = {
    val old = scan.fileIndex
    val kept = old.allFiles().map(_.getPath).filterNot(p => d.skipped.contains(p))
    val spec = Some(old.partitionSpec()).filter(_.partitionColumns.nonEmpty)
    lazy val idx = new BloomPrunedV2FileIndex(spark, kept, Some(old.partitionSchema), spec, d.info)
    scan match {
      case p: ParquetScan => Some(p.copy(fileIndex = idx))
      case o: OrcScan => Some(o.copy(fileIndex = idx))
      case c: CSVScan => Some(c.copy(fileIndex = idx))
      case j: JsonScan => Some(j.copy(fileIndex = idx))
      case _ => None
    }
  }
}
