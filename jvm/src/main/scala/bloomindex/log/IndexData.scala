package bloomindex.log

/**
 * The data of an ACTIVE version: a folder of index Parquet files, relative to the index's folder.
 * `tableVersion` is the version of the table's snapshot the files were taken from (table formats
 * with versions only; absent in entries written before it existed and for plain file sources).
 * `decoding`: how the build decoded each indexed column ([[Decoding]]); absent
 * in entries written before it was recorded (log format 1), which no query uses. `layout`:
 * how the data folder holds the rows ([[IndexData.Rows]] before log format 3). `reused`: the
 * data folders of earlier versions (relative to the index's folder) whose probe files this
 * version holds too, as its summary lists them (an incremental refresh keeps the probe files
 * whose every file is unchanged instead of writing their rows again; layout [[IndexData.Probes]]
 * only). A reader that does not know the field holds fewer files: those are read, not pruned.
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
    layout: String = IndexData.Columns,
    reused: Seq[String] = Nil,
    checksums: Boolean = false) {
  /** Every data folder this version reads (relative to the index's folder). */
  def folders: Seq[String] = dir +: reused
}

/** The layouts' names as the log records them; what each does is [[bloomindex.layout.IndexLayout]]'s. */
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
}
