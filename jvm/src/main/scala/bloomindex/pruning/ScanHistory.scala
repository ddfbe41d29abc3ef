package bloomindex.pruning

import scala.util.control.NonFatal

import bloomindex.catalog.{Decision, IndexCatalog}
import bloomindex.history.{Predicates, ScanRecord, WorkloadHistory}
import bloomindex.source.ScanSource

import org.apache.hadoop.fs.FileStatus
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.Expression

/**
 * What the pruning hooks tell the workload history ([[bloomindex.history.WorkloadHistory]]): each
 * scan of an indexable source they are asked to prune, with or without an index over it. Only the
 * hooks' pruning path records (the EXPLAIN path makes the same decisions without recording); on
 * the planning thread this is a walk of the filter and an append to memory, and it never fails a
 * query (a failure logs one warning).
 */
object ScanHistory {

  /**
   * The catalog's decision for `scan` (its `files` as it will read them; `unfiltered`: see
   * [[IndexCatalog.decide]]) under `condition`, and the scan recorded, once per `key` (the scan's
   * plan node) and SQL execution. `catalog`: the one that already looked for the scan's indexes, if any.
   */
  def decide(spark: SparkSession, key: AnyRef, condition: Expression, scan: ScanSource,
      files: Seq[FileStatus], unfiltered: Boolean = false, catalog: Option[IndexCatalog] = None): Option[Decision] = {
    val d = catalog.getOrElse(new IndexCatalog(spark)).decide(condition, scan, files, unfiltered)
    // The files read and their bytes: the decision's count when it made one (its probe counted
    // them on its threads), else a pass over the listing (no boxed sum over a million files).
    record(spark, key, condition, scan, Some(d match {
      case Some(made) => (made.info.filesTotal.toLong, made.bytesRead)
      case None =>
        val (count, bytes) = IndexCatalog.readTally(files.toIndexedSeq, unfiltered)
        (count.toLong, bytes)
    }), d)
    d
  }

  /**
   * Records a scan: `listed` its files and bytes when known, `d` what the indexes decided
   * (None: no index over it, or none applied).
   */
  def record(spark: SparkSession, key: AnyRef, condition: Expression, scan: ScanSource,
      listed: => Option[(Long, Long)], d: Option[Decision]): Unit =
    try {
      if (WorkloadHistory.enabled(spark)) {
        val identity = scan.identity
        // The roots as the scan names them, with their store (`s3a://prod/t`, `file:/data/t`):
        // the advisor matches indexes and reads the source again by them.
        val roots = scan.roots.map(_.toString).sorted
        WorkloadHistory.destination(spark, roots).foreach { to =>
          val catalog = new IndexCatalog(spark)
          val applied = d.map(_.info).filter(_.index != "none")
          val record = ScanRecord(
            timeMs = System.currentTimeMillis(),
            executionId = None,
            source = scan.display,
            provider = identity.provider,
            format = scan.format,
            table = identity.table,
            roots = roots,
            predicates = Predicates.of(condition, catalog.scanColumn(scan, _)),
            filesListed = listed.map(_._1),
            filesRead = listed.map { case (n, _) => applied.map(_.filesKept.toLong).getOrElse(n) },
            bytesListed = listed.map(_._2),
            bytesRead = listed.map { case (_, b) => b - applied.map(_.bytesSkipped).getOrElse(0L) },
            index = applied.map(_.index),
            indexVersion = applied.map(_.version),
            wallTimeMs = None)
          WorkloadHistory.add(spark, key, record, to)
        }
      }
    } catch {
      case NonFatal(e) => IndexCatalog.warnOnce(s"bloomindex: a scan was not recorded in the workload history: $e")
    }
}
