package bloomindex.pruning

import scala.util.Try
import scala.util.control.NonFatal

import bloomindex.catalog.{IndexCatalog, PruningInfo, StorageCheck}
import bloomindex.compat.SparkShim
import bloomindex.source.SourceResolver

import org.apache.hadoop.fs.FileStatus
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan, WholeStageCodegenExec}
import org.apache.spark.sql.execution.datasources.v2.{BatchScanExec, FileScan}
import org.apache.spark.sql.internal.SQLConf

/**
 * What a run of a pruned scan reads beside the scan as planned. A plan decided in one SQL
 * execution may run in another (`explain()` then `collect()`, a cached DataFrame computed at its
 * first action, a second action on the same plan), after a skipped file was rewritten in place
 * under the scan's unchanged listing. Where the decision checked the skipped files against
 * storage, such a run checks them again ([[bloomindex.catalog.StorageCheck]]) and, where any
 * changed, reads them too: a copy of the scan that reads only those, which the marker's
 * [[RoutedScanRDD]] reads beside the scan as planned (whose file list is fixed once it is first
 * computed). A run in the execution that decided, or one already confirmed, reads nothing more.
 * A decision on `lower(c)` made while the session's `lower()` folded otherwise than it does for
 * the run reads every file it skips ([[StorageCheck.foldingChanged]]), as does one in a JVM whose
 * default zone is not the decision's ([[StorageCheck.zoneChanged]]); so does a first run under
 * session settings that decode the decision's columns otherwise ([[unprunedAtFirstRun]]).
 */
object RecheckedScan {

  /** Whether a run of `scan` may have to read files its decision skipped (the marker routes its RDD only then). */
  def checkable(scan: SparkPlan): Boolean = indexOf(scan).exists(_.check.isDefined)

  /**
   * The files `scan`'s decision skips in the listing its index holds now, found when asked (see
   * [[CheckedSkips.skippedAsListedNow]]): taken when a run fixes the scan's files, for the checks
   * of later runs. None for a scan that checks no file against storage.
   */
  def skippedAsListedNow(scan: SparkPlan): Option[() => IndexedSeq[FileStatus]] =
    indexOf(scan).filter(_.check.exists(_.checksStorage)).map(_.skippedAsListedNow())

  /**
   * For a run in SQL execution `now` (null: none) of `scan` (a pruned scan, or its code-generated
   * stage): a copy of it that reads only the skipped files this run must read, and what the run
   * skips in all; None where it reads nothing more. `skipped`: the files the scan's fixed file
   * list skips ([[skippedAsListedNow]] when it was fixed; None: those of its index's listing now).
   */
  def extraFor(scan: SparkPlan, now: String, skipped: Option[() => IndexedSeq[FileStatus]]): Option[(SparkPlan, PruningInfo)] =
    scan match {
      // A scan that produces rows is its own code-generated stage below the marker.
      case w: WholeStageCodegenExec =>
        extraFor(w.child, now, skipped).map { case (s, info) => SparkShim.replaceArg(w, w.child, s) -> info }
      case _ => for {
        idx <- indexOf(scan)
        check <- idx.check if check.due(now)
        changed <- changedFiles(idx, check, now, skipped.getOrElse(() => idx.skippedNow()))
      } yield only(scan, idx, changed)
    }

  /**
   * For the first run of `scan`, which builds its reader with the session's settings now: where
   * those no longer decode the decision's columns as when it was made
   * ([[StorageCheck.decodingChanged]]), a copy of the scan that skips nothing, to be read in its
   * place, what the run skips with it (nothing), and why.
   */
  def unprunedAtFirstRun(scan: SparkPlan): Option[(SparkPlan, PruningInfo, String)] = scan match {
    case w: WholeStageCodegenExec =>
      unprunedAtFirstRun(w.child).map { case (s, info, why) => (SparkShim.replaceArg(w, w.child, s), info, why) }
    // Asked at every first run, in the deciding execution too (a setting changed by another
    // thread, a plan decided and run outside any execution): one comparison a plan.
    case _ => for {
      idx <- indexOf(scan)
      check <- idx.check
      conf <- readerConf(scan)
      why <- check.decodingChanged(conf)
    } yield {
      val info = idx.info.copy(filesKept = idx.info.filesTotal, bytesSkipped = 0L)
      // The scan skipping nothing, read in place of the scan as planned.
      val copy = idx.skipping(bloomindex.catalog.SkippedFiles.empty, info).inScan(scan).getOrElse(throw new IllegalStateException(
        s"bloomindex: ${idx.info.index}: a scan read under other settings than its plan's cannot be rebuilt (${scan.nodeName})"))
      (copy, info, why)
    }
  }

