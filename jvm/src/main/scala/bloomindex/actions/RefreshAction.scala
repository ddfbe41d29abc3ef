package bloomindex.actions

import java.util.UUID

import scala.util.control.NonFatal

import bloomindex.catalog.IndexCache
import bloomindex.errors.BloomIndexErrors
import bloomindex.hash.ParquetHash
import bloomindex.log.{IndexSpec, IndexState, LogEntry}
import bloomindex.source.{DecodingContext, SourceProviders, SourceResolver}

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.DataFrame

/**
 * REFRESH BLOOM INDEX [INCREMENTAL | FULL]. Incremental: the files the last ACTIVE version does
 * not hold as they are now are built, the rows of the others carried, deleted files drop out;
 * with none of either, nothing is committed.
 *
 * A full rebuild instead when asked, when there is no ACTIVE version, after damaged log entries
 * (what they did is unknown; the refresh builds on the newest readable entry and commits after
 * the damaged ones, never over them), and for versions written before decoding contexts were
 * recorded. An incremental refresh under another decoding context than the version's is
 * refused: an index never holds values decoded two ways.
 *
 * OPTIMIZE BLOOM INDEX (`optimize`): an incremental refresh that also rewrites every column's
 * small probe files together into few ([[IndexBuild]]); nothing is committed when the index is
 * current and already compact.
 */
