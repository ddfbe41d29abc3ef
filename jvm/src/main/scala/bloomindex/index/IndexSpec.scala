package bloomindex.index

import java.util.Locale

import bloomindex.filter.FilterAlgorithm
import bloomindex.sbbf.SbbfSizing.Sizing

/**
 * One indexed column: its name as the source spells it, its Spark type (DDL), sizing and
 * the Bloom filter design of its filters (`sbbf` unless the index's options chose another).
 */
case class ColumnSpec(
    name: String,
    dataType: String,
    fpp: Double,
    ndv: Option[Long],
    sizing: Sizing,
    algorithm: FilterAlgorithm = FilterAlgorithm.Default)

/**
 * Where the indexed files come from. `table` is set for catalog tables (qualified name);
 * `paths` are the root paths the source lists files under; `options` the reader options
 * (CSV headers and the like) needed to read them back.
 */
case class SourceSpec(
    table: Option[String],
    format: String,
    paths: Seq[String],
    options: Map[String, String],
    partitionColumns: Seq[String]) {

  /** How users name the source: the table, or `format.`path``. */
  def display: String = table.getOrElse(s"$format.`${paths.mkString(",")}`")
}

/**
 * What an index is: fixed at CREATE, carried by every log entry. `allowUnencrypted`: the
 * index may be stored unencrypted although source columns are encrypted ([[IndexEncryption]]).
 */
case class IndexSpec(name: String, source: SourceSpec, columns: Seq[ColumnSpec], global: Boolean,
    allowUnencrypted: Boolean = false) {
  def column(name: String): Option[ColumnSpec] =
    columns.find(_.name.toLowerCase(Locale.ROOT) == name.toLowerCase(Locale.ROOT))
}

/** Index states, as in Hyperspace: transient ones while a command runs, stable ones after. */
object IndexState {
  val Creating = "CREATING"
  val Refreshing = "REFRESHING"
  val Active = "ACTIVE"
  val Deleted = "DELETED"
  val all: Set[String] = Set(Creating, Refreshing, Active, Deleted)
  def isStable(s: String): Boolean = s == Active || s == Deleted
}

/**
 * The data of an ACTIVE version: a folder of index Parquet files, relative to the index's folder.
 * `tableVersion` is the version of the table's snapshot the files were taken from (Delta Lake
 * sources only; absent in entries written before it existed and for plain file sources).
 * `decoding`: how the build decoded each indexed column ([[bloomindex.source.Decoding]]); absent
 * in entries written before it was recorded (log format 1), which no query uses.
 */
case class IndexData(
    dir: String,
    indexedFiles: Long,
    indexedBytes: Long,
    filterBytes: Long,
    filesFromFooters: Long,
    globalNdv: Map[String, Long],
    tableVersion: Option[Long] = None,
    decoding: Option[bloomindex.source.Decoding] = None)

/**
 * One committed log entry: version N of the index's history. Written once, never changed.
 * `data` is set on ACTIVE entries (and kept on the transient entries that follow, so readers
 * can go on using the last good data).
 */
case class LogEntry(
    version: Long,
    state: String,
    operation: String,
    operationId: String,
    timestamp: Long,
    createdAt: Long,
    spec: IndexSpec,
    data: Option[IndexData])
