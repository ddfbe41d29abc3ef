package bloomindex.catalog

import java.util.{LinkedHashMap => JLinkedHashMap}

import scala.util.control.NonFatal

import bloomindex.layout.{BlockFilters, ColumnData, IndexStore, IndexSummary, ProbeFile}
import bloomindex.config.BloomIndexConf
import bloomindex.crypto.IndexEncryption
import bloomindex.log.{ColumnSpec, IndexData, IndexLog, LogEntry}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession

/**
 * Loaded index data, one entry per (index folder, log version, column): a query loads only the
 * columns it probes ([[IndexData.Columns]] layout: one folder per column, read on the driver
 * without a Spark job, [[IndexStore.readColumn]]), each in the compact [[ColumnData]] form.
 * A version's data never changes, so sessions of one JVM share it.
 *
 * Bounded: at most `spark.bloomindex.cache.maxBytes` of [[ColumnData.heapBytes]] in all,
 * least recently used dropped first; loading a version of an index drops the other versions
 * of that index, so nothing grows with the versions a long session has seen. Entries of
 * encrypted data are shared only with sessions whose crypto settings are the same.
 */
object IndexCache {

  private final case class Key(indexDir: String, version: Long, column: String)
  private final case class Entry(data: ColumnData, keyAccess: Option[String])

  private val entries = new JLinkedHashMap[Key, Entry](16, 0.75f, true)
  // The newest version seen of each index folder (warm path: no log entry re-read).
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

  /** The log entry of `version`, if this JVM has loaded data of it. */
  def get(indexDir: Path, version: Long): Option[LogEntry] = Option(entriesSeen.get((indexDir.toString, version)))

