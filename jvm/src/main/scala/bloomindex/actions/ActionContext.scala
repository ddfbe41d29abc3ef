package bloomindex.actions

import scala.util.control.NonFatal

import bloomindex.log.{IndexLog, IndexRoot, IndexState}

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf

/**
 * What the steps of one operation on one index share: the session, the index's name and log,
 * and the housekeeping every operation does (clock, data folders, the Spark job group).
 */
final class ActionContext(val spark: SparkSession, val name: String, val log: IndexLog) {
  private val logger = org.slf4j.LoggerFactory.getLogger(classOf[ActionContext])

  def hadoopConf: org.apache.hadoop.conf.Configuration = spark.sessionState.newHadoopConf()

  def now(): Long = System.currentTimeMillis()

  def damageNote(damaged: Seq[(Long, String)]): String = ActionContext.damageNote(damaged)

  /** The folder an operation writes its data to, relative to the index's folder and absolute. */
  def dataDir(operationId: String): (String, Path) = {
    val rel = s"data/$operationId"
    (rel, new Path(log.indexDir, rel))
  }

  def deleteQuietly(p: Path): Unit =
    try p.getFileSystem(hadoopConf).delete(p, true) catch {
      case NonFatal(e) => logger.warn(s"could not delete $p: $e")
    }

  /**
   * Removes every data folder but `keep` and those of commands that committed after log version
   * `version` (DROP: no retention, a dropped index answers nothing). Run by the command that
   * committed `version`, keeping the folders of commands that committed after it (listed first, then the log read: a command commits its
   * first entry before it creates its folder, so every folder listed has its entry by then).
   */
  def cleanupData(version: Long, keep: Set[String]): Unit = {
    val dir = new Path(log.indexDir, "data")
    val fs = dir.getFileSystem(hadoopConf)
    if (fs.exists(dir)) {
      val folders = fs.listStatus(dir).filter(_.isDirectory).map(_.getPath)
      val newer = log.versions().filter(_ > version).flatMap(v => try Some(log.read(v).operationId) catch {
        case NonFatal(_) => None
      }).map(id => s"data/$id").toSet
      folders.foreach { p =>
        val rel = s"data/${p.getName}"
        if (!keep.contains(rel) && !newer.contains(rel)) deleteQuietly(p)
      }
    }
  }

  /**
   * VACUUM: deletes the data folders no version needs any more, and returns them with their
   * sizes. Needed are: the folders of the newest ACTIVE version (its own and those whose probe
   * files it keeps, [[bloomindex.log.IndexData.folders]]), of every ACTIVE version replaced less
   * than `retentionMs` ago (a query planned on it may still read them), of the operations that
   * may still commit, and `keep`. Everything else under `data/` goes: older versions' data and
   * what failed or dead builds left. The log is read newest first, only as far back as the
   * retention reaches.
   *
   * A log entry that cannot be read (other than a damaged one, passed over as queries pass over
   * it) deletes nothing: `strict` (the VACUUM statement) throws its error, otherwise a warning.
   *
   * Which operations may still commit: run by an operation that committed its first entry as
   * version `started`, those from it on (an operation with a transient entry before `started`
   * can never commit: its next version is taken); otherwise (the VACUUM statement) every
   * operation after the newest stable entry.
   */
  def vacuum(retentionMs: Long, keep: Set[String] = Set.empty, started: Option[Long] = None,
      strict: Boolean = false): ActionContext.Vacuumed = {
    val dir = new Path(log.indexDir, "data")
    val fs = dir.getFileSystem(hadoopConf)
    val folders = try fs.listStatus(dir).filter(_.isDirectory).map(_.getPath).toSeq
      catch { case _: java.io.FileNotFoundException => Nil }
    val candidates = folders.filterNot(p => keep.contains(s"data/${p.getName}"))
    if (candidates.isEmpty) return ActionContext.Vacuumed(Nil, 0)
    val versions = log.versionStatuses()
    val (needed, cut) = neededFolders(versions, retentionMs, started) match {
      case Right(found) => found
      // The statement says why; a build's clean-up deletes nothing this time.
      case Left(err) if strict => throw err
      case Left(err) =>
        logger.warn(s"bloomindex: index '$name': clean-up skipped, a log entry could not be read: $err")
        return ActionContext.Vacuumed(Nil, 0)
    }
    val gone = candidates.filterNot(p => needed.contains(s"data/${p.getName}")).map { p =>
      val bytes = try fs.getContentSummary(p).getLength catch { case NonFatal(_) => 0L }
      deleteQuietly(p)
      p -> bytes
    }
    // Log entries up to a version replaced longer ago than the retention: nothing reads them (the
    // newest stable entry and all after it stay, so the next version number is unchanged).
    val entries = cut.toSeq.flatMap(c => versions.map(_._1).takeWhile(_ <= c)).count { v =>
      try log.entryPath(v).getFileSystem(hadoopConf).delete(log.entryPath(v), false) catch {
        case NonFatal(e) => logger.warn(s"could not delete ${log.entryPath(v)}: $e"); false
      }
    }
    ActionContext.Vacuumed(gone, entries)
  }

