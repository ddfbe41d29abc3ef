package bloomindex.actions

import java.util.{Locale, UUID}

import scala.util.control.NonFatal

import bloomindex.build.{BuildResult, IndexBuilder, IndexStore}
import bloomindex.config.BloomIndexConf
import bloomindex.crypto.IndexEncryption
import bloomindex.errors.{BloomIndexErrors, ConcurrentBloomIndexUpdateException}
import bloomindex.filter.FilterAlgorithm
import bloomindex.hash.ParquetHash
import bloomindex.log.{ColumnSpec, Decoding, IndexData, IndexLog, IndexSpec, IndexState, LogEntry, SourceSpec}
import bloomindex.source.{DecodingContext, DeltaSource, SourceRef, SourceResolver}
import bloomindex.sbbf.SbbfSizing.Sizing

import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions._

/**
 * Creates, refreshes, drops and describes Bloom indexes: what the SQL commands and the
 * Python API both call. Every change is begin (a transient log entry) / build / end (the
 * ACTIVE or DELETED entry), each a separate atomic commit; see [[IndexLog]].
 *
 * {{{
 *   val m = new IndexManager(spark)
 *   m.create("orders_uid", SourceRef(Seq("orders")), Seq(ColumnRequest("user_id", Map.empty)), Map.empty)
 *   m.refresh("orders_uid", full = false)
 * }}}
 */
class IndexManager(spark: SparkSession) extends Logging {

  private def hadoopConf = spark.sessionState.newHadoopConf()

  lazy val root: Path = new Path(BloomIndexConf.root(spark))

  /** Index names are folder names: plain identifiers, nothing that could leave the root. */
  def checkName(name: String): Unit =
    if (name == null || !name.matches("[A-Za-z0-9_][A-Za-z0-9_-]{0,127}")) {
      throw BloomIndexErrors.analysis(
        s"Invalid Bloom index name '$name': use letters, digits, '_' and '-' (no path separators, " +
          "no '.', at most 128 characters)")
    }

  def log(name: String): IndexLog = {
    checkName(name)
    new IndexLog(new Path(root, name), hadoopConf)
  }

  /**
   * The log of an index a command is about to write. Names cannot leave the root; on local
   * files the index's folders must not be symbolic links either (one planted in the root
   * would send the writes elsewhere).
   */
  private def writableLog(name: String): IndexLog = {
    val l = log(name)
    val dir = l.indexDir
    if (dir.toUri.getScheme == null || dir.toUri.getScheme == "file") {
      Seq(dir, l.logDir, new Path(dir, "data")).map(p => java.nio.file.Paths.get(p.toUri.getPath))
        .find(java.nio.file.Files.isSymbolicLink).foreach { link =>
          throw BloomIndexErrors.analysis(
            s"Bloom index '$name': $link is a symbolic link; refusing to write outside ${BloomIndexConf.Root} ($root)")
        }
    }
    l
  }

  /** Whether `name` has a history whose newest readable entry is not a DROP (or has damage after it). */
  def exists(name: String): Boolean =
    log(name).head().exists(h => h.entry.exists(_.state != IndexState.Deleted) || h.damaged.nonEmpty)

  private def damageNote(damaged: Seq[(Long, String)]): String =
    damaged.map { case (v, why) => s"log version $v is damaged ($why)" }.mkString("; ")

  private def now(): Long = System.currentTimeMillis()

  // ---------------------------------------------------------------- create

  private val ColumnOptions = Set("fpp", "ndv", "numitems", "sizing", "algorithm")
  private val TableOptions = ColumnOptions + "global" + IndexEncryption.AllowOption