  /**
   * The settings a V1 file scan builds its reader with at its first run: its relation's session's,
   * as they are then. Not asked of V2 file scans: theirs builds its reader factory (the settings
   * in it) while the plan is made, as a cached plan shows (a V2 scan cached under one
   * `spark.sql.caseSensitive` reads under it after the setting changed), so a decision made
   * under the same settings holds for its runs.
   */
  private def readerConf(scan: SparkPlan): Option[SQLConf] = scan match {
    case s: FileSourceScanExec => Some(s.relation.sparkSession.sessionState.conf)
    case _ => None
  }

  private def indexOf(scan: SparkPlan): Option[CheckedSkips] = scan match {
    case w: WholeStageCodegenExec => indexOf(w.child)
    case s: FileSourceScanExec => Some(s.relation.location).collect { case c: CheckedSkips => c }
    case b: BatchScanExec => b.scan match {
      case c: CheckedSkips => Some(c) // a scan that leaves out files itself (Iceberg's)
      case f: FileScan => Some(f.fileIndex).collect { case c: CheckedSkips => c }
      case _ => None
    }
    case _ => None
  }

  /** The skipped files found changed (None: none changed, and the check is confirmed for this run). */
  private def changedFiles(idx: CheckedSkips, check: StorageCheck, now: String,
      skipped: () => IndexedSeq[FileStatus]): Option[Seq[(String, Long)]] = {
    // Every skipped file: those of the fixed file list where it is known, else the decision's.
    def all = (if (check.checksStorage) Try(skipped().map(f => SourceResolver.normalize(f.getPath))).toOption else None)
      .getOrElse(idx.skipped.paths.toSeq).map(_ -> 0L)
    check.foldingChanged.orElse(check.zoneChanged).foreach { why =>
      IndexCatalog.warnOnce(s"bloomindex: ${idx.info.index}: $why; the files it skips are read")
      return Some(all)
    }
    if (!check.checksStorage) return None
    val files = try skipped() catch {
      case NonFatal(e) =>
        IndexCatalog.warnOnce(s"bloomindex: ${idx.info.index}: the files a plan skips could not be listed to check " +
          s"them again (${e.getMessage}); the scan is read unpruned")
        return Some(idx.skipped.paths.map(_ -> 0L).toSeq)
    }
    val unchanged = check.unchanged(files, now)
    if (unchanged.cardinality() == files.size) None
    else {
      val changed = files.indices.filterNot(unchanged.get).map(i => SourceResolver.normalize(files(i).getPath) -> files(i).getLen)
      IndexCatalog.warnOnce(s"bloomindex: ${idx.info.index}: ${changed.size} file(s) it skips changed on storage after the " +
        "plan was optimized (in an earlier execution) and are read whole; REFRESH TABLE takes a new listing")
      Some(changed)
    }
  }

  /** A copy of `scan` that reads only the `changed` files (paths and sizes), and what the run skips with it. */
  private def only(scan: SparkPlan, idx: CheckedSkips, changed: Seq[(String, Long)]): (SparkPlan, PruningInfo) = {
    val info = idx.info.copy(filesKept = math.min(idx.info.filesTotal, idx.info.filesKept + changed.size),
      bytesSkipped = math.max(0L, idx.info.bytesSkipped - changed.map(_._2).sum))
    val copy = idx.only(changed.map(_._1).toSet, info).inScan(scan)
    // Never the scan as it is alone, which would skip the changed files.
    copy.getOrElse(throw new IllegalStateException(
      s"bloomindex: ${idx.info.index}: a scan whose skipped files changed cannot be rebuilt (${scan.nodeName})")) -> info
  }
}
