package bloomindex.history

import java.io.{BufferedReader, InputStreamReader}
import java.nio.charset.StandardCharsets
import java.util.UUID

import scala.util.control.NonFatal

import bloomindex.log.IndexRoot

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

/**
 * The workload history on storage: `<index root>/_history/`, JSON lines files any Spark reads
 * (`spark.read.json(<root>/_history)`), one per batch the writer thread wrote, named
 * `history-<newest record's time, ms, 13 digits>-<records>-<random>.json`, so that pruning by
 * age and by count needs only a listing. A file is written under a hidden name (`.`) and
 * renamed, so a reader never sees half of one.
 *
 * On each write: files whose newest record is older than the age limit are deleted, then the
 * oldest files past the entry limit; past [[CompactAbove]] files, the files are rewritten as
 * one (records within the limits only). Several drivers may share a root: each writes files of
 * its own; two compacting at once may leave a record twice until the limits drop it (the history
 * is a sample of the workload for the advisor, not a ledger).
 */
object HistoryFiles {

  /** Files past which a write merges them into one. */
  val CompactAbove = 32

  private val Name = """history-(\d{13})-(\d+)-[0-9a-f]+\.json""".r

  /** A history file as listed: `length` and `modified` from its status (-1: unknown). */
  final case class Stored(path: Path, newestMs: Long, count: Int, length: Long = -1L, modified: Long = -1L)

  def dir(root: String): Path = new Path(root, IndexRoot.HistoryFolder)

  /** The history files under `root`, newest first. */
  def list(fs: FileSystem, root: String): Seq[Stored] = {
    val d = dir(root)
    if (!fs.exists(d)) Nil
    else fs.listStatus(d).toSeq.flatMap { st =>
      st.getPath.getName match {
        case Name(t, n) if st.isFile => Some(Stored(st.getPath, t.toLong, n.toInt, st.getLen, st.getModificationTime))
        case _ => None
      }
    }.sortBy(s => (-s.newestMs, s.path.getName))
  }

  /** Writes `records` as one new file under `root`, then applies the limits (see the object's doc). */
  def append(conf: Configuration, root: String, records: Seq[ScanRecord], maxEntries: Int, maxAgeMs: Long,
      now: Long = System.currentTimeMillis()): Unit = {
    val kept = within(records, maxEntries, maxAgeMs, now)
    val d = dir(root)
    val fs = d.getFileSystem(conf)
    if (kept.nonEmpty) write(fs, d, kept)
    prune(fs, root, maxEntries, maxAgeMs, now)
  }

  /** The newest `maxEntries` of `records` not older than `maxAgeMs`, oldest first. */
  def within(records: Seq[ScanRecord], maxEntries: Int, maxAgeMs: Long, now: Long): Seq[ScanRecord] =
    records.filter(_.timeMs >= now - maxAgeMs).sortBy(_.timeMs).takeRight(maxEntries)

  private def write(fs: FileSystem, d: Path, records: Seq[ScanRecord]): Path = {
    fs.mkdirs(d)
    val id = UUID.randomUUID().toString.replace("-", "").take(12)
    val name = f"history-${records.map(_.timeMs).max}%013d-${records.size}-$id.json"
    val tmp = new Path(d, s".$name.tmp")
    val out = fs.create(tmp, true)
    try {
      val bytes = records.iterator.map(_.toJson + "\n").mkString.getBytes(StandardCharsets.UTF_8)
      out.write(bytes)
    } finally out.close()
    val target = new Path(d, name)
    if (!fs.rename(tmp, target)) {
      fs.delete(tmp, false)
      throw new java.io.IOException(s"could not rename $tmp to $target")
    }
    target
  }

  /** Deletes what is past the limits (whole files), then compacts past [[CompactAbove]] files. */
  def prune(fs: FileSystem, root: String, maxEntries: Int, maxAgeMs: Long, now: Long): Unit = {
    val files = list(fs, root)
    // Newest first: once a file is too old, or past the entry limit, so is every older one.
    var total = 0L
    val firstOut = files.indexWhere { f => total += f.count; f.newestMs < now - maxAgeMs || total > maxEntries }
    val (kept, out) = if (firstOut < 0) (files, Nil) else files.splitAt(firstOut)
    out.foreach(f => deleteQuietly(fs, f.path))
    if (kept.size > CompactAbove) {
      val merged = within(kept.flatMap(f => readFile(fs, f.path)), maxEntries, maxAgeMs, now)
      if (merged.nonEmpty) write(fs, dir(root), merged)
      kept.foreach(f => deleteQuietly(fs, f.path))
    }
  }

  private def deleteQuietly(fs: FileSystem, p: Path): Unit =
    try fs.delete(p, false) catch { case NonFatal(_) => () }

  /** The records of one file; a line that does not parse is skipped (a file written by a newer version, or damaged). */
  def readFile(fs: FileSystem, p: Path): Seq[ScanRecord] = {
    val in = try fs.open(p) catch { case _: java.io.FileNotFoundException => return Nil }
    val reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))
    try {
      Iterator.continually(reader.readLine()).takeWhile(_ != null).filter(_.trim.nonEmpty).flatMap { line =>
        try Some(ScanRecord.fromJson(line)) catch { case NonFatal(_) => None }
      }.toVector
    } finally reader.close()
  }

  /** The history under `root` within the limits, oldest first. */
  def read(conf: Configuration, root: String, maxEntries: Int, maxAgeMs: Long,
      now: Long = System.currentTimeMillis()): Seq[ScanRecord] = {
    val fs = dir(root).getFileSystem(conf)
    val files = list(fs, root).filter(_.newestMs >= now - maxAgeMs)
    // Newest files first, until they hold enough records.
    var total = 0L
    val needed = files.takeWhile { f => val more = total < maxEntries; total += f.count; more }
    within(needed.flatMap(f => readCached(fs, f)), maxEntries, maxAgeMs, now)
  }

  /** Records held by [[parsed]] past which it is emptied. */
  private val MaxCachedRecords = 50000
  /** Parsed history files of this JVM, by path, length and modification time: a file is written once (renamed into place). */
  private val parsed = new java.util.concurrent.ConcurrentHashMap[(String, Long, Long), Seq[ScanRecord]]()
  private val cachedRecords = new java.util.concurrent.atomic.AtomicLong()

  /**
   * [[readFile]] through a cache of this JVM, for a file listed with its status: a history file
   * never changes once in place (a new name per write), so the fpp 'auto' choice of each
   * on-write refresh reads only the files written since the last one.
   */
  private def readCached(fs: FileSystem, f: Stored): Seq[ScanRecord] =
    if (f.length < 0) readFile(fs, f.path)
    else {
      val key = (f.path.toString, f.length, f.modified)
      Option(parsed.get(key)).getOrElse {
        val records = readFile(fs, f.path)
        if (cachedRecords.addAndGet(records.size) > MaxCachedRecords) { parsed.clear(); cachedRecords.set(records.size) }
        parsed.put(key, records)
        records
      }
    }
}
