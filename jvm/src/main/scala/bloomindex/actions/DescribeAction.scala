package bloomindex.actions

import scala.util.control.NonFatal

import scala.jdk.CollectionConverters._

import bloomindex.layout.{ColumnSummary, IndexLayout, IndexStore, IndexSummary}
import bloomindex.crypto.IndexEncryption
import bloomindex.errors.BloomIndexErrors
import bloomindex.log.{ColumnSpec, IndexData, IndexSpec, IndexState}
import bloomindex.source.{SourceFile, SourceResolver}

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions._

/**
 * DESCRIBE BLOOM INDEX: what the log says of the index and, for the version queries use, what
 * its data holds and whether it is healthy, from the log, the index's summary and its files'
 * footers: its cost does not grow with the source. EXTENDED also lists the source (as a query
 * would: at 100,000 local files that alone takes 1.5 s, on an object store far more) and says how
 * many of its files the index does not hold as they are now, and how many it holds that are
 * gone (plus the table's current version, for a table format that has versions). Reads only; commits nothing.
 */
final class DescribeAction(ctx: ActionContext, extended: Boolean = false) {

  /**
   * DESCRIBE BLOOM INDEX as (key, value) pairs, in display order. `damage` is "none" or what
   * is wrong with the version queries use: damaged log entries after the newest readable one,
   * missing or unreadable index data, filters that do not deserialize (all checked here).
   */
  def run(): Seq[(String, String)] = {
    val name = ctx.name
    val l = ctx.log
    val head = l.head().getOrElse(throw BloomIndexErrors.notFound(name))
    val latest = head.entry.getOrElse(throw BloomIndexErrors.damaged(name,
      s"cannot be described: no log entry is readable (${ctx.damageNote(head.damaged)})"))
    if (latest.state == IndexState.Deleted && head.damaged.isEmpty) throw BloomIndexErrors.notFound(name)
    val active = l.lastActive()
    val spec = latest.spec
    val damage = Seq.newBuilder[String]
    head.damaged.foreach { case (v, why) => damage += s"log version $v unreadable: $why" }
    val out = Seq.newBuilder[(String, String)]
    out += "name" -> spec.name
    out += "source" -> spec.source.display
    out += "format" -> spec.source.format
    out += "state" -> latest.state
    out += "log_version" -> head.version.toString
    out += "active_version" -> active.map(_.version.toString).getOrElse("none")
    out += "created" -> new java.sql.Timestamp(latest.createdAt).toString
    out += "refreshed" -> active.map(e => new java.sql.Timestamp(e.timestamp).toString).getOrElse("never")
    out += "last_operation" -> latest.operation
    // A transient head: a command running in some process, or one that stopped before its commit
    // (nothing tells the two apart but how long ago it started).
    if (!IndexState.isStable(latest.state)) {
      out += "command_in_progress" -> (s"${latest.operation} at log version ${latest.version}, started " +
        s"${new java.sql.Timestamp(latest.timestamp)} (${DescribeAction.age(ctx.now() - latest.timestamp)} ago): " +
        "running, or stopped before its commit; REFRESH BLOOM INDEX takes over a stopped one")
    }
    out += "columns" -> spec.columns.map(_.display).mkString(", ")
    out += "global" -> spec.global.toString
    out += "refresh" -> spec.refresh.name
    WriteEvents.lastFailure(new bloomindex.log.IndexRoot(ctx.spark).root.toString, name).foreach(f => out += "automatic_refresh_failed" -> f)
    out += "encryption" -> active.flatMap(_.data).flatMap(d => IndexEncryption.plan(ctx.hadoopConf, IndexStore.dataDir(l.indexDir, d).toString))
      .map(p => p.columnKeys.toSeq.sorted.map { case (c, k) => s"$c (key $k)" }.mkString(", ")).getOrElse("none")
    // Log format 6 on: checksums in every index file; older versions have none (a REFRESH writes them).
    out += "checksums" -> active.flatMap(_.data).map { d =>
      if (d.checksums) "CRC32C (log entries, summary, probe files, global filters)"
      else s"none (written before log format ${bloomindex.log.LogJson.ChecksumsSince}; the next REFRESH writes them)"
    }.getOrElse("none")
    val details = Seq.newBuilder[(String, String)]
    val dataDir = active.flatMap(_.data).map(IndexStore.dataDir(l.indexDir, _))
    // Log format 3 on: the summary the build wrote, not every filter.
    val summary = active.flatMap(_.data).filter(d => IndexLayout.of(d).perColumn).flatMap { _ =>
      try Some(IndexSummary.read(ctx.hadoopConf, dataDir.get, active.flatMap(_.data).exists(_.checksums))) catch {
        case NonFatal(e) => damage += s"index summary unreadable (${e.getMessage}); the data was checked instead"; None
      }
    }
    (active.flatMap(_.data), summary) match {
      case (Some(d), Some(sum)) =>
        describeSummary(l.indexDir, spec, d, sum, details, damage)
      case (Some(d), None) =>
        val rows = try Some(IndexStore.rows(ctx.spark, l.indexDir, d).cache()) catch {
          case NonFatal(e) => damage += s"index data ${d.dir} unreadable: ${e.getMessage.linesIterator.next()}"; None
        }
        rows.foreach { rows => try describeData(l.indexDir, spec, d, rows, details, damage) finally rows.unpersist() }
        if (rows.isEmpty) details += "files_indexed" -> "0"
      case (None, _) =>
        details += "files_indexed" -> "0"
    }
    val problems = damage.result()
    out += "damage" -> (if (problems.isEmpty) "none" else problems.mkString("; "))
    out.result() ++ details.result()
  }

