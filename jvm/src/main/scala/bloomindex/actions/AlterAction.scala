package bloomindex.actions

import java.util.{Locale, UUID}

import bloomindex.errors.BloomIndexErrors
import bloomindex.log.{IndexState, LogEntry}

/**
 * `ALTER BLOOM INDEX name SET OPTIONS (refresh = ...)`: commits a log entry with the new setting
 * and the data as it was (nothing is rebuilt). Only the options that change no filter may be set
 * (`refresh`); the others (fpp, sizing, algorithm, global) are a new index: CREATE.
 */
final class AlterAction(ctx: ActionContext, options: Map[String, String]) {

  def run(): LogEntry = {
    val settable = Seq("refresh")
    val opts = options.map { case (k, v) =>
      val key = k.toLowerCase(Locale.ROOT)
      if (!settable.contains(key)) throw BloomIndexErrors.unknownOption(k, "ALTER BLOOM INDEX", settable)
      key -> v
    }
    if (opts.isEmpty) throw BloomIndexErrors.unknownOption("(none)", "ALTER BLOOM INDEX", settable)
    val l = ctx.log
    val head = l.head().flatMap(h => h.entry.map(h.version -> _))
    // A transient entry: a command running, or one that stopped before its commit (another
    // process's, which this one cannot tell apart); the index exists, ALTER waits for it.
    head.filter { case (_, e) => !IndexState.isStable(e.state) && l.lastActive().isDefined }.foreach { case (v, e) =>
      throw BloomIndexErrors.commandInProgress(ctx.name, e.operation, v, "ALTER BLOOM INDEX")
    }
    val (version, entry) = head.filter(_._2.state == IndexState.Active).getOrElse(throw BloomIndexErrors.notFound(ctx.name))
    val refresh = opts.get("refresh").map(IndexOptions.parseRefresh).getOrElse(entry.spec.refresh)
    val altered = entry.copy(version = version + 1, operation = "ALTER", operationId = UUID.randomUUID().toString,
      timestamp = ctx.now(), spec = entry.spec.copy(refresh = refresh))
    l.commit(altered)
    altered
  }
}
