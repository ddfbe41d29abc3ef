package bloomindex.catalog

import java.util.{LinkedHashMap => JLinkedHashMap}

import scala.util.control.NonFatal

import bloomindex.crypto.IndexEncryption
import bloomindex.layout.{ColumnData, IndexLayout, IndexStore}
import bloomindex.log.{IndexLog, LogEntry}

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf

/**
 * Loaded index data, one entry per (index folder, log version, column): a query loads only the
 * columns it probes (as the version's [[IndexLayout]] reads them: the footers of a column's
 * probe files, or its folder of Parquet rows on the driver), each in the compact
 * [[ColumnData]] form.
 * A version's data never changes, so sessions of one JVM share it.
 *
 * Bounded: at most `spark.bloomindex.cache.maxBytes` of [[ColumnData.heapBytes]] in all,
 * least recently used dropped first; loading a version of an index drops its other versions
 * (a late load of an older one while a newer is held is not kept), so nothing grows with the
 * versions a long session has seen. Entries of
 * encrypted data are shared only with sessions whose crypto settings are the same.
 */
object IndexCache extends org.apache.spark.internal.Logging {

  // `createdAt`: the index's history. An index folder removed and the index created again starts
  // its log at the same versions; its columns are another history's (types, filter designs).
  private final case class Key(indexDir: String, createdAt: Long, version: Long, column: String)
  /**
   * `until`: when a column loaded with a read that failed for a reason that may pass (a store's
   * error or timeout, not damage: [[ColumnData.Builder.failForNow]]) is loaded again: the files
   * it left out are read whole until then, not for as long as the version is the newest.
   */
  private final case class Entry(data: ColumnData, keyAccess: Option[String], until: Long = Long.MaxValue)

  /** How long a column loaded with a passing read failure is kept before it is loaded again (tests shorten it). */
  @volatile private[bloomindex] var RetryFailedLoadMs = 60000L

  private val entries = new JLinkedHashMap[Key, Entry](16, 0.75f, true)
  // The log entry of the version held of each index folder (warm path: no log entry re-read).
  private val entriesSeen = new java.util.concurrent.ConcurrentHashMap[(String, Long), LogEntry]()

  /** Forgets every loaded version (tests: what a new driver would see). */
  def clear(): Unit = synchronized {
    entries.clear()
    entriesSeen.clear()
  }

  /**
   * Bytes of the driver's heap the loaded columns hold (a column of probe files grows with
   * the block rows its queries fetch, so this is summed when asked).
   */
  def heldBytes(): Long = synchronized {
    var b = 0L
    entries.values().forEach(e => b += e.data.heapBytes)
    b
  }

  /** How many columns are loaded. */
  def heldColumns(): Int = synchronized(entries.size())

  /** How many columns of `version` of the index in `indexDir` are held. */
  def heldColumns(indexDir: Path, version: Long): Int = synchronized {
    val dir = indexDir.toString
    entries.keySet().stream().filter(k => k.indexDir == dir && k.version == version).count().toInt
  }

  /**
   * Forgets what this JVM loaded of the index in `indexDir` (a CREATE that starts a new log
   * there: an earlier history's entries, under the same versions, must not stand for it).
   */
  def forget(indexDir: Path): Unit = synchronized {
    val dir = indexDir.toString
    entries.keySet().removeIf(k => k.indexDir == dir)
    entriesSeen.keySet().removeIf(k => k._1 == dir)
  }

  /** The log entry of `version`, if this JVM has loaded data of it. */
  def get(indexDir: Path, version: Long): Option[LogEntry] = Option(entriesSeen.get((indexDir.toString, version)))

  /**
   * Column `column` (index in the spec) of `entry`'s data: from the cache, or loaded. Throws
   * when the data cannot be read at all (encrypted and this session has no keys).
   */
  def column(spark: SparkSession, log: IndexLog, entry: LogEntry, column: Int): ColumnData = {
    val dir = log.indexDir.toString
    val name = entry.spec.columns(column).name
    val key = Key(dir, entry.createdAt, entry.version, name)
    lazy val conf = spark.sessionState.newHadoopConf()
    val hit = synchronized(Option(entries.get(key)))
    if (hit.exists(h => h.keyAccess.forall(_ == IndexEncryption.keyAccess(conf)) && System.currentTimeMillis() < h.until)) {
      evict(spark.sessionState.conf.getConf(BloomIndexSQLConf.CACHE_MAX_BYTES), key) // what the column fetched since counts now
      return hit.get.data
    }
    val loaded = read(spark, log.indexDir, entry, column)
    val cap = spark.sessionState.conf.getConf(BloomIndexSQLConf.CACHE_MAX_BYTES)
    synchronized {
      // A load that ended after a newer version of the same index (same history: same creation
      // time) was loaded, such as a read a query stopped waiting for (MaxWait), serves its caller
      // and is not kept: queries use the newest version, and keeping it would push the newer
      // one's columns out first (it would be the most recently used).
      val newerHeld = entriesSeen.entrySet().stream().anyMatch { e =>
        e.getKey._1 == dir && e.getKey._2 > entry.version && e.getValue.createdAt == entry.createdAt
      }
      if (!newerHeld) {
        // Other versions of this index are of no further use (older ones, or another history's
        // after the index's folder was removed and the index created again).
        val it = entries.entrySet().iterator()
        while (it.hasNext) {
          val e = it.next()
          if (e.getKey.indexDir == dir && (e.getKey.version != entry.version || e.getKey.createdAt != entry.createdAt)) it.remove()
        }
        entriesSeen.keySet().removeIf(k => k._1 == dir && k._2 != entry.version)
        entriesSeen.put((dir, entry.version), entry)
        loaded.foreach { case (k, e) => entries.put(k, e) }
        evict(cap, key)
      }
    }
    loaded(key).data
  }