  private def describeData(indexDir: Path, spec: IndexSpec, d: IndexData, rows: DataFrame,
      out: scala.collection.mutable.Builder[(String, String), Seq[(String, String)]],
      damage: scala.collection.mutable.Builder[String, Seq[String]]): Unit = {
    val perColumn = rows.groupBy("column").agg(count(lit(1)), sum(length(col("filter"))),
      sum(when(col("built_from") === "footer", 1).otherwise(0))).collect()
      .map(r => r.getString(0) -> (r.getLong(1), r.getLong(2), r.getLong(3))).toMap
    val current = sizeLines(spec, d, out, listing(spec))
    current.foreach(freshnessLines(_, IndexStore.fileIdentities(rows), out))
    spec.columns.foreach { c =>
      val (files, bytes, fromFooter) = perColumn.getOrElse(c.name, (0L, 0L, 0L))
      columnLines(spec, d, c, files, bytes, fromFooter, out, damage)
    }
    IndexStore.unreadableFilters(rows, spec).foreach { case (n, example) =>
      damage += s"$n filters unreadable, e.g. $example"
    }
    globalLines(indexDir, spec, d, damage)
  }

  /**
   * DESCRIBE from the summary ([[IndexSummary]], log format 3 on) and the data files' own
   * metadata: each column's data files are listed and compared with the summary (missing,
   * changed), and their identity fields read (the filters are not), for the files the index
   * holds and for files that are not Parquet any more.
   */
  private def describeSummary(indexDir: Path, spec: IndexSpec, d: IndexData, summary: IndexSummary,
      out: scala.collection.mutable.Builder[(String, String), Seq[(String, String)]],
      damage: scala.collection.mutable.Builder[String, Seq[String]]): Unit = {
    val conf = ctx.hadoopConf
    val dir = IndexStore.dataDir(indexDir, d)
    val fs = dir.getFileSystem(conf)
    // The source is listed (a second or more at 100,000 files) while the index's files are read.
    val current = listing(spec)
    val known = java.util.concurrent.ConcurrentHashMap.newKeySet[(String, Long, Long)]()
    val columnsOut = Seq.newBuilder[(String, String)]
    spec.columns.foreach { c =>
      val s = summary.columns.getOrElse(c.name, ColumnSummary(0, 0, 0, Map.empty))
      val folder = IndexEncryption.columnFolder(dir, c.name)
      val listed = if (!fs.exists(folder)) Map.empty[String, Long]
        else fs.listStatus(folder).filter(_.isFile).map(f => f.getPath.getName -> f.getLen).toMap
      val missing = s.dataFiles.keys.filterNot(listed.contains).toSeq.sorted
      val changed = s.dataFiles.collect { case (f, n) if listed.get(f).exists(_ != n) => f }.toSeq.sorted
      if (missing.nonEmpty) damage += s"column ${c.name}: ${missing.size} of ${s.dataFiles.size} index data files " +
        s"missing (e.g. ${folder.getName}/${missing.head}); the files whose rows they held have no index row"
      if (changed.nonEmpty) damage += s"column ${c.name}: ${changed.size} index data files changed since the build " +
        s"(e.g. ${folder.getName}/${changed.head}: size differs); filters unreadable or wrong, their files are read"
      val present = s.dataFiles.keys.filter(f => listed.get(f).contains(s.dataFiles(f))).toSeq.sorted.map(new Path(folder, _))
      IndexLayout.of(d).describeColumn(IndexLayout.Describe(ctx.spark, conf, indexDir, dir, listed, s.probeFiles, s.reused,
        intact = missing.isEmpty && changed.isEmpty, known, damage += _, d.checksums), c, present)
      columnLines(spec, d, c, s.files, s.filterBytes, s.filesFromFooter, columnsOut, damage)
    }
    val files = sizeLines(spec, d, out, current)
    out ++= columnsOut.result()
    files.foreach(freshnessLines(_, known.asScala, out))
    globalLines(indexDir, spec, d, damage)
  }

  /**
   * EXTENDED: the source's current files and table version ([[SourceResolver.currentFiles]]),
   * listed on a thread of its own from now on; the function waits for them.
   */
  private def listing(spec: IndexSpec): Option[() => (Seq[SourceFile], Option[Long])] = if (!extended) None else {
    val spark = ctx.spark
    val result = new java.util.concurrent.CompletableFuture[(Seq[SourceFile], Option[Long])]()
    val t = new Thread(() => try {
      org.apache.spark.sql.SparkSession.setActiveSession(spark)
      result.complete(SourceResolver.currentFiles(spark, spec.source))
    } catch {
      case e: Throwable => result.completeExceptionally(e)
    }, "bloomindex-describe-listing")
    t.setDaemon(true)
    t.start()
    Some(() => try result.get() catch { case e: java.util.concurrent.ExecutionException => throw e.getCause })
  }

