package bloomindex.actions

import java.util.UUID

import bloomindex.errors.BloomIndexErrors
import bloomindex.log.IndexState

/**
 * DROP BLOOM INDEX: commits the DELETED entry (queries stop using the index at once), then
 * removes every data folder (no build, so nothing to roll back). A DROP after damaged log
 * entries commits after them, with the newest readable entry's spec.
 */
final class DropAction(ctx: ActionContext, ifExists: Boolean) {

  /** True when dropped; false when there was nothing to drop and `ifExists` was set. */
  def run(): Boolean = {
    val l = ctx.log
    l.head() match {
      case Some(h) if h.entry.isDefined && (h.entry.get.state != IndexState.Deleted || h.damaged.nonEmpty) =>
        val dropped = h.entry.get.copy(version = h.version + 1, state = IndexState.Deleted, operation = "DROP",
          operationId = UUID.randomUUID().toString, timestamp = ctx.now(), data = None)
        l.commit(dropped)
        ctx.cleanupData(dropped.version, keep = Set.empty)
        true
      case Some(h) if h.entry.isEmpty =>
        throw BloomIndexErrors.damaged(ctx.name, "cannot be dropped: no log entry is readable " +
          s"(${ctx.damageNote(h.damaged)}); CREATE BLOOM INDEX ${ctx.name} starts a new history, or remove ${l.indexDir}")
      case _ =>
        if (ifExists) false else throw BloomIndexErrors.notFound(ctx.name)
    }
  }
}
