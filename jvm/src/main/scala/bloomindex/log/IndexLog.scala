package bloomindex.log

import java.io.FileNotFoundException
import java.nio.file.FileAlreadyExistsException

import scala.util.control.NonFatal

import bloomindex.errors.ConcurrentBloomIndexUpdateException

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging

/**
 * The history of one index: `_log/%020d.json`, one committed [[LogEntry]] per version, each
 * created exactly once through [[LogStore.createIfAbsent]]. Two commands that both try to
 * commit version N: one wins, the other gets [[ConcurrentBloomIndexUpdateException]] and has
 * changed nothing visible. Readers use the newest entry; queries use the newest ACTIVE one, so
 * a command in progress (or one that died) never hides the last good data.
 */
class IndexLog(val indexDir: Path, hadoopConf: Configuration) {
  import IndexLog.LogHead

  private lazy val store = LogStore.forPath(indexDir, hadoopConf)
  val logDir = new Path(indexDir, "_log")
  private val FileName = """(\d{20})\.json""".r

  def entryPath(version: Long): Path = new Path(logDir, f"$version%020d.json")

  /** Committed versions, ascending. */
  def versions(): Seq[Long] = versionStatuses().map(_._1)

  /** Committed versions, ascending, with their entry files' statuses (one listing). */
  def versionStatuses(): Seq[(Long, org.apache.hadoop.fs.FileStatus)] = {
    val fs = logDir.getFileSystem(hadoopConf)
    val statuses = try fs.listStatus(logDir) catch { case _: FileNotFoundException => Array.empty[org.apache.hadoop.fs.FileStatus] }
    statuses.toSeq.flatMap(st => st.getPath.getName match {
      case FileName(v) => Some(v.toLong -> st)
      case _ => None
    }).sortBy(_._1)
  }

  def read(version: Long): LogEntry = read(version, None)

  /** [[read]] of the entry whose file's status a listing gave ([[versionStatuses]]): one request on an object store. */
  def read(version: Long, status: Option[org.apache.hadoop.fs.FileStatus]): LogEntry = {
    val entry = LogJson.read(store.read(entryPath(version), LogJson.MaxEntryBytes, status))
    if (entry.version != version) {
      throw new LogJson.InvalidLogEntryException(s"file of version $version says version ${entry.version}")
    }
    entry
  }

  /**
   * [[read]] through a cache of this JVM: a committed entry never changes, and the entry file's
   * length and modification time are part of the key (an index folder deleted and created again
   * has other files under the same names; `st` is its status from [[versionStatuses]]). For reads
   * far back in the log (VACUUM's).
   */
  def readCached(version: Long, st: org.apache.hadoop.fs.FileStatus): LogEntry = {
    val key = (entryPath(version).toString, st.getLen, st.getModificationTime)
    Option(IndexLog.entryCache.get(key)).getOrElse {
      val e = read(version, Some(st))
      if (IndexLog.entryCache.size > IndexLog.MaxCachedEntries) IndexLog.entryCache.clear()
      IndexLog.entryCache.put(key, e)
      e
    }
  }

  /** The newest entry, or None for an index that never existed. Damage is an exception. */
  def latest(): Option[LogEntry] = versions().lastOption.map(read)

  /**
   * The newest ACTIVE entry at or after the last DELETED one: what queries may use. Entries
   * that cannot be read are skipped (with a warning): whatever a damaged entry said, using an
   * older version's data is never a wrong answer, since files it does not know as they are
   * now are read anyway.
   */
  def lastActive(): Option[LogEntry] = lastActiveOf(versionStatuses())

  /** [[lastActive]] among the committed versions of one listing ([[versionStatuses]]), read with their statuses. */
  def lastActiveOf(statuses: Seq[(Long, org.apache.hadoop.fs.FileStatus)]): Option[LogEntry] = {
    val vs = statuses.reverseIterator
    while (vs.hasNext) {
      val (v, st) = vs.next()
      val e = try read(v, Some(st)) catch {
        case err: LogJson.NewerFormatException => throw newer(v, err)
        case NonFatal(err) =>
          IndexLog.warnOnce(s"bloomindex: ${entryPath(v)} is damaged and skipped (${err.getMessage}); " +
            s"REFRESH BLOOM INDEX ${indexDir.getName} FULL repairs the index")
          null
      }
      if (e != null && e.state == IndexState.Active) return Some(e)
      if (e != null && e.state == IndexState.Deleted) return None
    }
    None
  }

