package bloomindex.catalog

import java.nio.charset.StandardCharsets

import scala.util.control.NonFatal

import bloomindex.compat.SparkShim
import bloomindex.source.ScanSource

import org.apache.hadoop.fs.FileStatus
import org.apache.spark.sql.catalyst.expressions.XXH64
import org.apache.spark.sql.execution.datasources.PartitioningAwareFileIndex
import org.apache.spark.unsafe.Platform

/**
 * The files of a scan a join filter's global filter was found to hold, when the plan was
 * optimized: their identities (path, size, modification time) as a count and two sums of
 * hashes. A plan may run long after it was optimized (a DataFrame kept and collected again,
 * `explain` first), and its scan of the indexed side then reads what its file index lists at
 * that time: after a `REFRESH TABLE`, an `INSERT` (which refreshes the table's listing in
 * place) or a Delta commit, files the filter never held. [[holds]], on the driver when the plan
 * runs, tells whether the scan still lists exactly those files; where it does not, the join
 * filter lets every row through ([[bloomindex.execution.BloomFilterExec]]).
 *
 * Serializable so that the expression holding it can be; only the driver's copy answers.
 */
final class Coverage private (
    @transient private val scan: ScanSource,
    private val count: Int,
    private val sum1: Long,
    private val sum2: Long,
    @transient private val heldFiles: IndexedSeq[FileStatus],
    @transient private val listing: Option[SparkShim.ListingMark],
    @transient private val check: Option[StorageCheck],
    @transient private val readerConf: Option[org.apache.spark.sql.internal.SQLConf]) extends Serializable {

  /**
   * Whether the scan lists now the files it listed then, with the bytes they had then. The
   * same listing object of an in-memory file index (not refreshed since) answers at once;
   * otherwise the scan is listed again and compared. Where the files were checked against
   * storage when the plan was optimized, a run in another execution checks them again
   * ([[StorageCheck]]): a file rewritten in place under an unchanged listing is not held; nor
   * are the files where the session's settings now decode the indexed column otherwise.
   * False where the scan cannot be listed; `now`: the SQL execution of the run (null: none).
   */
  def holds(now: String): Boolean = scan != null && {
    val same = scan.index match {
      case p: PartitioningAwareFileIndex => listing.exists(_.current(p))
      case _ => false
    }
    // The scan listed at most once, for the comparison and the check alike.
    lazy val files: Option[IndexedSeq[FileStatus]] = try Some(scan.allFiles().toIndexedSeq) catch { case NonFatal(_) => None }
    (same || files.exists(f => Coverage.fingerprint(f) == ((count, sum1, sum2)))) &&
      check.forall(c => onStorage(c, now, files, goneHeld = false) &&
        // The indexed side's columns still decode as the filter's under the session's settings
        // (a V1 reader takes them at its first run); where in doubt, no filtering.
        c.decodingChanged(readerConf.getOrElse(org.apache.spark.sql.internal.SQLConf.get)).isEmpty)
  }

  // The SQL execution in which a join filter operator applied this filter; None: none has.
  @transient @volatile private var appliedIn: Option[String] = None

  /**
   * Records that a join filter operator applied the filter in SQL execution `now` (null: none).
   * Spark runs an operator's RDD once per plan (`SparkPlan.execute` is memoized) and keeps a
   * broadcast's or shuffle's output, so the rows it filtered then are the rows every later run
   * of the plan joins: the indexed side, where a later run reads it again, must find the files
   * the filter held ([[bloomindex.execution.JoinFilterGuardExec]]).
   */
  def applied(now: String): Unit = appliedIn = Some(now)

  /** Whether a join filter operator applied the filter. */
  def wasApplied: Boolean = appliedIn.isDefined

  /** Whether it did in another SQL execution than `now`. */
  def appliedInAnotherRun(now: String): Boolean = appliedIn.exists(_ != now)

  /**
   * Why the indexed side, read again now, may give other values than the filter holds though its
   * files are unchanged: the JVM's default zone its column is read in changed ([[StorageCheck.zoneChanged]]).
   */
  def zoneChanged: Option[String] = check.flatMap(_.zoneChanged)

  /**
   * Whether every file the filter was found to hold that is still on storage is there as it
   * was then (true where the decision checked no file against storage, or `now` has checked
   * them already): what a scan whose file list was fixed from that listing reads again. A file
   * gone is not read (or fails the read), so it cannot hold a row the filter misses.
   */
  def filesUnchanged(now: String): Boolean = scan != null && heldFiles != null &&
    check.forall(c => onStorage(c, now, Some(heldFiles), goneHeld = true))

  /**
   * Whether `files` (listed only where asked) are on storage as the decision found them, for a
   * run in `now`: true where it checked none against storage, or `now` has checked them already;
   * false where there are none. `goneHeld`: a file gone from storage counts as unchanged.
   */
  private def onStorage(c: StorageCheck, now: String, files: => Option[IndexedSeq[FileStatus]], goneHeld: Boolean): Boolean =
    !c.checksStorage || !c.due(now) || files.exists { f =>
      val same = c.unchanged(f, now)
      same.cardinality() == f.size || goneHeld && Coverage.onlyGone(f, same)
    }

  def display: String = Option(scan).map(_.display).getOrElse("?")

  /** The root folders of the indexed side's scan (none where unknown). */
  def roots: Seq[org.apache.hadoop.fs.Path] = Option(scan).map(_.roots).getOrElse(Nil)

  /** The indexed side's table, where it is one. */
  def table: Option[String] = Option(scan).flatMap(_.table)

  override def equals(o: Any): Boolean = o match {
    case c: Coverage => c.count == count && c.sum1 == sum1 && c.sum2 == sum2 &&
      Option(c.scan).map(_.identity) == Option(scan).map(_.identity)
    case _ => false
  }
  override def hashCode(): Int = (count, sum1, sum2).hashCode()
  override def toString: String = s"Coverage($count files of $display)"
}