final class RefreshAction(ctx: ActionContext, full: Boolean, optimize: Boolean = false,
    written: Option[bloomindex.indexing.WrittenFilters] = None) extends IndexAction(ctx) {

  /** Files whose rows the last build took from the write that wrote them (`written`), not read. */
  private[actions] var filesFromWrite: Int = 0

  private val name = ctx.name
  private lazy val head = ctx.log.head().getOrElse(throw BloomIndexErrors.notFound(name))

  /** The newest readable entry: the spec to refresh. */
  private lazy val latest: LogEntry = head.entry match {
    case Some(e) if e.state != IndexState.Deleted => e
    case Some(_) => throw BloomIndexErrors.notFound(name)
    case None => throw BloomIndexErrors.damaged(name, s"cannot be refreshed: no log entry is " +
      s"readable (${ctx.damageNote(head.damaged)}); CREATE BLOOM INDEX $name starts a new history")
  }

  protected lazy val base: Option[LogEntry] = ctx.log.lastActive()

  /**
   * The decoding context the last ACTIVE version recorded: a column renamed since (where the
   * source's provider follows renames) is found by the physical identity recorded there.
   */
  private lazy val recorded: Option[bloomindex.log.Decoding] = base.flatMap(_.data).flatMap(_.decoding)

  /** The source's relation as a query reads it now, renamed columns under the index's names ([[SourceResolver.following]]). */
  private def current(frame: Option[DataFrame]) =
    SourceResolver.following(ctx.spark, spec, recorded, preferNames = rebuild,
      SourceResolver.currentRelation(ctx.spark, spec.source, frame))

  /**
   * The source's files as of now, listed once through `frame` (which an incremental refresh of a
   * provider that reuses it made a moment ago): the up-to-date check and the build share it.
   */
  private lazy val listed: Option[bloomindex.source.Snapshot] =
    frame.map(f => SourceProviders.of(spec.source).snapshotOfFresh(ctx.spark, spec.source, f))

  /**
   * After a write of this session (`written`): a frame over the source listed now and read with
   * the schema the write wrote, instead of one that infers the schema (for Parquet, a Spark job
   * reading a footer), when that schema holds every indexed column under its exact name at the
   * index's type, none of them a partition column, and the source is a Parquet folder (a
   * position-matched format's decoding depends on the whole schema). The decoding check below
   * then compares the index's recorded context with that of the columns as written; a write of
   * an indexed column under another type (or name) takes the inferring frame, as before. Files
   * are identified by the listing alone, whatever the schema: the same files either way.
   */
  private def writtenFrame(spec: IndexSpec): Option[DataFrame] =
    written.flatMap(_.schema).filter { schema =>
      spec.source.format.equalsIgnoreCase("parquet") && spec.columns.forall { c =>
        !spec.source.partitionColumns.contains(c.sourceName) &&
          schema.fields.find(_.name == c.sourceName).exists(f => scala.util.Try(
            org.apache.spark.sql.types.DataType.fromDDL(c.dataType)).toOption.contains(f.dataType))
      }
    }.flatMap(schema => SourceProviders.of(spec.source).writtenFrame(ctx.spark, spec.source, schema))
      // Only where the columns as written decode as the index recorded (a field id the write's
      // schema carries, a reader option...): otherwise the refresh's checks see the source as
      // a query infers it, as before.
      .filter(f => recorded.exists(built => scala.util.Try(SourceResolver.decoding(ctx.spark, spec, current(Some(f)))).toOption
        .exists(now => DecodingContext.changes(built, now.format, now.column).isEmpty)))

  /** Whether this refresh listed the source with the schema its write wrote ([[writtenFrame]]), not inferring it. */
  private[actions] var listedWithWrittenSchema: Boolean = false

  private var rebuild = full
  private var frame: Option[DataFrame] = None
  private var spec: IndexSpec = _

  /**
   * The checks of a refresh (whether it rebuilds, under which spec, the decoding context), and
   * whether it has anything to do: an incremental refresh whose last ACTIVE version holds every
   * current file of the source as it is now, and no other (and the same table version), commits
   * nothing and answers that version.
   */
  override protected def nothingToDo(): Option[LogEntry] = {
    if (!SourceProviders.of(latest.spec.source).exists(ctx.spark, latest.spec.source)) {
      throw BloomIndexErrors.orphaned(name, latest.spec.source.display)
    }
    StepClock.mark("head, source exists")
    if (head.damaged.nonEmpty) {
      logWarning(s"Bloom index '$name': ${ctx.damageNote(head.damaged)}; rebuilding it in full from version ${latest.version}")
    }
    rebuild = full || base.isEmpty || head.damaged.nonEmpty
    spec = if (rebuild) retyped(latest.spec) else latest.spec
    // An incremental refresh adds values decoded as this session decodes them now: only to an
    // index whose values were decoded the same way.
    frame = if (rebuild || !SourceProviders.of(spec.source).refreshReusesFrame) None
      else writtenFrame(spec) match {
        case Some(f) => listedWithWrittenSchema = true; Some(f)
        case None => Some(SourceResolver.dataFrame(ctx.spark, spec.source))
      }
    StepClock.mark("base, frame")
    if (!rebuild) base.flatMap(_.data).foreach { d =>
      val now = SourceResolver.decoding(ctx.spark, spec, current(frame))
      d.decoding match {
        case None =>
          logWarning(s"Bloom index '$name' was built before decoding contexts were recorded: rebuilding it in full")
          rebuild = true
        case Some(built) =>
          DecodingContext.changes(built, now.format, now.column).headOption.foreach { case (_, why) =>
            throw BloomIndexErrors.incrementalRefreshContextChanged(name, why, spec.source.display)
          }
      }
    }
    StepClock.mark("decoding check")
    // Only over a stable head: a transient entry a stopped operation left is committed past.
    try if (rebuild) None else base.filter(b => head.entry.exists(_.version == b.version) && upToDate(b) && (!optimize || compact(b)))
    finally StepClock.mark("up-to-date check")
  }

  /**
   * Whether OPTIMIZE has nothing to rewrite in `b`: no column holds more probe files than its
   * bytes need (one per `spark.bloomindex.optimize.targetFileBytes`). Layouts without probe files
   * are rewritten by every refresh already.
   */
  private def compact(b: LogEntry): Boolean = b.data.forall { d =>
    d.layout != bloomindex.log.IndexData.Probes || {
      val target = ctx.spark.sessionState.conf.getConf(org.apache.spark.sql.bloomindex.BloomIndexSQLConf.OPTIMIZE_TARGET_FILE_BYTES)
      try bloomindex.layout.IndexSummary.read(ctx.hadoopConf, bloomindex.layout.IndexStore.dataDir(ctx.log.indexDir, d))
        .columns.values.forall { s =>
          val sizes = s.probeFiles.values ++ s.reused.values
          sizes.size <= bloomindex.layout.IndexFiles.probeFilesFor(sizes.sum, target)
        }
      catch { case NonFatal(_) => false }
    }
  }

  /** Whether `b` holds exactly the source's current files, each as it is now (a damaged or unreadable version does not). */
  private def upToDate(b: LogEntry): Boolean = try {
    val (current, version) = listed match {
      case Some(l) => (l.files, l.version)
      case None => SourceResolver.currentFiles(ctx.spark, spec.source)
    }
    // The file count first: after a write it differs, and the columns (their probe files'
    // footers, which the build reads again) need not be loaded to say so.
    b.data.exists(d => d.tableVersion == version && d.indexedFiles == current.size) && spec.columns.indices.forall { i =>
      val column = IndexCache.column(ctx.spark, ctx.log, b, i)
      column.numFiles == current.size && current.forall(f => column.indexOf(f.path, f.size, f.modificationTime) >= 0)
    }
  } catch {
    case NonFatal(e) =>
      logInfo(s"Bloom index '$name': refreshing, as its files could not be compared with the source's: $e")
      false
  }

  protected def begin(): LogEntry = {
    val entry = LogEntry(head.version + 1, IndexState.Refreshing,
      if (rebuild) "REFRESH FULL" else if (optimize) "OPTIMIZE" else "REFRESH INCREMENTAL", UUID.randomUUID().toString, ctx.now(),
      latest.createdAt, spec, base.flatMap(_.data))
    ctx.log.commit(entry)
    StepClock.mark("begin commit")
    entry
  }

  /**
   * `spec` with each column at the source's current type: a full rebuild reads every file as the
   * source reads it now, so a column widened since (Delta or Iceberg type widening, a table
   * created again with another type) is hashed as its new type. A type no filter can hold is
   * refused as CREATE refuses it; a column gone is left to the build to refuse.
   */
  private def retyped(spec: IndexSpec): IndexSpec = {
    val schema = SourceResolver.following(ctx.spark, spec, recorded, preferNames = true,
      SourceResolver.currentRelation(ctx.spark, spec.source, None)).dataSchema
    spec.copy(columns = spec.columns.map { c =>
      schema.fields.find(_.name == c.name) match {
        case Some(f) if f.dataType.sql != c.dataType =>
          try ParquetHash.checkIndexable(f.dataType) catch {
            case e: IllegalArgumentException =>
              throw BloomIndexErrors.unsupportedColumnType(f.name, f.dataType.sql, e.getMessage.stripPrefix("type: "))
          }
          logWarning(s"Bloom index '$name': column ${c.name} is ${f.dataType.sql} now (was ${c.dataType}); rebuilt as such")
          c.copy(dataType = f.dataType.sql)
        case _ => c
      }
    })
  }

  protected def build(begin: LogEntry, dataDir: Path): Built = {
    val built = IndexBuild.run(ctx, begin.spec, dataDir, if (rebuild) None else base, frame, optimize, recorded,
      preferNames = rebuild, written = if (rebuild) None else written, listed = if (rebuild) None else listed)
    filesFromWrite = built.fromWrite
    built
  }
}
