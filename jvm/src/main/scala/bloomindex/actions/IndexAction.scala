package bloomindex.actions

import scala.util.control.NonFatal

import bloomindex.indexing.BuildResult
import bloomindex.config.BloomIndexConf
import bloomindex.errors.ConcurrentBloomIndexUpdateException
import bloomindex.log.{Decoding, IndexData, IndexSpec, IndexState, LogEntry}

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.internal.Logging

/**
 * What a build step produced: the rows' summary, the table version read, how it decoded the
 * columns, the earlier data folders whose probe files the version keeps, the spec it built
 * (`fpp = 'auto'` columns at the rate chosen: the spec the version's entry records) and how many
 * files' rows their write built ([[bloomindex.indexing.WriteTaskFilters]]).
 */
final case class Built(result: BuildResult, tableVersion: Option[Long], decoding: Decoding, reused: Seq[String] = Nil,
    spec: Option[IndexSpec] = None, fromWrite: Int = 0)

/**
 * An operation that builds index data (CREATE, REFRESH), as four steps in the open, each a
 * separate atomic log commit or a write no reader sees:
 *
 *  1. [[begin]]: checks what the log holds and commits the transient entry (CREATING /
 *     REFRESHING); readers go on using the last ACTIVE version.
 *  2. [[build]]: writes the new version's data under the operation's own folder
 *     (`data/<operation id>`), which no committed entry names yet.
 *  3. [[commit]]: commits the ACTIVE entry that names that folder: the new version is visible.
 *  4. [[rollback]] (after a failed build): commits a stable entry that restores the last good
 *     state (the previous ACTIVE data, or DELETED) and removes the folder.
 *
 * Losing a race for a log version anywhere is a [[ConcurrentBloomIndexUpdateException]], and
 * leaves nothing of this operation visible.
 */
abstract class IndexAction(protected val ctx: ActionContext) extends Logging {

  /** The last ACTIVE entry this operation builds on (its data survives a rollback). */
  protected def base: Option[LogEntry]

  /** The entry that already is what this operation would make, if any: then nothing is committed. */
  protected def nothingToDo(): Option[LogEntry] = None

  protected def begin(): LogEntry

  /** Writes the data of `begin`'s version into `dataDir`. */
  protected def build(begin: LogEntry, dataDir: Path): Built

  final def run(): LogEntry = {
    nothingToDo().foreach(done => return done)
    // Before the log's first entry: a session whose Kryo refuses bloomindex's classes is told what to set.
    bloomindex.compat.KryoSetup.check(ctx.spark.sparkContext.getConf)
    val started = begin()
    IndexAction.begun(started.operationId)
    try runFrom(started) finally IndexAction.ended(started.operationId)
  }

  private def runFrom(started: LogEntry): LogEntry = {
    val (rel, dataDir) = ctx.dataDir(started.operationId)
    ctx.inJobGroup(s"${started.operation} BLOOM INDEX ${ctx.name} ON ${started.spec.source.display}") {
      // The clean-up every build does: VACUUM with the configured retention (the base's folders kept).
      ctx.vacuum(ctx.spark.sessionState.conf.getConf(BloomIndexSQLConf.VACUUM_RETENTION),
        keep = base.flatMap(_.data).map(_.folders.toSet).getOrElse(Set.empty), started = Some(started.version))
      StepClock.mark("vacuum")
      val built = try build(started, dataDir) catch {
        case NonFatal(e) => rollback(started, dataDir, e)
      }
      BloomIndexConf.testFault(ctx.spark, s"${started.operation} BLOOM INDEX ${ctx.name}")
      try commit(started, rel, dataDir, built) finally StepClock.mark("commit")
    }
  }

  protected def commit(begin: LogEntry, rel: String, dataDir: Path, built: Built): LogEntry = {
    val r = built.result
    val data = IndexData(rel, r.files, r.bytes, r.filterBytes, r.filesFromFooters, r.globalNdv, built.tableVersion,
      Some(built.decoding), r.layout, built.reused, checksums = true)
    val end = begin.copy(version = begin.version + 1, state = IndexState.Active, timestamp = ctx.now(), data = Some(data),
      spec = built.spec.getOrElse(begin.spec))
    try ctx.log.commit(end) catch {
      case e: ConcurrentBloomIndexUpdateException =>
        ctx.deleteQuietly(dataDir)
        throw e
    }
    end
  }

  /** After a failed build: the stable entry, the data folder removed, and the failure rethrown. */
  protected def rollback(begin: LogEntry, dataDir: Path, failure: Throwable): Nothing = {
    ctx.deleteQuietly(dataDir)
    val entry = base match {
      case Some(b) => begin.copy(version = begin.version + 1, state = IndexState.Active,
        operation = s"${begin.operation} (failed, rolled back)", timestamp = ctx.now(), data = b.data)
      case None => begin.copy(version = begin.version + 1, state = IndexState.Deleted,
        operation = s"${begin.operation} (failed)", timestamp = ctx.now(), data = None)
    }
    val recorded = try { ctx.log.commit(entry); true } catch {
      case _: ConcurrentBloomIndexUpdateException => false
      case NonFatal(e) =>
        logWarning(s"Bloom index '${ctx.name}': could not record the rollback: $e")
        true
    }
    // Another command took over meanwhile (and may have removed this one's data, which is what
    // failed the build): that is a conflict, not this build's own failure.
    if (!recorded) throw new ConcurrentBloomIndexUpdateException(ctx.name, begin.version + 1,
      s"${begin.operation}, whose build failed meanwhile (${failure.getMessage}),", failure)
    throw failure
  }
}

object IndexAction {
  private val startedHere = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()
  private val running = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  private def begun(id: String): Unit = {
    if (startedHere.size > 10000) startedHere.clear()
    startedHere.add(id)
    running.add(id)
  }

  private def ended(id: String): Unit = running.remove(id)

  /** Whether operation `id` began in this JVM and is over (a transient entry it left is a dead one). */
  def endedHere(id: String): Boolean = startedHere.contains(id) && !running.contains(id)
}