  /** Validates everything a CREATE names before anything is written. */
  def plan(name: String, source: SourceSpec, columns: Seq[ColumnRequest], options: Map[String, String],
      frame: Option[DataFrame] = None): IndexSpec = {
    checkName(name)
    val opts = lowerKeys(options, TableOptions, "index")
    val global = opts.get("global").map(v => parseBool("global", v)).getOrElse(false)
    val allowUnencrypted = opts.get(IndexEncryption.AllowOption).exists(v => parseBool(IndexEncryption.AllowOption, v))
    if (columns.isEmpty) throw BloomIndexErrors.analysis("FOR COLUMNS needs at least one column")
    val df = frame.getOrElse(SourceResolver.dataFrame(spark, source))
    val resolver = spark.sessionState.conf.resolver
    val seen = scala.collection.mutable.Set[String]()
    val specs = columns.map { c =>
      val field = df.schema.fields.find(f => resolver(f.name, c.name)).getOrElse(
        throw BloomIndexErrors.analysis(
          s"Column '${c.name}' does not exist in ${source.display} (columns: ${df.schema.fieldNames.mkString(", ")})"))
      if (!seen.add(field.name.toLowerCase(Locale.ROOT))) {
        throw BloomIndexErrors.analysis(s"Column '${field.name}' is listed twice")
      }
      if (source.partitionColumns.exists(p => resolver(p, field.name))) {
        throw BloomIndexErrors.analysis(
          s"Column '${field.name}' is a partition column of ${source.display}: partition pruning already skips files on it")
      }
      try ParquetHash.checkIndexable(field.dataType) catch {
        case e: IllegalArgumentException => throw BloomIndexErrors.analysis(
          s"Column '${field.name}' of type ${field.dataType.sql} cannot be indexed: ${e.getMessage.stripPrefix("type: ")}")
      }
      val colOpts = opts.filter { case (k, _) => k != "global" && k != IndexEncryption.AllowOption } ++ lowerKeys(c.options, ColumnOptions, s"column '${c.name}'")
      val fpp = colOpts.get("fpp").map(v => parseFpp(v)).getOrElse(BloomIndexConf.defaultFpp(spark))
      val ndv = colOpts.get("ndv").orElse(colOpts.get("numitems")).map(v => parseNdv(v))
      val sizing = colOpts.get("sizing").map { v =>
        try Sizing.fromName(v) catch { case e: IllegalArgumentException => throw BloomIndexErrors.analysis(
          s"Invalid sizing '$v': expected 'exact' or 'power-of-two'") }
      }.getOrElse(Sizing.Exact)
      val algorithm = colOpts.get("algorithm").map { v =>
        try FilterAlgorithm.fromName(v) catch { case _: IllegalArgumentException => throw BloomIndexErrors.analysis(
          s"Invalid algorithm '$v': expected one of ${FilterAlgorithm.names.map(n => s"'$n'").mkString(", ")}") }
      }.getOrElse(FilterAlgorithm.Default)
      // A design may not reach every target (classic: at most 64 hash functions): say so now.
      try algorithm.numBytes(1, fpp, sizing) catch { case e: IllegalArgumentException =>
        throw BloomIndexErrors.analysis(s"Invalid fpp '$fpp' for algorithm '${algorithm.name}': ${e.getMessage.stripPrefix("fpp: ")}") }
      ColumnSpec(field.name, field.dataType.sql, fpp, ndv, sizing, algorithm)
    }
    IndexSpec(name, source, specs, global, allowUnencrypted)
  }

  private def lowerKeys(options: Map[String, String], allowed: Set[String], where: String): Map[String, String] =
    options.map { case (k, v) =>
      val key = k.toLowerCase(Locale.ROOT)
      if (!allowed.contains(key)) throw BloomIndexErrors.analysis(
        s"Unknown option '$k' for $where (known: ${allowed.toSeq.sorted.mkString(", ")})")
      key -> v
    }

  private def parseFpp(v: String): Double = {
    val d = try v.trim.toDouble catch { case _: NumberFormatException => Double.NaN }
    if (!(d > 0 && d < 1)) throw BloomIndexErrors.analysis(s"Invalid fpp '$v': must be a number in (0, 1)")
    d
  }

  private def parseNdv(v: String): Long = {
    val n = try v.trim.toLong catch { case _: NumberFormatException => -1L }
    if (n <= 0) throw BloomIndexErrors.analysis(s"Invalid ndv '$v': must be a whole number > 0")
    n
  }

  private def parseBool(key: String, v: String): Boolean = v.trim.toLowerCase(Locale.ROOT) match {
    case "true" => true
    case "false" => false
    case _ => throw BloomIndexErrors.analysis(s"Invalid value '$v' for $key: expected true or false")
  }

  def create(
      name: String,
      source: SourceRef,
      columns: Seq[ColumnRequest],
      options: Map[String, String],
      ifNotExists: Boolean = false): Option[LogEntry] = {
    checkName(name)
    val (resolved, frame) = SourceResolver.resolveFrame(spark, source)
    createFromSpec(plan(name, resolved, columns, options, Some(frame)), ifNotExists, Some(frame))
  }

