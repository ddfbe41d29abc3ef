package bloomindex.catalog

import java.util.{LinkedHashMap => JLinkedHashMap, Map => JMap}

import bloomindex.layout.IndexStore
import bloomindex.crypto.IndexEncryption
import bloomindex.errors.BloomIndexErrors
import bloomindex.filter.{BloomFilter, FilterAlgorithm}
import bloomindex.log.LogEntry

import org.apache.spark.SparkContext
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types.DataType

/**
 * One column's table-wide filter in one committed version of an index; `createdAt` the index's
 * history (an index folder removed and the index created again restarts its versions).
 */
final case class GlobalFilterRef(index: String, indexDir: String, createdAt: Long, version: Long, column: String,
    dataType: DataType) {
  override def toString: String = s"$index.$column v$version"
}

/**
 * A global filter as queries use it: its bitset is broadcast once (per Spark application and
 * index version) and read on each executor where it lies, without a copy per task.
 * Equal when the references are: two plans over the same version share one broadcast.
 * Its keys are hashed with `algorithm.hash`, the column's filter design's.
 */
final class GlobalFilter(
    val ref: GlobalFilterRef,
    val numBytes: Int,
    val algorithm: FilterAlgorithm,
    bits: Broadcast[AnyRef]) extends Serializable {

  @transient private lazy val bf: BloomFilter = algorithm.wrapShared(bits.value)

  def filter: BloomFilter = bf

  override def equals(o: Any): Boolean = o match {
    case g: GlobalFilter => g.ref == ref
    case _ => false
  }
  override def hashCode(): Int = ref.hashCode()
  override def toString: String = ref.toString
}

object GlobalFilter {

  /** Forgets the loaded global filters (tests: what a new driver would see). */
  def clearCache(): Unit = cache.synchronized(cache.clear())

  private val MaxCached = 32

  // LRU of the broadcasts this driver made; an evicted one is cleaned up by Spark once no
  // plan refers to it any more. Keyed also by the session's Parquet crypto settings: the
  // filter of an encrypted index goes only to sessions that could decrypt it themselves.
  private val cache = new JLinkedHashMap[(SparkContext, GlobalFilterRef, String), GlobalFilter](16, 0.75f, true) {
    override def removeEldestEntry(e: JMap.Entry[(SparkContext, GlobalFilterRef, String), GlobalFilter]): Boolean =
      size() > MaxCached
  }

  /**
   * The global filter of `column` in version `entry` of the index in `indexDir`: read (one
   * small Parquet file) and broadcast on first use. Fails when the entry has no global filter
   * for the column.
   */
  def load(spark: SparkSession, indexDir: String, entry: LogEntry, column: String): GlobalFilter = {
    val spec = entry.spec
    val col = spec.column(column).getOrElse(
      throw BloomIndexErrors.columnNotFound(spec.name, column))
    if (!spec.global) throw BloomIndexErrors.notGlobal(spec.name)
    val data = entry.data.getOrElse(
      throw BloomIndexErrors.damaged(spec.name, s"version ${entry.version} has no data"))
    val ref = GlobalFilterRef(spec.name, indexDir, entry.createdAt, entry.version, col.name, DataType.fromDDL(col.dataType))
    val key = (spark.sparkContext, ref, IndexEncryption.keyAccess(spark.sessionState.newHadoopConf()))
    cache.synchronized(Option(cache.get(key))).getOrElse {
      val bytes = IndexStore.globalFilters(spark, new org.apache.hadoop.fs.Path(indexDir), data).getOrElse(col.name,
        throw BloomIndexErrors.damaged(spec.name, s"version ${entry.version} lacks the global filter of '${col.name}'"))
      val f = col.algorithm.fromBytes(bytes)
      val loaded = new GlobalFilter(ref, f.numBytes, col.algorithm, spark.sparkContext.broadcast(col.algorithm.shared(f)))
      cache.synchronized {
        Option(cache.get(key)).getOrElse { cache.put(key, loaded); loaded }
      }
    }
  }
}