object Coverage {

  /** Most files [[onlyGone]] looks up one by one; past it, they count as changed. */
  private val MaxLookups = 1000

  /**
   * Whether the files of `files` not set in `same` are all gone from storage (a lookup each, on
   * the driver, with the active session's Hadoop settings); false where one is there, or cannot
   * be looked up, or where there are more than [[MaxLookups]].
   */
  private def onlyGone(files: IndexedSeq[FileStatus], same: java.util.BitSet): Boolean =
    files.size - same.cardinality() <= MaxLookups && {
      val conf = org.apache.spark.sql.SparkSession.active.sessionState.newHadoopConf()
      files.indices.filterNot(same.get).forall { i =>
        val path = files(i).getPath
        try { path.getFileSystem(conf).getFileStatus(path); false } catch {
          case _: java.io.FileNotFoundException => true
          case NonFatal(_) => false
        }
      }
    }

  /**
   * What `files`, the listing of `scan` a global filter was found to hold, are; `check`: what they
   * passed on storage, and how the filter's column decoded; `readerConf`: the settings the scan
   * reads with where not the running session's.
   */
  def of(scan: ScanSource, files: Seq[FileStatus], check: Option[StorageCheck] = None,
      readerConf: Option[org.apache.spark.sql.internal.SQLConf] = None): Coverage = {
    val (n, s1, s2) = fingerprint(files)
    val listing = scan.index match {
      case p: PartitioningAwareFileIndex => SparkShim.listingOf(p).map(new SparkShim.ListingMark(_))
      case _ => None
    }
    new Coverage(scan, n, s1, s2, files.toIndexedSeq, listing, check, readerConf)
  }

  /** The count of `files` and two order-free sums of hashes of their identities. */
  private[catalog] def fingerprint(files: Seq[FileStatus]): (Int, Long, Long) = {
    var s1, s2 = 0L
    files.foreach { f =>
      val b = f.getPath.toString.getBytes(StandardCharsets.UTF_8)
      def h(seed: Long): Long = XXH64.hashLong(f.getModificationTime,
        XXH64.hashLong(f.getLen, XXH64.hashUnsafeBytes(b, Platform.BYTE_ARRAY_OFFSET, b.length, seed)))
      s1 += h(0L)
      s2 += h(0x9E3779B97F4A7C15L)
    }
    (files.size, s1, s2)
  }
}
