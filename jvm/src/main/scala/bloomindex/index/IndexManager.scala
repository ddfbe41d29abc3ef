package bloomindex.index

import java.util.{Locale, UUID}

import scala.util.control.NonFatal

import bloomindex.{BloomIndexConf, BloomIndexErrors, ConcurrentBloomIndexUpdateException}
import bloomindex.sbbf.ParquetHash
import bloomindex.filter.FilterAlgorithm
import bloomindex.sbbf.SbbfSizing.Sizing
import bloomindex.sql.{ColumnRequest, SourceRef}

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
    val l = log(spec.name)
    val latest = l.latest()
    latest match {
      case Some(e) if e.state == IndexState.Active || e.state == IndexState.Refreshing =>
        if (ifNotExists) return None
        throw BloomIndexErrors.alreadyExists(spec.name)
      case Some(e) if e.state == IndexState.Creating && l.lastActive().isEmpty =>
        logWarning(s"Bloom index '${spec.name}': taking over from an unfinished CREATE (log version ${e.version})")
      case _ =>
    }
    val next = latest.map(_.version + 1).getOrElse(0L)
    val opId = UUID.randomUUID().toString
    val created = now()
    val begin = LogEntry(next, IndexState.Creating, "CREATE", opId, created, created, spec, None)
    l.commit(begin)
    Some(runOperation(l, begin, spec, full = true, base = None, frame))
  }

  // ---------------------------------------------------------------- refresh

  def refresh(name: String, full: Boolean): LogEntry = {
    val l = log(name)
    val latest = l.latest().filter(_.state != IndexState.Deleted).getOrElse(throw BloomIndexErrors.notFound(name))
    val base = l.lastActive()
    val begin = LogEntry(latest.version + 1, IndexState.Refreshing,
      if (full) "REFRESH FULL" else "REFRESH INCREMENTAL", UUID.randomUUID().toString, now(),
      latest.createdAt, latest.spec, base.flatMap(_.data))
    l.commit(begin)
    runOperation(l, begin, latest.spec, full || base.isEmpty, base)
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
      cleanupData(l, keep = base.flatMap(_.data).map(_.dir).toSet)
      val result = try build(l, spec, dataDir, full, base, frame) catch {
        case NonFatal(e) =>
          rollback(l, begin, base)
          deleteQuietly(dataDir)
          throw e
      }
      val data = IndexData(dataRel, result.files, result.bytes, result.filterBytes, result.filesFromFooters, result.globalNdv)
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
      frame: Option[DataFrame]): BuildResult = {
    val (relation, current) = SourceResolver.snapshot(spark, spec.source, frame)
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

  private def rollback(l: IndexLog, begin: LogEntry, base: Option[LogEntry]): Unit = {
    val entry = base match {
      case Some(b) => begin.copy(version = begin.version + 1, state = IndexState.Active,
        operation = s"${begin.operation} (failed, rolled back)", timestamp = now(), data = b.data)
      case None => begin.copy(version = begin.version + 1, state = IndexState.Deleted,
        operation = s"${begin.operation} (failed)", timestamp = now(), data = None)
    }
    try l.commit(entry) catch {
      case NonFatal(e) => logWarning(s"Bloom index '${begin.spec.name}': could not record the rollback: $e")
    }
  }

  /** Removes data folders no committed entry needs: leftovers of failed or dead builds. */
  private def cleanupData(l: IndexLog, keep: Set[String]): Unit = {
    val dir = new Path(l.indexDir, "data")
    val fs = dir.getFileSystem(hadoopConf)
    if (fs.exists(dir)) {
      fs.listStatus(dir).filter(_.isDirectory).foreach { st =>
        if (!keep.contains(s"data/${st.getPath.getName}")) deleteQuietly(st.getPath)
      }
    }
  }

  private def deleteQuietly(p: Path): Unit =
    try p.getFileSystem(hadoopConf).delete(p, true) catch {
      case NonFatal(e) => logWarning(s"could not delete $p: $e")
    }

  // ---------------------------------------------------------------- drop

  def drop(name: String, ifExists: Boolean): Boolean = {
    val l = log(name)
    val latest = l.latest().filter(_.state != IndexState.Deleted)
    latest match {
      case None =>
        if (ifExists) false else throw BloomIndexErrors.notFound(name)
      case Some(e) =>
        l.commit(e.copy(version = e.version + 1, state = IndexState.Deleted, operation = "DROP",
          operationId = UUID.randomUUID().toString, timestamp = now(), data = None))
        cleanupData(l, keep = Set.empty)
        true
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
        else log(name).latest().filter(_.state != IndexState.Deleted)
      } catch {
        case NonFatal(e) =>
          logWarning(s"Bloom index '$name': unreadable log, skipped: ${e.getMessage}")
          None
      }
    }
  }

  /** Indexes over `source` (same table, or same format and paths). */
  def indexesOn(source: SourceSpec): Seq[LogEntry] = list().filter { e =>
    val s = e.spec.source
    (s.table.isDefined && s.table == source.table) ||
      (s.table.isEmpty && source.table.isEmpty && s.format == source.format &&
        s.paths.map(normalizeRoot) == source.paths.map(normalizeRoot))
  }

  private def normalizeRoot(p: String): String = new Path(p).toUri.getPath.stripSuffix("/")

  /** DESCRIBE BLOOM INDEX as (key, value) pairs, in display order. */
  def describe(name: String): Seq[(String, String)] = {
    val l = log(name)
    val (latest, damaged) = l.latestReadable().getOrElse(throw BloomIndexErrors.notFound(name))
    if (latest.state == IndexState.Deleted) throw BloomIndexErrors.notFound(name)
    val active = l.lastActive()
    val spec = latest.spec
    val out = Seq.newBuilder[(String, String)]
    out += "name" -> spec.name
    out += "source" -> spec.source.display
    out += "format" -> spec.source.format
    out += "state" -> latest.state
    out += "log_version" -> latest.version.toString
    out += "active_version" -> active.map(_.version.toString).getOrElse("none")
    out += "created" -> new java.sql.Timestamp(latest.createdAt).toString
    out += "refreshed" -> active.map(e => new java.sql.Timestamp(e.timestamp).toString).getOrElse("never")
    out += "last_operation" -> latest.operation
    out += "columns" -> spec.columns.map(_.name).mkString(", ")
    out += "global" -> spec.global.toString
    out += "encryption" -> active.flatMap(_.data).flatMap(d => IndexEncryption.plan(hadoopConf, IndexStore.dataDir(l.indexDir, d).toString))
      .map(p => p.columnKeys.toSeq.sorted.map { case (c, k) => s"$c (key $k)" }.mkString(", ")).getOrElse("none")
    damaged.foreach { case (v, msg) => out += s"damaged_log_version_$v" -> msg }
    active.flatMap(_.data) match {
      case Some(d) =>
        val rows = IndexStore.rows(spark, l.indexDir, d)
        val perColumn = rows.groupBy("column").agg(count(lit(1)), sum(length(col("filter"))),
          sum(when(col("built_from") === "footer", 1).otherwise(0))).collect()
          .map(r => r.getString(0) -> (r.getLong(1), r.getLong(2), r.getLong(3))).toMap
        out += "files_indexed" -> d.indexedFiles.toString
        out += "bytes_indexed" -> d.indexedBytes.toString
        out += "filter_bytes" -> d.filterBytes.toString
        // A file is "from footer" when none of its data was read: every column came from its footer.
        out += "files_from_footer" -> d.filesFromFooters.toString
        out += "files_from_data" -> (d.indexedFiles - d.filesFromFooters).toString
        val current = SourceResolver.listFiles(spark, spec.source)
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
        }
      case None =>
        out += "files_indexed" -> "0"
    }
    out.result()
  }
}

object IndexManager {
  /** The Spark job group of an index's builds: the UI groups them, Python polls it for progress. */
  def jobGroup(name: String): String = s"bloomindex-$name"
}