  /**
   * Column `column` (index in the spec) of `entry`'s data: from the cache, or loaded. Throws
   * when the data cannot be read at all (encrypted and this session has no keys).
   */
  def column(spark: SparkSession, log: IndexLog, entry: LogEntry, column: Int): ColumnData = {
    val dir = log.indexDir.toString
    val name = entry.spec.columns(column).name
    val key = Key(dir, entry.version, name)
    lazy val conf = spark.sessionState.newHadoopConf()
    val hit = synchronized(Option(entries.get(key)))
    if (hit.exists(_.keyAccess.forall(_ == IndexEncryption.keyAccess(conf)))) {
      evict(BloomIndexConf.cacheMaxBytes(spark), key) // what the column fetched since counts now
      return hit.get.data
    }
    val loaded = read(spark, log.indexDir, entry, column)
    val cap = BloomIndexConf.cacheMaxBytes(spark)
    synchronized {
      // Other versions of this index are of no further use.
      val it = entries.entrySet().iterator()
      while (it.hasNext) {
        val e = it.next()
        if (e.getKey.indexDir == dir && e.getKey.version != entry.version) it.remove()
      }
      entriesSeen.keySet().removeIf(k => k._1 == dir && k._2 != entry.version)
      entriesSeen.put((dir, entry.version), entry)
      loaded.foreach { case (k, e) => entries.put(k, e) }
      evict(cap, key)
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

  /** Reads column `i` (every column, for the [[IndexData.Rows]] layout, which holds them together). */
  private def read(spark: SparkSession, indexDir: Path, entry: LogEntry, i: Int): Map[Key, Entry] = {
    val data = entry.data.getOrElse(throw new IllegalStateException(s"version ${entry.version} has no data"))
    val spec = entry.spec
    val conf = spark.sessionState.newHadoopConf()
    val dir = IndexStore.dataDir(indexDir, data)
    val plan = IndexEncryption.plan(conf, dir.toString)
    val wanted = if (data.layout == IndexData.Rows) spec.columns.indices else Seq(i)
    val builders = wanted.map(c => c -> new ColumnData.Builder(spec.columns(c).name, spec.columns(c).algorithm)).toMap
    var failedFiles = 0
    try {
      if (data.layout == IndexData.Rows) readRows(spark, indexDir, data, builders)
      else if (IndexData.probed(data.layout) && readProbed(spark, conf, dir, spec.name, spec.columns(i), builders(i),
        data.layout == IndexData.Probes)) ()
      else {
        val c = spec.columns(i).name
        val r = IndexStore.readColumn(spark, conf, dir, c, IndexStore.columnFiles(conf, dir, c),
          BloomIndexConf.loadThreads(spark), BloomIndexConf.loadDriverMaxFiles(spark), builders(i).add)
        failedFiles = r.failed
        // A session without the keys reads nothing of an encrypted column: say so, not "damaged".
        if (r.failed > 0 && r.failed == r.files) plan.foreach(p => throw IndexEncryption.unreadable(spec.name, p, r.failure.get))
      }
    } catch {
      case NonFatal(e) if plan.isDefined => throw IndexEncryption.unreadable(spec.name, plan.get, e)
    }
    val access = plan.map(_ => IndexEncryption.keyAccess(conf))
    builders.map { case (c, b) =>
      val d = b.result()
      val colName = spec.columns(c).name
      if (d.numFiles < data.indexedFiles) plan.foreach { p =>
        IndexEncryption.probe(conf, dir, p).foreach(e => throw IndexEncryption.unreadable(spec.name, p, e))
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
      Key(indexDir.toString, entry.version, colName) -> Entry(d, access)
    }
  }

  /**
   * The [[IndexData.Probes]] and [[IndexData.Blocks]] layouts: the footers of the column's probe
   * files (the files' identities, counts and places in the block matrices), read in parallel;
   * the filters stay in the files ([[BlockFilters]]). Returns whether the column is loaded. In
   * the `blocks` layout, false (and one warning) when the summary or a footer is unreadable: the
   * column's Parquet files are then read as for the `columns` layout. In the `probes` layout
   * (`only`: the probe files are all there is) always true: a probe file that is missing or
   * damaged is left out, so the files it held are read, not pruned; an unreadable summary leaves
   * the column holding no file (every file is read).
   */
  private def readProbed(spark: SparkSession, conf: Configuration, dir: Path, index: String, c: ColumnSpec,
      out: ColumnData.Builder, only: Boolean): Boolean = {
    val folder = IndexEncryption.columnFolder(dir, c.name)
    def warn(why: String, consequence: String): Unit =
      IndexLog.warnOnce(s"bloomindex: index '$index' column ${c.name}: $why; $consequence")
    val unpruned = s"read, not pruned. REFRESH BLOOM INDEX $index FULL repairs it"
    def fallBack(why: String): Boolean = {
      warn(why, if (only) s"its files are $unpruned" else "its Parquet files are read instead")
      only
    }
    val listed = try IndexSummary.read(conf, dir).columns.get(c.name).map(_.probeFiles.toSeq.sortBy(_._1)).getOrElse(Nil)
      catch { case NonFatal(e) => return fallBack(s"index summary unreadable (${e.getMessage})") }
    if (listed.isEmpty) return only
    // `blocks`, more files than the driver reads itself: a Spark job reads the Parquet files instead.
    if (!only && listed.size > BloomIndexConf.loadDriverMaxFiles(spark)) return false
    val paths = listed.map(f => new Path(folder, f._1)).toArray
    val lengths = listed.map(_._2).toArray
    val threads = BloomIndexConf.loadThreads(spark)
    val read = ProbeFile.readEachFooter(conf, paths.toSeq.zip(lengths), threads, c.algorithm)
    IndexStore.countLoaded(folder.getName, paths.length, read.iterator.flatMap(_.toOption).map(_.bytesRead).sum)
    val good = read.indices.filter(k => read(k).isRight)
    if (good.size < read.length) {
      val e = read.collectFirst { case Left(e) => e }.get
      if (!only) return fallBack(s"probe file unreadable (${e.getMessage})")
      warn(s"${read.length - good.size} of ${read.length} probe files unreadable (${e.getMessage})",
        s"the files they held are $unpruned")
    }
    BlockFilters.addTo(out, c.algorithm, conf, folder.getName, good.map(paths).toArray, good.map(lengths).toArray,
      good.map(k => read(k).toOption.get).toArray, threads, BloomIndexConf.cacheMaxBytes(spark))
    true
  }

  /**
   * The [[IndexData.Rows]] layout (log format 1 and 2), read as before: every column's rows,
   * streamed in partitions of about 64 MB of filters.
   */
  private def readRows(spark: SparkSession, indexDir: Path, data: IndexData, builders: Map[Int, ColumnData.Builder]): Unit = {
    val rows = IndexStore.rows(spark, indexDir, data)
      .select("file_path", "file_size", "modification_time", "column", "row_count", "null_count", "filter")
      .coalesce(math.max(1L, data.filterBytes / (64L << 20) + 1).toInt)
      .toLocalIterator()
    val columnOf = builders.values.map(b => b.column -> b).toMap
    while (rows.hasNext) {
      val r = rows.next()
      columnOf.get(r.getString(3)).foreach(_.add(r.getString(0), r.getLong(1), r.getLong(2), r.getLong(4), r.getLong(5),
        r.getAs[Array[Byte]](6)))
    }
  }
}