  /** The version's sizes and table versions, both layouts alike; returns the table's current files (EXTENDED). */
  private def sizeLines(spec: IndexSpec, d: IndexData,
      out: scala.collection.mutable.Builder[(String, String), Seq[(String, String)]],
      listed: Option[() => (Seq[SourceFile], Option[Long])]): Option[Seq[SourceFile]] = {
    out += "files_indexed" -> d.indexedFiles.toString
    out += "bytes_indexed" -> d.indexedBytes.toString
    out += "filter_bytes" -> d.filterBytes.toString
    // A file is "from footer" when none of its data was read: every column came from its footer.
    out += "files_from_footer" -> d.filesFromFooters.toString
    out += "files_from_data" -> (d.indexedFiles - d.filesFromFooters).toString
    d.tableVersion.foreach(v => out += "table_version" -> v.toString)
    listed.map { l =>
      val (current, currentVersion) = l()
      currentVersion.foreach(v => out += "table_current_version" -> v.toString)
      current
    }
  }

  /** How many of the table's files the index does not hold as they are, and how many it holds that are gone. */
  private def freshnessLines(current: Seq[SourceFile], known: scala.collection.Set[(String, Long, Long)],
      out: scala.collection.mutable.Builder[(String, String), Seq[(String, String)]]): Unit = {
    val stale = current.count(f => !known.contains((f.path, f.size, f.modificationTime)))
    val currentPaths = new java.util.HashSet[String](current.size * 2)
    current.foreach(f => currentPaths.add(f.path))
    val deleted = known.iterator.count(k => !currentPaths.contains(k._1))
    out += "files_new_or_changed" -> stale.toString
    out += "files_deleted" -> deleted.toString
  }

  private def columnLines(spec: IndexSpec, d: IndexData, c: ColumnSpec, files: Long, bytes: Long, fromFooter: Long,
      out: scala.collection.mutable.Builder[(String, String), Seq[(String, String)]],
      damage: scala.collection.mutable.Builder[String, Seq[String]]): Unit = {
    out += s"column.${c.name}.type" -> c.dataType
    out += s"column.${c.name}.fpp" -> AutoFpp.display(c)
    out += s"column.${c.name}.ndv" -> c.ndv.map(_.toString).getOrElse("per-file estimate")
    out += s"column.${c.name}.sizing" -> c.sizing.name
    out += s"column.${c.name}.algorithm" -> c.algorithm.name
    c.text.foreach { t =>
      out += s"column.${c.name}.text" -> s"${t.source} USING ${t.kindSql}: ${t.spec.settings}"
      out += s"column.${c.name}.text_fingerprint" -> t.spec.fingerprint
    }
    out += s"column.${c.name}.files" -> files.toString
    out += s"column.${c.name}.filter_bytes" -> bytes.toString
    out += s"column.${c.name}.files_from_footer" -> fromFooter.toString
    out += s"column.${c.name}.files_from_data" -> (files - fromFooter).toString
    // An encrypted column's count is kept out of the (plaintext) log.
    if (spec.global) out += s"column.${c.name}.global_ndv" -> d.globalNdv.get(c.name).map(_.toString).getOrElse("encrypted")
    if (files < d.indexedFiles) {
      damage += s"column ${c.name}: ${d.indexedFiles - files} of ${d.indexedFiles} indexed files have no index " +
        s"row (index data files under ${d.dir} missing or unreadable)"
    }
  }

  private def globalLines(indexDir: Path, spec: IndexSpec, d: IndexData,
      damage: scala.collection.mutable.Builder[String, Seq[String]]): Unit = {
    if (spec.global) {
      try {
        val g = IndexStore.globalFilters(ctx.spark, indexDir, d)
        spec.columns.foreach { c =>
          g.get(c.name) match {
            case None => damage += s"global filter of ${c.name} missing" + (if (d.checksums) " or failing its checksum" else "")
            case Some(b) => try c.algorithm.fromBytes(b) catch {
              case NonFatal(e) => damage += s"global filter of ${c.name} unreadable: ${e.getMessage}"
            }
          }
        }
      } catch {
        case NonFatal(e) => damage += s"global filters unreadable: ${e.getMessage.linesIterator.next()}"
      }
    }
  }
}

object DescribeAction {
  /** `ms` as a person reads it: `42 s`, `5 min 3 s`, `3 h 12 min`, `2 d 4 h` (negative, a clock behind: `0 s`). */
  def age(ms: Long): String = {
    val s = math.max(0L, ms) / 1000
    if (s < 60) s"$s s"
    else if (s < 3600) s"${s / 60} min ${s % 60} s"
    else if (s < 86400) s"${s / 3600} h ${s / 60 % 60} min"
    else s"${s / 86400} d ${s / 3600 % 24} h"
  }
}
