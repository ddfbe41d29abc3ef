package bloomindex.catalog

import bloomindex.text.CaseFolding

import org.apache.hadoop.fs.FileStatus
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.SQLExecution
import org.apache.spark.sql.internal.SQLConf

/**
 * The check against storage ([[FreshFiles]]) a plan's decision was made with, and when a run
 * of the plan must make it again. A plan is optimized once and may run later, in another
 * execution: `explain()` first and `collect()` after, a DataFrame cached and computed at its
 * first action, a second action on a plan that already ran (the pruned scan's RDD routed
 * before it: [[bloomindex.pruning.RoutedScanRDD]]). A file rewritten in place
 * in between keeps its size and time in the scan's listing, so the decision's identities still
 * match it, while Spark without the index would read its new bytes through that listing. So a
 * run in an execution other than the one the check was made (or last confirmed) in checks the
 * files again, and reads those that changed.
 *
 * A run outside any SQL execution (`df.rdd`, `queryExecution.toRdd`) of a plan also decided
 * outside one is taken as the same call when it starts within [[SameCallNanos]] of the check.
 *
 * `folding`: the case folding of the session's `lower()` a decision on a `lower(c)` text
 * predicate relied on (None: it relied on none). Spark's `lower()` reads
 * `spark.sql.icu.caseMappings.enabled` when it first runs, not when it is planned, so a run that
 * finds the session folding otherwise reads every skipped file ([[foldingChanged]]), before
 * any check against storage. `check` None: the decision did not check its files against
 * storage (only its folding is checked again; [[unchanged]] is not asked).
 *
 * `decoding`: where the index columns the decision used decode under session settings (time
 * zones, case sensitivity, rebase modes), why they no longer answer under the session's settings
 * now. A file scan builds its reader with the settings of its first run, so a first run under
 * other settings than the plan's reads every file the decision skipped
 * ([[decodingChanged]], asked by the pruned scan's first run only: later runs reuse the reader).
 *
 * `zone`: the JVM's default time zone the decision relied on (its columns decode in it: ORC's
 * timestamps, Parquet's and Avro's rebased ones). Spark's readers read it as they read each file,
 * not when the reader is built, so every run that checks again asks it ([[zoneChanged]]), V2
 * scans' too.
 */
final class StorageCheck(check: Option[IndexedSeq[FileStatus] => java.util.BitSet], decidedIn: String,
    folding: Option[CaseFolding] = None, decoding: Option[SQLConf => Option[String]] = None,
    zone: Option[String] = None) {

  def this(check: IndexedSeq[FileStatus] => java.util.BitSet, decidedIn: String) = this(Some(check), decidedIn)
  @volatile private var confirmedIn: String = decidedIn
  @volatile private var confirmedAt: Long = System.nanoTime()

  /** Whether a run in execution `now` (null: none) must check the files again. */
  def due(now: String): Boolean =
    if (now != null) now != confirmedIn
    else confirmedIn != null || System.nanoTime() - confirmedAt > StorageCheck.SameCallNanos

  private def confirm(now: String): Unit = { confirmedIn = now; confirmedAt = System.nanoTime() }

  /**
   * The positions of `files` whose status on storage is theirs (a failed check: none), checked
   * for a run in execution `now`; when that is every file, the check holds for `now`.
   */
  def unchanged(files: IndexedSeq[FileStatus], now: String): java.util.BitSet = {
    val c = check.getOrElse(throw new IllegalStateException("a decision that checked no file against storage has none to check again"))
    val same = try c(files) catch { case scala.util.control.NonFatal(_) => new java.util.BitSet() }
    if (same.cardinality() == files.size) confirm(now)
    same
  }

  /** Whether the decision checked its files against storage (a run checks them again). */
  def checksStorage: Boolean = check.isDefined

  /**
   * Why the decision's skips do not hold for a scan whose reader is built now with settings
   * `readerConf` (the session's the scan reads with: a V1 relation's, live; a V2 file scan's own,
   * which in a cached plan is a copy of the session's settings when it was cached).
   */
  def decodingChanged(readerConf: SQLConf): Option[String] = decoding.flatMap(why => try why(readerConf) catch {
    case scala.util.control.NonFatal(e) => Some(s"the decoding of its columns could not be compared again (${e.getMessage})")
  }).map(why => s"the plan was optimized under other session settings than its first run's: $why")

  /** Why the decision's skips do not hold for a run now: the JVM's default time zone is not the one it relied on. */
  def zoneChanged: Option[String] = zone.flatMap { decided =>
    val now = bloomindex.source.DecodingContext.jvmZone
    if (now == decided) None
    else Some(s"the plan was optimized when the JVM's default time zone was $decided and runs when it is $now, " +
      "which the decision's columns are read in")
  }

  /** Why the decision's skips do not hold for a run now: the session's `lower()` folds otherwise than when it was made. */
  def foldingChanged: Option[String] = folding.flatMap { decided =>
    val now = TextSession.folding(SQLConf.get)
    if (now == decided) None
    else Some(s"the plan was optimized when the session's lower() folded with ${decided.name} and runs when it folds " +
      s"with ${now.name} (${TextSession.IcuCaseMappings})")
  }
}

object StorageCheck {

  /** A decision's check, or None where it has nothing to check again (no storage check, folding, decoding or zone). */
  def of(check: Option[IndexedSeq[FileStatus] => java.util.BitSet], decidedIn: String,
      folding: Option[CaseFolding] = None, decoding: Option[SQLConf => Option[String]] = None,
      zone: Option[String] = None): Option[StorageCheck] =
    if (check.isEmpty && folding.isEmpty && decoding.isEmpty && zone.isEmpty) None
    else Some(new StorageCheck(check, decidedIn, folding, decoding, zone))

  /** How long after a check a run outside any SQL execution counts as the same call (2 s). */
  val SameCallNanos: Long = 2000L * 1000 * 1000

  /** The SQL execution the current thread runs in, or null. */
  def executionId(spark: SparkSession): String = spark.sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY)
}
