package bloomindex.layout

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper

import bloomindex.crypto.IndexEncryption
import bloomindex.log.{Checksums, IndexSpec}
import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * What one version's index data holds, written by the build next to the data
 * (`_summary.json`, log format 3 on): per column, how many files it has a row for, their filter
 * bytes, how many came from Parquet footers, the column's data files and (layout `blocks`)
 * probe files ([[ProbeFile]]) with their sizes. DESCRIBE reads it instead of every filter; a
 * query reads the names of the files of the columns it probes from it instead of listing their
 * folders. Version 2 (log format 6 on) ends with its checksum ([[Checksums.seal]]).
 */
final case class ColumnSummary(files: Long, filterBytes: Long, filesFromFooter: Long, dataFiles: Map[String, Long],
    probeFiles: Map[String, Long] = Map.empty, reused: Map[String, Long] = Map.empty) {

  /**
   * Every probe file the column holds, with its length: its own (in `folder`, the column's
   * folder of this version) and those an incremental refresh kept from earlier versions
   * ([[reused]], relative to the index's folder `indexDir`).
   */
  def allProbeFiles(indexDir: Path, folder: Path): Seq[(Path, Long)] =
    probeFiles.toSeq.sortBy(_._1).map { case (f, n) => (new Path(folder, f), n) } ++
      reused.toSeq.sortBy(_._1).map { case (f, n) => (new Path(indexDir, f), n) }
}

/**
 * Probe files of earlier versions an incremental refresh keeps as they are (every file they
 * hold is unchanged), by column: path relative to the index's folder -> length; and the rows
 * they hold (for the summary's and the log entry's counts).
 */
final case class ReusedProbes(files: Map[String, Map[String, Long]], rows: Seq[IndexFiles.RowWritten]) {
  /** The data folders (relative to the index's folder) the kept probe files lie in. */
  def folders: Seq[String] = files.valuesIterator.flatMap(_.keysIterator).map(ReusedProbes.folderOf).toSeq.distinct.sorted
}

final case class IndexSummary(columns: Map[String, ColumnSummary])

object ReusedProbes {
  val None: ReusedProbes = ReusedProbes(Map.empty, Nil)
  /** `data/<operation>/column=<c>/<file>` -> `data/<operation>`. */
  def folderOf(rel: String): String = rel.split('/').take(2).mkString("/")
}

object IndexSummary {

  val FileName = "_summary.json"
  /** Summaries above this are damage, not read (100,000 data files per column is about 8 MB). */
  private val MaxBytes = 64 << 20
  private val mapper = new ObjectMapper()

  def path(dir: Path): Path = new Path(dir, FileName)

  /**
   * Writes the summary of the rows `written` into `dir`, listing each column's folder for its
   * data files (after every write of the build).
   */
  def write(conf: Configuration, dir: String, spec: IndexSpec, written: Seq[IndexFiles.RowWritten],
      reused: ReusedProbes = ReusedProbes.None): IndexSummary = {
    val d = new Path(dir)
    val fs = d.getFileSystem(conf)
    val byColumn = (written ++ reused.rows).groupBy(_.column)
    val summary = IndexSummary(spec.columns.map { c =>
      val rows = byColumn.getOrElse(c.name, Nil)
      val folder = IndexEncryption.columnFolder(d, c.name)
      val listed = if (!fs.exists(folder)) Array.empty[(String, Long)]
        else fs.listStatus(folder).filter(_.isFile).map(s => s.getPath.getName -> s.getLen)
      c.name -> ColumnSummary(rows.size.toLong, rows.iterator.map(_.filterBytes.toLong).sum,
        rows.count(_.fromFooter).toLong, listed.filter(_._1.endsWith(".parquet")).toMap,
        listed.filter(_._1.endsWith(ProbeFile.Suffix)).toMap, reused.files.getOrElse(c.name, Map.empty))
    }.toMap)
    val o = mapper.createObjectNode()
    o.put("version", 2)
    val cols = o.putObject("columns")
    summary.columns.toSeq.sortBy(_._1).foreach { case (name, s) =>
      val co = cols.putObject(name)
      co.put("files", s.files)
      co.put("filterBytes", s.filterBytes)
      co.put("filesFromFooter", s.filesFromFooter)
      val df = co.putObject("dataFiles")
      s.dataFiles.toSeq.sortBy(_._1).foreach { case (f, n) => df.put(f, n) }
      if (s.probeFiles.nonEmpty) {
        val pf = co.putObject("probeFiles")
        s.probeFiles.toSeq.sortBy(_._1).foreach { case (f, n) => pf.put(f, n) }
      }
      if (s.reused.nonEmpty) {
        val rp = co.putObject("reusedProbeFiles")
        s.reused.toSeq.sortBy(_._1).foreach { case (f, n) => rp.put(f, n) }
      }
    }
    val out = fs.create(path(d), false)
    try out.write(Checksums.seal(mapper.writeValueAsString(o)).getBytes(UTF_8)) finally out.close()
    summary
  }

  /**
   * Reads the summary in `dir`; an IllegalStateException says what is wrong with it (a
   * [[Checksums.Mismatch]] that it fails its checksum). A checksum is required with
   * `checksums` (data of log format 6 on) and in a summary of version 2 on.
   */
  def read(conf: Configuration, dir: Path, checksums: Boolean = false): IndexSummary = {
    val p = path(dir)
    val fs = p.getFileSystem(conf)
    val st = fs.getFileStatus(p)
    val len = st.getLen
    if (len > MaxBytes) throw new IllegalStateException(s"$p: $len bytes, more than a summary may hold")
    val bytes = new Array[Byte](len.toInt)
    // Opened with its status: no second request for its length (S3A: HEAD, then the GET only).
    val in = bloomindex.log.LogStore.openWhole(fs, st)
    try in.readFully(0, bytes) finally in.close()
    val text = new String(bytes, UTF_8)
    val root = try mapper.readTree(text) catch {
      case e: Exception => throw new IllegalStateException(s"$p is not valid JSON (${e.getMessage.linesIterator.next()})")
    }
    def bad(what: String) = throw new IllegalStateException(s"$p: $what")
    if (root == null || !root.isObject) bad("not a JSON object")
    val version = root.path("version")
    Checksums.verify(text, checksums || !version.isIntegralNumber || version.asLong != 1, s"$p")
    if (!root.path("columns").isObject) bad("no columns")
    IndexSummary(root.get("columns").properties().asScala.map { e =>
      val c = e.getValue
      def num(f: String): Long = { val n = c.get(f); if (n == null || !n.canConvertToLong) bad(s"${e.getKey}.$f is not a number"); n.asLong }
      def sizes(field: String, optional: Boolean): Map[String, Long] = c.get(field) match {
        case null if optional => Map.empty
        case o if o == null || !o.isObject => bad(s"${e.getKey}.$field is not an object")
        case o => o.properties().asScala.map { f =>
          if (!f.getValue.canConvertToLong) bad(s"${e.getKey}.$field.${f.getKey} is not a number")
          f.getKey -> f.getValue.asLong
        }.toMap
      }
      e.getKey -> ColumnSummary(num("files"), num("filterBytes"), num("filesFromFooter"),
        sizes("dataFiles", optional = false), sizes("probeFiles", optional = true),
        sizes("reusedProbeFiles", optional = true).map { case (f, n) =>
          // Kept files lie in the index's own data folders, never elsewhere.
          if (!f.matches("data/[A-Za-z0-9_-]+/column=[^/]+/[^/]+") || f.contains("..")) bad(s"${e.getKey}.reusedProbeFiles: '$f'")
          f -> n
        })
    }.toMap)
  }
}
