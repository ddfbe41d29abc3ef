package bloomindex.catalog

import java.util.concurrent.ConcurrentHashMap

import scala.collection.mutable
import scala.util.control.NonFatal

import bloomindex.build.IndexStore
import bloomindex.crypto.IndexEncryption
import bloomindex.filter.BloomFilter
import bloomindex.log.{IndexLog, IndexSpec, LogEntry}

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession

/** One indexed file as queries need it: identity, and per column null count and filter. */
final class IndexedFile(
    val path: String,
    val size: Long,
    val modificationTime: Long,
    val rowCount: Long,
    val nullCounts: Array[Long],
    val filters: Array[BloomFilter])

/**
 * An ACTIVE index version loaded for probing: files by path, columns in spec order.
 * `keyAccess`: for encrypted index data, the crypto settings of the session that decrypted it.
 */
final class LoadedIndex(val entry: LogEntry, val files: Map[String, IndexedFile], val keyAccess: Option[String] = None) {
  def spec: IndexSpec = entry.spec
}

/**
 * Loaded index data, keyed by (index folder, log version): a query lists the index's log
 * (one listing) and reuses the loaded filters unless a newer version was committed. A version's
 * data never changes, so sessions of one JVM share it; only the newest version of each index
 * is kept.
 */
object IndexCache {

  private val cache = new ConcurrentHashMap[(String, Long), LoadedIndex]()

  /** Forgets every loaded version (tests: what a new driver would see). */
  def clear(): Unit = cache.clear()

  /** The loaded data of `version`, if this JVM has loaded it. */
  def get(indexDir: Path, version: Long): Option[LoadedIndex] = Option(cache.get((indexDir.toString, version)))

  def load(spark: SparkSession, log: IndexLog, entry: LogEntry): LoadedIndex = {
    val key = (log.indexDir.toString, entry.version)
    val hit = cache.get(key)
    // Decrypted data is shared only with sessions whose crypto settings are the same.
    if (hit != null && hit.keyAccess.forall(_ == IndexEncryption.keyAccess(spark.sessionState.newHadoopConf()))) return hit
    val loaded = read(spark, log.indexDir, entry)
    // Older versions of this index in this session are of no further use.
    cache.keySet().removeIf(k => k._1 == key._1 && k._2 != key._2)
    cache.put(key, loaded)
    loaded
  }

  private def read(spark: SparkSession, indexDir: Path, entry: LogEntry): LoadedIndex = {
    val data = entry.data.getOrElse(throw new IllegalStateException(s"version ${entry.version} has no data"))
    val cols = entry.spec.columns.map(_.name)
    val algorithms = entry.spec.columns.map(_.algorithm)
    val conf = spark.sessionState.newHadoopConf()
    val plan = IndexEncryption.plan(conf, IndexStore.dataDir(indexDir, data).toString)
    // Row by row, one partition of about 64 MB of filters at a time (not all rows at once,
    // then grouped): the driver holds the decoded filters plus one partition's rows. A job per
    // partition, so no more partitions than that (an index of 100,000 small files is one job).
    val partial = mutable.HashMap.empty[String, IndexedFile]
    var unreadable = 0
    var example = ""
    try {
      val rows = IndexStore.rows(spark, indexDir, data)
        .select("file_path", "file_size", "modification_time", "column", "row_count", "null_count", "filter")
        .coalesce(math.max(1L, data.filterBytes / (64L << 20) + 1).toInt)
        .toLocalIterator()
      while (rows.hasNext) {
        val r = rows.next()
        val i = cols.indexOf(r.getString(3))
        if (i >= 0) {
          val path = r.getString(0)
          val f = partial.getOrElseUpdate(path, new IndexedFile(path, r.getLong(1), r.getLong(2), r.getLong(4),
            new Array[Long](cols.size), new Array[BloomFilter](cols.size)))
          f.nullCounts(i) = r.getLong(5)
          // Sizes are checked before anything is allocated (at most 128 MiB, no more than stored).
          f.filters(i) = try algorithms(i).fromBytes(r.getAs[Array[Byte]](6)) catch {
            case NonFatal(e) =>
              unreadable += 1
              if (example.isEmpty) example = s"$path column ${cols(i)}: ${e.getMessage}"
              null
          }
        }
      }
    } catch {
      case NonFatal(e) if plan.isDefined => throw IndexEncryption.unreadable(entry.spec.name, plan.get, e)
    }
    // A file the index cannot vouch for on every column is treated as not indexed.
    val byFile = partial.iterator.filter(_._2.filters.forall(_ != null)).toMap
    val name = entry.spec.name
    // Rows missing from encrypted data: first, whether this session can decrypt it at all.
    if (byFile.size < data.indexedFiles) plan.foreach { p =>
      IndexEncryption.probe(conf, IndexStore.dataDir(indexDir, data), p).foreach(e => throw IndexEncryption.unreadable(name, p, e))
    }
    if (unreadable > 0) IndexLog.warnOnce(s"bloomindex: index '$name' version ${entry.version}: $unreadable " +
      s"filters unreadable (e.g. $example); their files are read, not pruned. REFRESH BLOOM INDEX $name FULL repairs it")
    if (unreadable == 0 && byFile.size < data.indexedFiles) {
      IndexLog.warnOnce(s"bloomindex: index '$name' version ${entry.version}: ${data.indexedFiles - byFile.size} of " +
        s"${data.indexedFiles} indexed files have no index rows (index data missing or unreadable); they are read, " +
        s"not pruned. REFRESH BLOOM INDEX $name FULL repairs it")
    }
    new LoadedIndex(entry, byFile, plan.map(_ => IndexEncryption.keyAccess(conf)))
  }
}
