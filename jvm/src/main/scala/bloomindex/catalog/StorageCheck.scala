package bloomindex.catalog

import org.apache.hadoop.fs.FileStatus
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.SQLExecution

/**
 * The check against storage ([[FreshFiles]]) a plan's decision was made with, and when a run
 * of the plan must make it again. A plan is optimized once and may run later, in another
 * execution: `explain()` first and `collect()` after, a DataFrame cached and computed at its
 * first action (a second action on a plan that already ran reuses its RDD: no run of the
 * plan's code sees it, docs/limitations.md). A file rewritten in place
 * in between keeps its size and time in the scan's listing, so the decision's identities still
 * match it, while Spark without the index would read its new bytes through that listing. So a
 * run in an execution other than the one the check was made (or last confirmed) in checks the
 * files again, and reads those that changed.
 *
 * A run outside any SQL execution (`df.rdd`, `queryExecution.toRdd`) of a plan also decided
 * outside one is taken as the same call when it starts within [[SameCallNanos]] of the check.
 */
final class StorageCheck(check: IndexedSeq[FileStatus] => java.util.BitSet, decidedIn: String) {
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
    val same = try check(files) catch { case scala.util.control.NonFatal(_) => new java.util.BitSet() }
    if (same.cardinality() == files.size) confirm(now)
    same
  }
}

object StorageCheck {

  /** How long after a check a run outside any SQL execution counts as the same call (2 s). */
  val SameCallNanos: Long = 2000L * 1000 * 1000

  /** The SQL execution the current thread runs in, or null. */
  def executionId(spark: SparkSession): String = spark.sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY)
}
