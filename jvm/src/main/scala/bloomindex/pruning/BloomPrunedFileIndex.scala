package bloomindex.pruning

import bloomindex.catalog.{PruningInfo, SkippedFiles, StorageCheck}
import bloomindex.source.WrappingFileIndex

import bloomindex.compat.SparkShim

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.datasources.{FileIndex, PartitionDirectory, PartitioningAwareFileIndex}
import org.apache.spark.sql.types.StructType

/**
 * The source's file index minus the files a Bloom index proved cannot match the query.
 * Everything else (partition pruning, Spark's data filters, listing) is the delegate's.
 *
 * `rootPaths` starts with one extra, synthetic path `bloomindex://<index>/kept-K-of-N` so that
 * EXPLAIN's `Location:` line names the index and what it kept; no reader lists root paths of
 * an already-listed index.
 */
class BloomPrunedFileIndex(val delegate: FileIndex, val skipped: SkippedFiles, val info: PruningInfo,
    val kept: Option[BloomPrunedFileIndex.Kept] = None, val check: Option[StorageCheck] = None)
  extends WrappingFileIndex with CheckedSkips {

  def skippedNow(): IndexedSeq[FileStatus] = (delegate match {
    case p: PartitioningAwareFileIndex => p.allFiles()
    case other => other.listFiles(Nil, Nil).flatMap(_.files.map(_.fileStatus))
  }).filter(skipped.contains).toIndexedSeq

  // The files skipped in the delegate's listing the last time a scan listed this index, kept
  // only where a later run checks them and the delegate holds no listing to find them in.
  @volatile private var lastSkipped: Option[IndexedSeq[FileStatus]] = None
  private lazy val keepsSkips = check.exists(_.checksStorage) && CheckedSkips.inHeldListing(delegate, skipped).isEmpty

  /**
   * A delegate that holds its listing: the files skipped in it, found when asked. One that
   * holds none (a catalog table's file index, which lists again at each call) lists afresh, where
   * a file rewritten since shows its new time and no longer matches the decision: so the files
   * skipped in the listing the scan read when it fixed its files ([[listFiles]]), kept now.
   */
  override def skippedAsListedNow(): () => IndexedSeq[FileStatus] =
    CheckedSkips.inHeldListing(delegate, skipped).getOrElse {
      val fixed = lastSkipped.getOrElse(skippedNow())
      () => fixed
    }

  def skipping(skipped: SkippedFiles, info: PruningInfo): BloomPrunedFileIndex =
    new BloomPrunedFileIndex(delegate, skipped, info)

  def inScan(scan: SparkPlan): Option[SparkPlan] = scan match {
    case s: FileSourceScanExec => Some(SparkShim.withRelation(s, s.relation.copy(location = this)(s.relation.sparkSession)))
    case _ => None
  }

  override def rootPaths: Seq[Path] =
    new Path("bloomindex", info.index, s"/kept-${info.filesKept}-of-${info.filesTotal}") +: delegate.rootPaths

  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    kept.filter(_.answers(delegate, dataFilters)) match {
      case Some(k) => if (k.files.isEmpty) Nil else Seq(PartitionDirectory(InternalRow.empty, k.files))
      case None if skipped.isEmpty => delegate.listFiles(partitionFilters, dataFilters)
      case None =>
        val skippedHere = IndexedSeq.newBuilder[FileStatus]
        val out = delegate.listFiles(partitionFilters, dataFilters).map { pd =>
          val (left, read) = pd.files.partition(f => skipped.contains(f.fileStatus))
          if (keepsSkips) skippedHere ++= left.iterator.map(_.fileStatus)
          pd.copy(files = read)
        }.filter(_.files.nonEmpty)
        if (keepsSkips) lastSkipped = Some(skippedHere.result())
        out
    }

  override def inputFiles: Array[String] = delegate match {
    case p: PartitioningAwareFileIndex => p.allFiles().filterNot(skipped.contains).map(_.getPath.toUri.toString).toArray
    case other => other.inputFiles.filterNot(p => skipped.contains(new Path(p)))
  }

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

object BloomPrunedFileIndex {

  /**
   * The files an unpartitioned `PartitioningAwareFileIndex` lists for a scan, less those the
   * decision skipped, as decided (`files`, in the listing's order), while that index still holds
   * the listing the decision was made on (`listing`, [[bloomindex.compat.SparkShim.ListingMark]]).
   * Then the scan's files are these, not the index's million files each looked up again in the
   * skipped set (at a million files, a second of the first query's driver time). Not used, and
   * the files filtered as ever, after a `refresh` of the index, or for a scan that filters on
   * file metadata (`_metadata.file_name = ...`: Spark prunes files by them in `listFiles`).
   */
  final class Kept(listing: SparkShim.ListingMark, val files: Array[FileStatus]) {

    def answers(index: FileIndex, dataFilters: Seq[Expression]): Boolean = index match {
      case p: PartitioningAwareFileIndex if p.partitionSchema.isEmpty =>
        listing.current(p) && !dataFilters.exists(_.references.exists(a => internal(a.metadata)))
      case _ => false
    }

    /** Metadata of a Spark-internal column (`_metadata` and its fields: keys `__...`). */
    private def internal(m: org.apache.spark.sql.types.Metadata): Boolean =
      m.json.contains("\"__")
  }
}
