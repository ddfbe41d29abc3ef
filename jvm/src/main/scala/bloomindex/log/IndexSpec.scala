package bloomindex.log

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
 * index may be stored unencrypted although source columns are encrypted ([[bloomindex.crypto.IndexEncryption]]).
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
 * `decoding`: how the build decoded each indexed column ([[Decoding]]); absent
 * in entries written before it was recorded (log format 1), which no query uses. `layout`:
 * how the data folder holds the rows ([[IndexData.Rows]] before log format 3).
 */
case class IndexData(
    dir: String,
    indexedFiles: Long,
    indexedBytes: Long,
    filterBytes: Long,
    filesFromFooters: Long,
    globalNdv: Map[String, Long],
    tableVersion: Option[Long] = None,
    decoding: Option[Decoding] = None,
    layout: String = IndexData.Columns)

object IndexData {
  /** Log format 1 and 2: every column's rows in the same files (`file_path, ..., column, ...`). */
  val Rows = "rows"
  /**
   * Log format 3 on: one folder per column (`column=<name>/`, files without the `column` field)
   * and a summary (`_summary.json`, [[bloomindex.layout.IndexSummary]]): a query reads only the
   * columns it probes, DESCRIBE only the summary.
   */
  val Columns = "columns"
  /**
   * Log format 4 on: [[Columns]], and next to each Parquet file of a column its filters
   * block-major ([[bloomindex.layout.ProbeFile]], listed in the summary): a query reads the
   * files' identities and only the filter blocks its hashes land in.
   */
  val Blocks = "blocks"
  /**
   * Log format 5 on: one folder per column and a summary as in [[Columns]], but a column's
   * files are probe files only ([[bloomindex.layout.ProbeFile]], format 2): the filters are
   * stored once, block-major, with each file's identity, counts, ndv and origin in the footers.
   */
  val Probes = "probes"
  val all: Set[String] = Set(Rows, Columns, Blocks, Probes)

  /** Whether the data folder has one folder per column and a summary. */
  def perColumn(layout: String): Boolean = layout == Columns || layout == Blocks || layout == Probes

  /** Whether queries read the filters from probe files ([[Blocks]], [[Probes]]). */
  def probed(layout: String): Boolean = layout == Blocks || layout == Probes
}

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

/**
 * What decides the value a row's bytes become for one column of a scan: everything a filter's
 * values depend on besides the bytes themselves. Recorded per indexed column when an index is
 * built ([[Decoding]] in the log entry's data, by [[bloomindex.source.DecodingContext]]) and compared with the scan's at query time.
 *
 * @param name      the column exactly as the source's schema spells it (case included)
 * @param dataType  its Spark type, as DDL
 * @param physical  where the format stores it, when that is not simply `name`: for Delta
 *                  column mapping `physicalName` and `fieldId`; for Parquet field ids `fieldId`
 * @param settings  the session settings that change this format's decoding of this type,
 *                  with their effective values ([[bloomindex.source.DecodingContext.settingsFor]])
 * @param options   the reader options that may change this column's values (lower-case keys)
 */
final case class ColumnDecoding(
    name: String,
    dataType: String,
    physical: Map[String, String],
    settings: Map[String, String],
    options: Map[String, String])

/** The decoding context of an index version (or of a scan): the format, and per column. */
final case class Decoding(format: String, columns: Seq[ColumnDecoding]) {
  def column(name: String): Option[ColumnDecoding] = columns.find(_.name == name)
}
