package bloomindex.index

import java.io.FileNotFoundException
import java.nio.file.FileAlreadyExistsException

import scala.util.control.NonFatal

import bloomindex.ConcurrentBloomIndexUpdateException
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * The history of one index: `_log/%020d.json`, one committed [[LogEntry]] per version, each
 * created exactly once through [[LogStore.createIfAbsent]]. Two commands that both try to
 * commit version N: one wins, the other gets [[ConcurrentBloomIndexUpdateException]] and has
 * changed nothing visible. Readers use the newest entry; queries use the newest ACTIVE one, so
 * a command in progress (or one that died) never hides the last good data.
 */
class IndexLog(val indexDir: Path, hadoopConf: Configuration) {

  private val store = new LogStore(hadoopConf)
  val logDir = new Path(indexDir, "_log")
  private val FileName = """(\d{20})\.json""".r

  def entryPath(version: Long): Path = new Path(logDir, f"$version%020d.json")

  /** Committed versions, ascending. */
  def versions(): Seq[Long] = {
    val fs = logDir.getFileSystem(hadoopConf)
    val statuses = try fs.listStatus(logDir) catch { case _: FileNotFoundException => Array.empty[org.apache.hadoop.fs.FileStatus] }
    statuses.toSeq.map(_.getPath.getName).collect { case FileName(v) => v.toLong }.sorted
  }

  def read(version: Long): LogEntry = {
    val entry = LogJson.read(store.read(entryPath(version), LogJson.MaxEntryBytes))
    if (entry.version != version) {
      throw new LogJson.InvalidLogEntryException(s"file of version $version says version ${entry.version}")
    }
    entry
  }

  /** The newest entry, or None for an index that never existed. Damage is an exception. */
  def latest(): Option[LogEntry] = versions().lastOption.map(read)

  /** The newest ACTIVE entry at or after the last DELETED one: what queries may use. */
  def lastActive(): Option[LogEntry] = {
    val vs = versions().reverseIterator
    while (vs.hasNext) {
      val e = read(vs.next())
      if (e.state == IndexState.Active) return Some(e)
      if (e.state == IndexState.Deleted) return None
    }
    None
  }

  /** The newest entry that reads cleanly, skipping damaged ones; for DESCRIBE and repair. */
  def latestReadable(): Option[(LogEntry, Seq[(Long, String)])] = {
    val damaged = Seq.newBuilder[(Long, String)]
    val it = versions().reverseIterator
    while (it.hasNext) {
      val v = it.next()
      try return Some((read(v), damaged.result()))
      catch { case NonFatal(e) => damaged += v -> e.getMessage }
    }
    None
  }

  /** Commits `entry` as its version; throws [[ConcurrentBloomIndexUpdateException]] if taken. */
  def commit(entry: LogEntry): Unit =
    try store.createIfAbsent(entryPath(entry.version), LogJson.write(entry))
    catch {
      case _: FileAlreadyExistsException | _: org.apache.hadoop.fs.FileAlreadyExistsException =>
        throw new ConcurrentBloomIndexUpdateException(entry.spec.name, entry.version, entry.operation)
    }
}