  /**
   * See [[vacuum]]: the data folders (relative to the index's folder) the log (`versions`, its
   * entries' statuses) still needs, and
   * the newest version whose entry and all older ones nothing reads any more (a stable entry
   * replaced longer ago than the retention), if any.
   */
  private def neededFolders(versions: Seq[(Long, org.apache.hadoop.fs.FileStatus)], retentionMs: Long,
      started: Option[Long]): Either[Throwable, (Set[String], Option[Long])] = {
    val now = this.now()
    val out = Set.newBuilder[String]
    // The commit time of the newer stable entry that replaced the one at hand.
    var replacedAt: Option[Long] = None
    val it = versions.reverseIterator
    while (it.hasNext) {
      val (v, status) = it.next()
      // A damaged entry says nothing that can be used (queries skip it too); one that cannot be
      // read now (a store's error, an entry of a newer format) stops the VACUUM before anything is
      // deleted: taken for damage, the data of the version it names would go.
      val e = try Some(log.readCached(v, status)) catch {
        case err: bloomindex.log.LogJson.NewerFormatException => return Left(err)
        case _: bloomindex.log.LogJson.InvalidLogEntryException | _: bloomindex.log.LogStore.OversizedEntryException => None
        case NonFatal(err) => return Left(err)
      }
      e.foreach { e =>
        if (started.fold(replacedAt.isEmpty)(v >= _)) out += s"data/${e.operationId}"
        if (e.state == IndexState.Active || e.state == IndexState.Deleted) {
          if (replacedAt.exists(t => now - t >= retentionMs)) return Right((out.result(), Some(v)))
          if (e.state == IndexState.Active) e.data.foreach(out ++= _.folders)
          replacedAt = Some(e.timestamp)
        }
      }
    }
    Right((out.result(), None))
  }

  /**
   * Runs `f` in the index's Spark job group (the UI groups a build's jobs; Python polls it),
   * then gives the thread back its own group, description and interrupt setting as they were
   * (a Spark Connect operation sets them for its jobs; clearing them would leave its later
   * jobs without them).
   *
   * The session's SQL settings go to the jobs' tasks, as Spark's SQL executions pass them
   * (`SQLExecution.withSQLConfPropagated`): the CSV, JSON and XML parsers read some of theirs
   * (`spark.sql.legacy.timeParserPolicy`, the datetime fallbacks, ...) inside the tasks. A
   * statement runs in an SQL execution that does this already; a build through the API or the
   * background refresher did not, so its tasks parsed at the defaults while the version recorded
   * the session's values (an audit: a CSV date a LEGACY pattern reads, built through the API
   * and looked up under LEGACY, was pruned away).
   */
  def inJobGroup[T](description: String)(f: => T): T = {
    val sc = spark.sparkContext
    val saved = ActionContext.JobProperties.map(k => k -> sc.getLocalProperty(k))
    sc.setJobGroup(ActionContext.jobGroup(name), description, interruptOnCancel = true)
    bloomindex.indexing.BuildProgress.clear(ActionContext.jobGroup(name))
    try org.apache.spark.sql.execution.SQLExecution.withSQLConfPropagated(
      spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession])(f)
    finally saved.foreach { case (k, v) => sc.setLocalProperty(k, v) } // null removes it
  }
}

object ActionContext {

  /** The thread's job properties `SparkContext.setJobGroup` sets: group, description, interrupt on cancel. */
  private val JobProperties = Seq("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")

  /** What a VACUUM deleted: data folders (with their bytes) and log entries. */
  final case class Vacuumed(folders: Seq[(Path, Long)], logEntries: Int)

  /** The context of an operation that writes index `name` (see [[IndexRoot.writableLog]]). */
  def writing(spark: SparkSession, name: String): ActionContext =
    new ActionContext(spark, name, new IndexRoot(spark).writableLog(name))

  def reading(spark: SparkSession, name: String): ActionContext =
    new ActionContext(spark, name, new IndexRoot(spark).log(name))

  /** The Spark job group of an index's builds: the UI groups them, Python polls it for progress. */
  def jobGroup(name: String): String = s"bloomindex-$name"

  def damageNote(damaged: Seq[(Long, String)]): String =
    damaged.map { case (v, why) => s"log version $v is damaged ($why)" }.mkString("; ")
}