  /** `frame`: a DataFrame over the source, just resolved (see [[SourceResolver.resolveFrame]]). */
  def createFromSpec(spec: IndexSpec, ifNotExists: Boolean, frame: Option[DataFrame] = None): Option[LogEntry] = {
    val l = writableLog(spec.name)
    val head = l.head()
    // A damaged newest entry hides what it was: an index whose last readable state is live
    // still exists (REFRESH ... FULL repairs it, DROP removes it); a log with no readable
    // entry at all holds nothing to keep, and a new history starts after it.
    head.flatMap(h => h.entry.map(_ -> h.damaged)) match {
      case Some((e, damaged)) if e.state == IndexState.Active || e.state == IndexState.Refreshing ||
          (e.state == IndexState.Creating && damaged.nonEmpty) =>
        if (ifNotExists) return None
        if (damaged.isEmpty) throw BloomIndexErrors.alreadyExists(spec.name)
        throw BloomIndexErrors.analysis(s"Bloom index '${spec.name}' already exists and its ${damageNote(damaged)}: " +
          s"REFRESH BLOOM INDEX ${spec.name} FULL repairs it, DROP BLOOM INDEX ${spec.name} removes it")
      case Some((e, _)) if e.state == IndexState.Creating && l.lastActive().isEmpty =>
        logWarning(s"Bloom index '${spec.name}': taking over from an unfinished CREATE (log version ${e.version})")
      case None if head.nonEmpty =>
        logWarning(s"Bloom index '${spec.name}': no log entry is readable (${damageNote(head.get.damaged)}); " +
          s"starting a new history at version ${head.get.version + 1}")
      case _ =>
    }
    val next = head.map(_.version + 1).getOrElse(0L)
    val opId = UUID.randomUUID().toString
    val created = now()
    val begin = LogEntry(next, IndexState.Creating, "CREATE", opId, created, created, spec, None)
    l.commit(begin)
    Some(runOperation(l, begin, spec, full = true, base = None, frame))
  }

  // ---------------------------------------------------------------- refresh

  /**
   * A refresh after damaged log entries (see [[IndexLog.head]]) builds on the newest readable
   * entry, commits after the damaged ones (never over them) and is always a full rebuild:
   * what the damaged entries did is unknown.
   */
  def refresh(name: String, full: Boolean): LogEntry = {
    val l = writableLog(name)
    val head = l.head().getOrElse(throw BloomIndexErrors.notFound(name))
    val latest = head.entry match {
      case Some(e) if e.state != IndexState.Deleted => e
      case Some(_) => throw BloomIndexErrors.notFound(name)
      case None => throw BloomIndexErrors.analysis(s"Bloom index '$name' cannot be refreshed: no log entry is " +
        s"readable (${damageNote(head.damaged)}); CREATE BLOOM INDEX $name starts a new history")
    }
    if (head.damaged.nonEmpty) {
      logWarning(s"Bloom index '$name': ${damageNote(head.damaged)}; rebuilding it in full from version ${latest.version}")
    }
    val base = l.lastActive()
    var rebuild = full || base.isEmpty || head.damaged.nonEmpty
    // An incremental refresh adds values decoded as this session decodes them now: only to an
    // index whose values were decoded the same way (never two ways in one index).
    val frame = if (rebuild || latest.spec.source.format == DeltaSource.Format) None
      else Some(SourceResolver.dataFrame(spark, latest.spec.source))
    if (!rebuild) base.flatMap(_.data).foreach { d =>
      val now = SourceResolver.decoding(spark, latest.spec, SourceResolver.relation(
        frame.getOrElse(SourceResolver.dataFrame(spark, latest.spec.source)), latest.spec.source.display))
      d.decoding match {
        case None =>
          logWarning(s"Bloom index '$name' was built before decoding contexts were recorded: rebuilding it in full")
          rebuild = true
        case Some(built) =>
          contextChanges(built, now).headOption.foreach { why =>
            throw BloomIndexErrors.analysis(s"Bloom index '$name' was built under another decoding context ($why): " +
              "an incremental refresh would mix values decoded two ways. REFRESH BLOOM INDEX " +
              s"$name FULL rebuilds it as this session reads ${latest.spec.source.display}")
          }
      }
    }
    val begin = LogEntry(head.version + 1, IndexState.Refreshing,
      if (rebuild) "REFRESH FULL" else "REFRESH INCREMENTAL", UUID.randomUUID().toString, now(),
      latest.createdAt, latest.spec, base.flatMap(_.data))
    l.commit(begin)
    runOperation(l, begin, latest.spec, rebuild, base, frame)
  }