  /**
   * Drops least recently used columns while more than `cap` is held; `key`, which a query is
   * about to use, goes last (and is dropped too when it alone is over: that query keeps it).
   */
  private def evict(cap: Long, key: Key): Unit = synchronized {
    var bytes = heldBytes()
    val lru = entries.entrySet().iterator()
    while (bytes > cap && lru.hasNext) {
      val e = lru.next()
      if (e.getKey != key) { bytes -= e.getValue.data.heapBytes; lru.remove() }
    }
    if (bytes > cap) entries.remove(key)
  }

  /** Reads column `i` (with the columns its layout holds together with it, [[IndexLayout.loadedWith]]). */
  private def read(spark: SparkSession, indexDir: Path, entry: LogEntry, i: Int): Map[Key, Entry] = {
    val data = entry.data.getOrElse(throw new IllegalStateException(s"version ${entry.version} has no data"))
    val spec = entry.spec
    val conf = spark.sessionState.newHadoopConf()
    val dir = IndexStore.dataDir(indexDir, data)
    val layout = IndexLayout.of(data)
    // A data folder with probe files is never encrypted (a build writes `columns` there when it
    // is: IndexLayout.forBuild), so its `_encryption` marker is not looked for (two requests on S3).
    val plan = if (layout.probed) None else IndexEncryption.plan(conf, dir.toString)
    val builders = layout.loadedWith(spec, i).map(c => c -> new ColumnData.Builder(spec.columns(c).name, spec.columns(c).algorithm)).toMap
    val t0 = System.nanoTime()
    val r = try layout.load(IndexLayout.Read(spark, conf, indexDir, data, spec), i, builders) catch {
      case NonFatal(e) if plan.isDefined => throw IndexEncryption.unreadable(spec.name, plan.get, e, IndexLayout.passing(e))
    }
    // A session without the keys reads nothing of an encrypted column: say so, not "damaged"
    // (unless every file failed for a reason that may pass: the store's, not the keys').
    if (r.failed > 0 && r.failed == r.files)
      plan.foreach(p => throw IndexEncryption.unreadable(spec.name, p, r.failure.get, forNow = r.forNow == r.failed))
    val failedFiles = r.failed
    val access = plan.map(_ => IndexEncryption.keyAccess(conf))
    val t1 = System.nanoTime()
    val done = builders.map { case (c, b) =>
      val d = b.result()
      val colName = spec.columns(c).name
      if (d.numFiles < data.indexedFiles) plan.foreach { p =>
        IndexEncryption.probe(conf, dir, p).foreach(e => throw IndexEncryption.unreadable(spec.name, p, e, IndexLayout.passing(e)))
      }
      if (d.unreadable > 0) IndexLog.warnOnce(s"bloomindex: index '${spec.name}' version ${entry.version}: " +
        s"${d.unreadable} filters unreadable (e.g. ${d.unreadableExample}); their files are read, not pruned. " +
        s"REFRESH BLOOM INDEX ${spec.name} FULL repairs it")
      if (d.unreadable == 0 && d.numFiles < data.indexedFiles) {
        IndexLog.warnOnce(s"bloomindex: index '${spec.name}' version ${entry.version}: column $colName: " +
          s"${data.indexedFiles - d.numFiles} of ${data.indexedFiles} indexed files have no index rows (index data " +
          s"missing or unreadable${if (failedFiles > 0) s": $failedFiles data files" else ""}); they are read, not " +
          s"pruned. REFRESH BLOOM INDEX ${spec.name} FULL repairs it")
      }
      val until = b.failedForNow.fold(Long.MaxValue) { why =>
        IndexLog.warnOnce(s"bloomindex: index '${spec.name}' version ${entry.version} column $colName: $why; the files " +
          s"it held are read, not pruned, and the column is loaded again after ${RetryFailedLoadMs / 1000} s")
        System.currentTimeMillis() + RetryFailedLoadMs
      }
      Key(indexDir.toString, entry.createdAt, entry.version, colName) -> Entry(d, access, until)
    }
    logInfo(f"bloomindex: index '${spec.name}' version ${entry.version} loaded " +
      f"(${builders.keys.map(spec.columns(_).name).mkString(", ")}): read ${(t1 - t0) / 1e6}%.1f ms, " +
      f"built ${(System.nanoTime() - t1) / 1e6}%.1f ms")
    done
  }
}
