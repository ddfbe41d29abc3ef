package bloomindex.actions

import java.util.UUID

import bloomindex.catalog.IndexCache
import bloomindex.errors.BloomIndexErrors
import bloomindex.log.{IndexSpec, IndexState, LogEntry}

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.DataFrame

/**
 * CREATE BLOOM INDEX: a new history (or a new one after a dropped or unreadable one), built
 * in full. `frame`: a DataFrame over the source, just resolved (see
 * [[bloomindex.source.SourceResolver.resolveFrame]]), so the build does not resolve it again.
 */
final class CreateAction(ctx: ActionContext, spec: IndexSpec, frame: Option[DataFrame]) extends IndexAction(ctx) {

  protected def base: Option[LogEntry] = None

  /** The log's head, read once: what [[existing]] checks is what [[begin]] commits after. */
  private lazy val head = ctx.log.head()

  /**
   * Whether an index of this name already lives: then None (IF NOT EXISTS) or an error. A
   * damaged newest entry hides what it was: an index whose last readable state is live still
   * exists (REFRESH ... FULL repairs it, DROP removes it); a log with no readable entry at all
   * holds nothing to keep, and a new history starts after it.
   */
  def existing(ifNotExists: Boolean): Option[LogEntry] = {
    val l = ctx.log
    head.flatMap(h => h.entry.map(_ -> h.damaged)) match {
      case Some((e, damaged)) if e.state == IndexState.Active || e.state == IndexState.Refreshing ||
          (e.state == IndexState.Creating && damaged.nonEmpty) =>
        if (ifNotExists) return Some(e)
        if (damaged.isEmpty) throw BloomIndexErrors.alreadyExists(spec.name)
        throw BloomIndexErrors.damaged(spec.name, s"already exists and its ${ctx.damageNote(damaged)}: " +
          s"REFRESH BLOOM INDEX ${spec.name} FULL repairs it, DROP BLOOM INDEX ${spec.name} removes it")
      case Some((e, _)) if e.state == IndexState.Creating && l.lastActive().isEmpty =>
        logWarning(s"Bloom index '${spec.name}': taking over from an unfinished CREATE (log version ${e.version})")
      case None if head.nonEmpty =>
        logWarning(s"Bloom index '${spec.name}': no log entry is readable (${ctx.damageNote(head.get.damaged)}); " +
          s"starting a new history at version ${head.get.version + 1}")
      case _ =>
    }
    None
  }

  protected def begin(): LogEntry = {
    val next = head.map(_.version + 1).getOrElse(0L)
    val created = ctx.now()
    val entry = LogEntry(next, IndexState.Creating, "CREATE", UUID.randomUUID().toString, created, created, spec, None)
    // A new log where an earlier one was removed by hand: this JVM's entries of that one go.
    if (head.isEmpty) IndexCache.forget(ctx.log.indexDir)
    ctx.log.commit(entry)
    entry
  }

  protected def build(begin: LogEntry, dataDir: Path): Built =
    IndexBuild.run(ctx, spec, dataDir, base = None, frame)
}