  /** Why values decoded under `now` could differ from values decoded under `built`, per column. */
  private def contextChanges(built: Decoding, now: Decoding): Seq[String] =
    built.columns.flatMap { b =>
      now.column(b.name) match {
        case None => Some(s"${b.name}: no longer a column")
        case Some(n) => DecodingContext.difference(built.format, b, now.format, n)
      }
    }

  /** Build, then commit ACTIVE; on failure, roll back with a stable entry and remove the data. */
  private def runOperation(l: IndexLog, begin: LogEntry, spec: IndexSpec, full: Boolean, base: Option[LogEntry],
      frame: Option[DataFrame] = None): LogEntry = {
    val dataRel = s"data/${begin.operationId}"
    val dataDir = new Path(l.indexDir, dataRel)
    val sc = spark.sparkContext
    val previousGroup = Option(sc.getLocalProperty("spark.jobGroup.id"))
    sc.setJobGroup(IndexManager.jobGroup(spec.name),
      s"${begin.operation} BLOOM INDEX ${spec.name} ON ${spec.source.display}", interruptOnCancel = true)
    try {
      cleanupData(l, begin.version, keep = base.flatMap(_.data).map(_.dir).toSet)
      var tableVersion: Option[Long] = None
      var decoding: Option[Decoding] = None
      val result = try build(l, spec, dataDir, full, base, frame, (v, d) => { tableVersion = v; decoding = Some(d) }) catch {
        case NonFatal(e) =>
          deleteQuietly(dataDir)
          // Another command took over meanwhile (and may have removed this one's data, which
          // is what failed the build): that is a conflict, not this build's own failure.
          if (!rollback(l, begin, base)) throw new ConcurrentBloomIndexUpdateException(spec.name, begin.version + 1,
            s"${begin.operation}, whose build failed meanwhile (${e.getMessage}),", e)
          throw e
      }
      BloomIndexConf.testFault(spark, BloomIndexConf.TestFailAfterDataWrite, s"${begin.operation} BLOOM INDEX ${spec.name}")
      val data = IndexData(dataRel, result.files, result.bytes, result.filterBytes, result.filesFromFooters,
        result.globalNdv, tableVersion, decoding)
      val end = begin.copy(version = begin.version + 1, state = IndexState.Active, timestamp = now(), data = Some(data))
      try l.commit(end) catch {
        case e: ConcurrentBloomIndexUpdateException =>
          deleteQuietly(dataDir)
          throw e
      }
      end
    } finally {
      previousGroup match {
        case Some(g) => sc.setJobGroup(g, Option(sc.getLocalProperty("spark.job.description")).getOrElse(""))
        case None => sc.clearJobGroup()
      }
    }
  }

  private def build(l: IndexLog, spec: IndexSpec, dataDir: Path, full: Boolean, base: Option[LogEntry],
      frame: Option[DataFrame], recorded: (Option[Long], Decoding) => Unit): BuildResult = {
    val (relation, current, tableVersion) = SourceResolver.snapshot(spark, spec.source, frame)
    recorded(tableVersion, SourceResolver.decoding(spark, spec, relation))
    IndexEncryption.prepare(spark, spec, current, dataDir.toString)
    val baseRows = if (full) None else base.flatMap(_.data).map(d => IndexStore.rows(spark, l.indexDir, d))
    val (toBuild, carried) = baseRows match {
      case None => (current, None)
      case Some(rows) =>
        val known = IndexStore.fileIdentities(rows)
        val unchanged = current.filter(f => known.contains((f.path, f.size, f.modificationTime)))
        val keep = unchanged.map(_.path).toSet
        val changed = current.filterNot(f => keep.contains(f.path))
        val keepDf = spark.createDataFrame(unchanged.map(f => (f.path, f.size, f.modificationTime)))
          .toDF("file_path", "file_size", "modification_time")
        (changed, Some(rows.join(keepDf, Seq("file_path", "file_size", "modification_time"), "left_semi")))
    }
    val baseGlobal = if (full || !spec.global) Map.empty[String, Array[Byte]]
      else base.flatMap(_.data).map(d => IndexStore.globalFilters(spark, l.indexDir, d)).getOrElse(Map.empty)
    val baseNdv = if (baseGlobal.isEmpty) Map.empty[String, Long] else base.flatMap(_.data).map(_.globalNdv).getOrElse(Map.empty)
    IndexBuilder.build(spark, spec, relation, toBuild, dataDir.toString, carried, baseGlobal, baseNdv)
  }