  /** The newest entry that reads cleanly, and the damaged ones after it (newest first). */
  def latestReadable(): Option[(LogEntry, Seq[(Long, String)])] = head().flatMap(h => h.entry.map(_ -> h.damaged))

  /**
   * What a command builds on: the newest committed version number (the next commit is one
   * more, whatever that entry holds), the newest entry that reads cleanly, and the unreadable
   * entries after it. None for an index that never existed.
   */
  def head(): Option[LogHead] = {
    val vs = versions()
    if (vs.isEmpty) return None
    val damaged = Seq.newBuilder[(Long, String)]
    val it = vs.reverseIterator
    while (it.hasNext) {
      val v = it.next()
      try return Some(LogHead(vs.last, Some(read(v)), damaged.result()))
      catch {
        case e: LogJson.NewerFormatException => throw newer(v, e)
        case NonFatal(e) => damaged += v -> e.getMessage
      }
    }
    Some(LogHead(vs.last, None, damaged.result()))
  }

  /**
   * An entry a newer bloomindex wrote stops every reader of the log (its meaning is unknown:
   * skipping it as damage could take an older version for the current one): a command gets
   * `BLOOM_INDEX_NEWER_FORMAT`, queries do not use the index.
   */
  private def newer(version: Long, e: LogJson.NewerFormatException) =
    bloomindex.errors.BloomIndexErrors.newerFormat(indexDir.getName, version, e.getMessage)

  /**
   * Commits `entry` as its version; throws [[ConcurrentBloomIndexUpdateException]] if taken.
   *
   * Also when the version it builds on is gone, or a newer one is there: VACUUM removes entries
   * only below the newest stable one, so a missing predecessor means newer versions were
   * committed and cleaned up past it while the command ran (a long build). Created there, the
   * entry would be a version below the newest, which readers never use, and the command would
   * report a success that changed nothing. The log is listed for it (a listing, where one status
   * was asked for before), not the predecessor asked about alone: a VACUUM removing the
   * predecessor and the version between that look and the creation found them listed, so the
   * commit fails before creating anything. (It would take the version being committed by
   * another, replaced and removed in that moment.) A predecessor the listing lacks is asked
   * about once more before the commit is refused: a store whose listings may lag its writes
   * would otherwise refuse the commit of a command's own entry written just before.
   */
  def commit(entry: LogEntry): Unit = {
    def taken = new ConcurrentBloomIndexUpdateException(entry.spec.name, entry.version, entry.operation)
    if (entry.version > 0) {
      val listed = versions()
      if (listed.exists(_ >= entry.version)) throw taken
      if (!listed.contains(entry.version - 1)) {
        val before = entryPath(entry.version - 1)
        if (!before.getFileSystem(hadoopConf).exists(before)) throw taken
      }
    }
    afterPredecessorCheck(entry.version)
    try store.createIfAbsent(entryPath(entry.version), LogJson.write(entry))
    catch {
      case _: FileAlreadyExistsException | _: org.apache.hadoop.fs.FileAlreadyExistsException => throw taken
    }
  }

  /** Tests: runs between a commit's check of its predecessor and its creation (a VACUUM's moment). */
  @volatile private[log] var afterPredecessorCheck: Long => Unit = _ => ()
}

object IndexLog extends Logging {

  /** See [[IndexLog.head]]: `damaged` are (version, what is wrong), newest first. */
  case class LogHead(version: Long, entry: Option[LogEntry], damaged: Seq[(Long, String)])

  private val warned = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  private val MaxCachedEntries = 10000
  private val entryCache = new java.util.concurrent.ConcurrentHashMap[(String, Long, Long), LogEntry]()

  /** Logs a warning once per JVM: queries over a damaged index would repeat it on every plan. */
  def warnOnce(msg: String): Unit = if (warned.add(msg)) logWarning(msg)

  /** Forgets the warnings logged (tests: each damage case warns anew). */
  def resetWarnings(): Unit = warned.clear()

  /** The warnings [[warnOnce]] logged so far in this JVM (tests read them). */
  def warnings(): java.util.List[String] = new java.util.ArrayList[String](warned)
}
