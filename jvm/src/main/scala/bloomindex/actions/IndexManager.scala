package bloomindex.actions

import bloomindex.catalog.TableFollow
import bloomindex.log.{IndexLog, IndexRoot, IndexSpec, IndexState, LogEntry, SourceSpec}
import bloomindex.source.{SourceRef, SourceResolver}

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{DataFrame, SparkSession}

/**
 * The index operations as the SQL commands and the APIs call them: each one an action
 * ([[CreateAction]], [[RefreshAction]], [[DropAction]], [[DescribeAction]]) on the index's
 * [[ActionContext]]. Every change is begin (a transient log entry) / build / commit (the
 * ACTIVE or DELETED entry), each a separate atomic commit; see [[IndexAction]] and [[IndexLog]].
 *
 * {{{
 *   val m = new IndexManager(spark)
 *   m.create("orders_uid", SourceRef(Seq("orders")), Seq(ColumnRequest("user_id", Map.empty)), Map.empty)
 *   m.refresh("orders_uid", full = false)
 * }}}
 */
class IndexManager(spark: SparkSession) {

  private val indexes = new IndexRoot(spark)

  def root: Path = indexes.root

  def checkName(name: String): Unit = indexes.checkName(name)

  def log(name: String): IndexLog = indexes.log(name)

  def exists(name: String): Boolean = indexes.exists(name)

  /** Latest entries of every index that is not DELETED, by name. */
  def list(): Seq[LogEntry] = indexes.list()

  /** As [[list]], with the indexes a newer bloomindex wrote ([[IndexRoot.listed]]). */
  def listed(): Seq[Either[IndexRoot.NewerIndex, LogEntry]] = indexes.listed()

  /**
   * The state SHOW gives `e`: its log state, or ORPHANED for an ACTIVE index whose
   * source no longer exists (its table dropped, its folder deleted).
   */
  def shownState(e: LogEntry): String = shown(e)._2

  /**
   * `e` as SHOW shows it, with its state ([[shownState]]): an index whose table was renamed by
   * another engine follows it first ([[TableFollow.locate]]: the RENAME TABLE entry it committed).
   */
  def shown(e: LogEntry): (LogEntry, String) = TableFollow.locate(spark, e) match {
    case (now, None) => (now, now.state)
    case (now, Some(_)) => (now, IndexManager.Orphaned)
  }

  /** Validates everything a CREATE names before anything is written ([[IndexOptions]]). */
  def plan(name: String, source: SourceSpec, columns: Seq[ColumnRequest], options: Map[String, String],
      frame: Option[DataFrame] = None): IndexSpec =
    IndexOptions.plan(spark, name, source, columns, options, frame)

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

  /**
   * Builds `spec` as a new index; None when one lives under its name and `ifNotExists`.
   * `frame`: a DataFrame over the source, just resolved (see [[SourceResolver.resolveFrame]]).
   */
  def createFromSpec(spec: IndexSpec, ifNotExists: Boolean, frame: Option[DataFrame] = None): Option[LogEntry] = {
    val action = new CreateAction(ActionContext.writing(spark, spec.name), spec, frame)
    if (action.existing(ifNotExists).isDefined) None else Some(action.run())
  }

  def refresh(name: String, full: Boolean): LogEntry = {
    TableFollow.follow(spark, name) // a table renamed by another engine: the index names it first
    new RefreshAction(ActionContext.writing(spark, name), full).run()
  }

  /** OPTIMIZE BLOOM INDEX: an incremental refresh that rewrites the small probe files into few ([[RefreshAction]]). */
  def optimize(name: String): LogEntry = {
    TableFollow.follow(spark, name)
    new RefreshAction(ActionContext.writing(spark, name), full = false, optimize = true).run()
  }

  /**
   * VACUUM BLOOM INDEX [RETAIN n HOURS]: deletes the index data no version replaced less than
   * `retentionMs` ago needs ([[ActionContext.vacuum]]; default `spark.bloomindex.vacuum.retention`);
   * returns (folders deleted, bytes, log entries deleted).
   */
  def vacuum(name: String, retentionMs: Option[Long]): (Long, Long, Long) = {
    val ctx = ActionContext.writing(spark, name)
    if (!ctx.log.head().exists(_.entry.exists(_.state != IndexState.Deleted))) throw bloomindex.errors.BloomIndexErrors.notFound(name)
    val gone = ctx.vacuum(retentionMs.getOrElse(
      spark.sessionState.conf.getConf(org.apache.spark.sql.bloomindex.BloomIndexSQLConf.VACUUM_RETENTION)), strict = true)
    (gone.folders.size.toLong, gone.folders.map(_._2).sum, gone.logEntries.toLong)
  }

  def drop(name: String, ifExists: Boolean): Boolean = new DropAction(ActionContext.writing(spark, name), ifExists).run()

  /** ALTER BLOOM INDEX name SET OPTIONS (...) ([[AlterAction]]): the new log entry. */
  def alter(name: String, options: Map[String, String]): LogEntry = new AlterAction(ActionContext.writing(spark, name), options).run()

  /** DESCRIBE BLOOM INDEX as (key, value) pairs, in display order ([[DescribeAction]]). */
  def describe(name: String, extended: Boolean = false): Seq[(String, String)] = {
    // A table renamed by another engine is followed first; an index whose table is not found
    // (or found several times) says why it is orphaned. A catalog lookup only: an index over
    // folders is described without touching its source.
    val orphaned = TableFollow.follow(spark, name, tablesOnly = true).flatMap(_._2)
    val rows = new DescribeAction(ActionContext.reading(spark, name), extended).run()
    orphaned.fold(rows) { why =>
      val (before, after) = rows.span(_._1 != "state")
      before ++ after.take(1) ++ Seq("orphaned" -> why) ++ after.drop(1)
    }
  }
}

object IndexManager {
  val Orphaned = "ORPHANED"

  /** The Spark job group of an index's builds: the UI groups them, Python polls it for progress. */
  def jobGroup(name: String): String = ActionContext.jobGroup(name)

  /** (source files read, source files) of the last build in job group `group` in this JVM (its progress). */
  def filesProgress(group: String): Option[(Long, Long)] = bloomindex.indexing.BuildProgress.of(group)
}