  /** Commits the stable entry after a failed build; false when another command committed that version first. */
  private def rollback(l: IndexLog, begin: LogEntry, base: Option[LogEntry]): Boolean = {
    val entry = base match {
      case Some(b) => begin.copy(version = begin.version + 1, state = IndexState.Active,
        operation = s"${begin.operation} (failed, rolled back)", timestamp = now(), data = b.data)
      case None => begin.copy(version = begin.version + 1, state = IndexState.Deleted,
        operation = s"${begin.operation} (failed)", timestamp = now(), data = None)
    }
    try { l.commit(entry); true } catch {
      case _: ConcurrentBloomIndexUpdateException => false
      case NonFatal(e) =>
        logWarning(s"Bloom index '${begin.spec.name}': could not record the rollback: $e")
        true
    }
  }

  /**
   * Removes data folders no committed entry needs: leftovers of failed or dead builds. Run by
   * the command that committed log version `version`, keeping `keep` and the folders of
   * commands that committed after it (listed first, then the log read: a command commits its
   * first entry before it creates its folder, so every folder listed has its entry by then).
   */
  private def cleanupData(l: IndexLog, version: Long, keep: Set[String]): Unit = {
    val dir = new Path(l.indexDir, "data")
    val fs = dir.getFileSystem(hadoopConf)
    if (fs.exists(dir)) {
      val folders = fs.listStatus(dir).filter(_.isDirectory).map(_.getPath)
      val newer = l.versions().filter(_ > version).flatMap(v => try Some(l.read(v).operationId) catch {
        case NonFatal(_) => None
      }).map(id => s"data/$id").toSet
      folders.foreach { p =>
        val rel = s"data/${p.getName}"
        if (!keep.contains(rel) && !newer.contains(rel)) deleteQuietly(p)
      }
    }
  }

  private def deleteQuietly(p: Path): Unit =
    try p.getFileSystem(hadoopConf).delete(p, true) catch {
      case NonFatal(e) => logWarning(s"could not delete $p: $e")
    }

  // ---------------------------------------------------------------- drop

  /** A DROP after damaged log entries commits after them, with the newest readable entry's spec. */
  def drop(name: String, ifExists: Boolean): Boolean = {
    val l = writableLog(name)
    l.head() match {
      case Some(h) if h.entry.isDefined && (h.entry.get.state != IndexState.Deleted || h.damaged.nonEmpty) =>
        val e = h.entry.get
        val dropped = e.copy(version = h.version + 1, state = IndexState.Deleted, operation = "DROP",
          operationId = UUID.randomUUID().toString, timestamp = now(), data = None)
        l.commit(dropped)
        cleanupData(l, dropped.version, keep = Set.empty)
        true
      case Some(h) if h.entry.isEmpty =>
        throw BloomIndexErrors.analysis(s"Bloom index '$name' cannot be dropped: no log entry is readable " +
          s"(${damageNote(h.damaged)}); CREATE BLOOM INDEX $name starts a new history, or remove ${l.indexDir}")
      case _ =>
        if (ifExists) false else throw BloomIndexErrors.notFound(name)
    }
  }

  // ---------------------------------------------------------------- list / describe

  /** Latest entries of every index that is not DELETED, by name. */
  def list(): Seq[LogEntry] = {
    val fs = root.getFileSystem(hadoopConf)
    if (!fs.exists(root)) return Seq.empty
    fs.listStatus(root).filter(_.isDirectory).map(_.getPath.getName).sorted.toSeq.flatMap { name =>
      try {
        if (!name.matches("[A-Za-z0-9_][A-Za-z0-9_-]{0,127}")) None
        else log(name).head().flatMap(_.entry).filter(_.state != IndexState.Deleted)
      } catch {
        case NonFatal(e) =>
          logWarning(s"Bloom index '$name': unreadable log, skipped: ${e.getMessage}")
          None
      }
    }
  }

