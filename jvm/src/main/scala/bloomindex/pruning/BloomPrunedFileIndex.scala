package bloomindex.pruning

import bloomindex.catalog.{PruningInfo, SkippedFiles}
import bloomindex.source.WrappingFileIndex

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.datasources.{FileIndex, PartitionDirectory}
import org.apache.spark.sql.types.StructType

/**
 * The source's file index minus the files a Bloom index proved cannot match the query.
 * Everything else (partition pruning, Spark's data filters, listing) is the delegate's.
 *
 * `rootPaths` starts with one extra, synthetic path `bloomindex://<index>/kept-K-of-N` so that
 * EXPLAIN's `Location:` line names the index and what it kept; no reader lists root paths of
 * an already-listed index.
 */
class BloomPrunedFileIndex(val delegate: FileIndex, val skipped: SkippedFiles, val info: PruningInfo)
  extends WrappingFileIndex with PrunedScan {

  override def rootPaths: Seq[Path] =
    new Path("bloomindex", info.index, s"/kept-${info.filesKept}-of-${info.filesTotal}") +: delegate.rootPaths

  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    if (skipped.isEmpty) delegate.listFiles(partitionFilters, dataFilters)
    else delegate.listFiles(partitionFilters, dataFilters).map { pd =>
      pd.copy(files = pd.files.filterNot(f => skipped.contains(f.getPath)))
    }.filter(_.files.nonEmpty)

  override def inputFiles: Array[String] =
    delegate.inputFiles.filterNot(p => skipped.contains(new Path(p)))

  override def refresh(): Unit = delegate.refresh()

  override def sizeInBytes: Long = math.max(0L, delegate.sizeInBytes - info.bytesSkipped)

  override def partitionSchema: StructType = delegate.partitionSchema

  override def metadataOpsTimeNs: Option[Long] = delegate.metadataOpsTimeNs

  override def equals(o: Any): Boolean = o match {
    case b: BloomPrunedFileIndex => b.delegate == delegate && b.skipped == skipped
    case _ => false
  }

  override def hashCode(): Int = delegate.hashCode() * 31 + skipped.hashCode()

  override def toString: String =
    s"BloomPrunedFileIndex(${info.index} v${info.version}: kept ${info.filesKept} of ${info.filesTotal} files)"
}
