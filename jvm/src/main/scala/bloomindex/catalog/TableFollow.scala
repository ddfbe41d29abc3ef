package bloomindex.catalog

import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import bloomindex.errors.ConcurrentBloomIndexUpdateException
import bloomindex.log.{IndexLog, IndexRoot, IndexState, LogEntry, SourceSpec}
import bloomindex.source.{Relocation, SourceIdentity, SourceProviders}

import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession

/**
 * Indexes follow their table when it was renamed where no event of this session reports it (by
 * another engine or cluster): an ACTIVE index over a catalog table whose recorded name no longer
 * names it finds the table again by the identity it recorded (its provider's
 * [[bloomindex.source.SourceProvider.relocate]]: Iceberg's table UUID, a session catalog table's
 * location, format and creation time) and, when exactly one table has it, commits a
 * `RENAME TABLE` log entry naming it (its data as it was), as a rename through the session does.
 * Zero tables: the index is ORPHANED as before; several: it stays ORPHANED, and a warning names them.
 *
 * Asked by SHOW, DESCRIBE and REFRESH of the index ([[locate]], [[follow]]), and when a query
 * scans a table no index matches by name but an index's provider says it may be one of them
 * renamed ([[atScan]]: decided without a catalog call; the search runs only then, and its
 * negative outcome is remembered for a minute per index version and scanned table).
 */
object TableFollow extends Logging {

  /** The operation a follow's log entry records (the same as a rename through the session). */
  val Operation = "RENAME TABLE"

  /**
   * `entry` (an index's newest entry) as its source is now: the RENAME TABLE entry committed when
   * its table was followed (or `entry`), and None when its source is there, or why it is ORPHANED.
   */
  def locate(spark: SparkSession, entry: LogEntry): (LogEntry, Option[String]) = {
    val source = entry.spec.source
    val provider = SourceProviders.of(source)
    if (entry.state != IndexState.Active) return (entry, None)
    if (source.table.isEmpty) return (entry, if (provider.exists(spark, source)) None else Some(s"no source ${source.display}"))
    val where = try provider.relocate(spark, entry) catch {
      case NonFatal(e) =>
        IndexLog.warnOnce(s"bloomindex: Bloom index '${entry.spec.name}': could not tell where table ${source.display} is (${e.getMessage})")
        if (provider.exists(spark, source)) Relocation.Here else Relocation.Gone(s"no table ${source.display}")
    }
    where match {
      case Relocation.Here => (entry, None)
      case Relocation.Gone(why) => (entry, Some(why))
      case Relocation.Ambiguous(tables, identity) =>
        val why = s"${tables.size} tables have the identity of ${source.display} ($identity): ${tables.mkString(", ")}; " +
          s"not followed (DROP BLOOM INDEX ${entry.spec.name} and create it on the right one)"
        IndexLog.warnOnce(s"bloomindex: Bloom index '${entry.spec.name}': $why")
        (entry, Some(why))
      case Relocation.Moved(to, identity) => (followTo(spark, entry, to, identity), None)
    }
  }

  /**
   * [[locate]] of index `name`'s newest entry, if it has one that is not DELETED (with
   * `tablesOnly`, only an index over a catalog table: a folder's existence is not checked).
   */
  def follow(spark: SparkSession, name: String, tablesOnly: Boolean = false): Option[(LogEntry, Option[String])] = {
    val head = try new IndexRoot(spark).log(name).head().flatMap(_.entry) catch { case NonFatal(_) => None }
    head.filter(e => e.state != IndexState.Deleted && (!tablesOnly || e.spec.source.table.isDefined)).map(locate(spark, _))
  }

  /**
   * `entry` (an index's entry) as it answers for a scan of `target`: itself when its source is
   * `target`'s, else for an ACTIVE entry whose table may have been renamed into `target`, the
   * entry that follows it ([[atScan]]); else None.
   */
  def forScan(spark: SparkSession, log: IndexLog, entry: LogEntry, target: SourceIdentity): Option[LogEntry] =
    if (SourceProviders.sameSource(entry.spec.source, target)) Some(entry)
    else if (entry.state != IndexState.Active) None
    else atScan(spark, log, entry, target)

  private val notFollowed = new ConcurrentHashMap[(String, Long, String), java.lang.Long]()
  private val NegativeTtlMs = 60000L

  /**
   * `entry` (the ACTIVE entry of the index in `log`) for a scan of `target` that its source does
   * not match: when its provider says `target` may be its table renamed, and the table is found
   * by identity to be exactly `target`, the entry under the new name (the RENAME TABLE entry
   * committed; when it cannot be, the same entry naming `target`, for this query).
   */
  private def atScan(spark: SparkSession, log: IndexLog, entry: LogEntry, target: SourceIdentity): Option[LogEntry] = {
    val provider = SourceProviders.of(entry.spec.source)
    if (entry.spec.source.table.isEmpty || !provider.mayBeRenamed(entry.spec.source, target)) return None
    val key = (log.indexDir.toString, entry.version, target.table.getOrElse(""))
    val now = System.currentTimeMillis()
    val until = notFollowed.get(key)
    if (until != null && until > now) return None
    val found = try provider.relocate(spark, entry) catch { case NonFatal(_) => Relocation.Here }
    found match {
      case Relocation.Moved(to, identity) if SourceProviders.sameSource(to, target) => Some(followTo(spark, entry, to, identity))
      case _ =>
        if (notFollowed.size > 10000) notFollowed.clear()
        notFollowed.put(key, now + NegativeTtlMs)
        None
    }
  }

  /** `entry` naming `to`: the RENAME TABLE entry [[commit]] committed, or when it could not, `entry` naming `to` as it is. */
  private def followTo(spark: SparkSession, entry: LogEntry, to: SourceSpec, identity: String): LogEntry =
    commit(spark, entry, to, identity).getOrElse(entry.copy(spec = entry.spec.copy(source = to)))

  /**
   * Commits a RENAME TABLE entry of `entry`'s index naming `to`, its data as it was, when the
   * index's newest entry is still `entry`'s version; the entry committed, or None (another
   * command committed meanwhile, or the log cannot be written: a warning).
   */
  def commit(spark: SparkSession, entry: LogEntry, to: SourceSpec, identity: String): Option[LogEntry] = {
    val name = entry.spec.name
    try {
      val log = new IndexRoot(spark).writableLog(name)
      val head = log.head()
      if (!head.exists(h => h.version == entry.version && h.entry.exists(_.state == IndexState.Active))) return None
      val next = entry.copy(version = entry.version + 1, operation = Operation, operationId = UUID.randomUUID().toString,
        timestamp = System.currentTimeMillis(), spec = entry.spec.copy(source = to))
      log.commit(next)
      logInfo(s"bloomindex: Bloom index '$name' follows its table ${entry.spec.source.display}, renamed outside this " +
        s"session, to ${to.display} (found by $identity)")
      Some(next)
    } catch {
      case _: ConcurrentBloomIndexUpdateException => None
      case NonFatal(e) =>
        IndexLog.warnOnce(s"bloomindex: Bloom index '$name': its table ${entry.spec.source.display} is now ${to.display}, " +
          s"but the log could not record it ($e)")
        None
    }
  }
}