  /**
   * DESCRIBE BLOOM INDEX as (key, value) pairs, in display order. `damage` is "none" or what
   * is wrong with the version queries use: damaged log entries after the newest readable one,
   * missing or unreadable index data, filters that do not deserialize (all checked here).
   */
  def describe(name: String): Seq[(String, String)] = {
    val l = log(name)
    val head = l.head().getOrElse(throw BloomIndexErrors.notFound(name))
    val latest = head.entry.getOrElse(throw BloomIndexErrors.analysis(
      s"Bloom index '$name': no log entry is readable (${damageNote(head.damaged)})"))
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
    out += "columns" -> spec.columns.map(_.name).mkString(", ")
    out += "global" -> spec.global.toString
    out += "encryption" -> active.flatMap(_.data).flatMap(d => IndexEncryption.plan(hadoopConf, IndexStore.dataDir(l.indexDir, d).toString))
      .map(p => p.columnKeys.toSeq.sorted.map { case (c, k) => s"$c (key $k)" }.mkString(", ")).getOrElse("none")
    val details = Seq.newBuilder[(String, String)]
    active.flatMap(_.data) match {
      case Some(d) =>
        val rows = try Some(IndexStore.rows(spark, l.indexDir, d).cache()) catch {
          case NonFatal(e) => damage += s"index data ${d.dir} unreadable: ${e.getMessage.linesIterator.next()}"; None
        }
        rows.foreach { rows => try describeData(l.indexDir, spec, d, rows, details, damage) finally rows.unpersist() }
        if (rows.isEmpty) details += "files_indexed" -> "0"
      case None =>
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
    out += "files_indexed" -> d.indexedFiles.toString
    out += "bytes_indexed" -> d.indexedBytes.toString
    out += "filter_bytes" -> d.filterBytes.toString
    // A file is "from footer" when none of its data was read: every column came from its footer.
    out += "files_from_footer" -> d.filesFromFooters.toString
    out += "files_from_data" -> (d.indexedFiles - d.filesFromFooters).toString
    d.tableVersion.foreach(v => out += "table_version" -> v.toString)
    val (_, current, currentVersion) = SourceResolver.snapshot(spark, spec.source)
    currentVersion.foreach(v => out += "table_current_version" -> v.toString)
    val known = IndexStore.fileIdentities(rows)
    val stale = current.count(f => !known.contains((f.path, f.size, f.modificationTime)))
    val currentPaths = current.map(_.path).toSet
    val deleted = known.map(_._1).count(p => !currentPaths.contains(p))
    out += "files_new_or_changed" -> stale.toString
    out += "files_deleted" -> deleted.toString
    spec.columns.foreach { c =>
      val (files, bytes, fromFooter) = perColumn.getOrElse(c.name, (0L, 0L, 0L))
      out += s"column.${c.name}.type" -> c.dataType
      out += s"column.${c.name}.fpp" -> c.fpp.toString
      out += s"column.${c.name}.ndv" -> c.ndv.map(_.toString).getOrElse("per-file estimate")
      out += s"column.${c.name}.sizing" -> c.sizing.name
      out += s"column.${c.name}.algorithm" -> c.algorithm.name
      out += s"column.${c.name}.files" -> files.toString
      out += s"column.${c.name}.filter_bytes" -> bytes.toString
      out += s"column.${c.name}.files_from_footer" -> fromFooter.toString
      out += s"column.${c.name}.files_from_data" -> (files - fromFooter).toString
      if (spec.global) out += s"column.${c.name}.global_ndv" -> d.globalNdv.getOrElse(c.name, 0L).toString
      if (files < d.indexedFiles) {
        damage += s"column ${c.name}: ${d.indexedFiles - files} of ${d.indexedFiles} indexed files have no index " +
          s"row (index data files under ${d.dir} missing or unreadable)"
      }
    }
    IndexStore.unreadableFilters(rows, spec).foreach { case (n, example) =>
      damage += s"$n filters unreadable, e.g. $example"
    }
    if (spec.global) {
      try {
        val g = IndexStore.globalFilters(spark, indexDir, d)
        spec.columns.foreach { c =>
          g.get(c.name) match {
            case None => damage += s"global filter of ${c.name} missing"
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

object IndexManager {
  /** The Spark job group of an index's builds: the UI groups them, Python polls it for progress. */
  def jobGroup(name: String): String = s"bloomindex-$name"
}
