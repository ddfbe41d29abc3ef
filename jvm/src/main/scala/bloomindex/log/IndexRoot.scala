package bloomindex.log

import scala.util.control.NonFatal

import bloomindex.config.BloomIndexConf
import bloomindex.errors.BloomIndexErrors

import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.{AnalysisException, SparkSession}
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf

/**
 * Where a session's indexes live: `spark.bloomindex.root`, one folder per index, named by the
 * index. The operations (`bloomindex.actions`) and the catalog find an index's log here.
 */
class IndexRoot(spark: SparkSession) extends Logging {

  private def hadoopConf = spark.sessionState.newHadoopConf()

  lazy val root: Path = new Path(BloomIndexConf.root(spark))

  /** Index names are folder names: plain identifiers, nothing that could leave the root. */
  def checkName(name: String): Unit =
    if (name == null || !IndexRoot.isName(name)) {
      throw BloomIndexErrors.invalidName(name)
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
  def writableLog(name: String): IndexLog = {
    val l = log(name)
    val dir = l.indexDir
    if (dir.toUri.getScheme == null || dir.toUri.getScheme == "file") {
      Seq(dir, l.logDir, new Path(dir, "data")).map(p => java.nio.file.Paths.get(p.toUri.getPath))
        .find(java.nio.file.Files.isSymbolicLink).foreach { link =>
          throw BloomIndexErrors.unsafeLocation(name, link.toString, BloomIndexSQLConf.ROOT.key, root.toString)
        }
    }
    l
  }

  /**
   * The names of the folders under the root that can be indexes, sorted. One listing (a root
   * that does not exist has none): on an object store, `exists` first would cost two requests more.
   */
  def names(): Seq[String] = {
    val fs = root.getFileSystem(hadoopConf)
    val listed = try fs.listStatus(root) catch { case _: java.io.FileNotFoundException => Array.empty[org.apache.hadoop.fs.FileStatus] }
    listed.filter(_.isDirectory).map(_.getPath.getName).filter(IndexRoot.isName).sorted.toSeq
  }

  /** Whether `name` has a history whose newest readable entry is not a DROP (or has damage after it). */
  def exists(name: String): Boolean =
    log(name).head().exists(h => h.entry.exists(_.state != IndexState.Deleted) || h.damaged.nonEmpty)

  /** Latest entries of every index that is not DELETED, by name. */
  def list(): Seq[LogEntry] = listed().collect { case Right(e) => e }

  /**
   * As [[list]], with the indexes a newer bloomindex wrote (whose log this build does not read:
   * `BLOOM_INDEX_NEWER_FORMAT`) as `Left`: SHOW lists them rather than hide them. A log that
   * cannot be read for another reason is skipped with a warning.
   */
  def listed(): Seq[Either[IndexRoot.NewerIndex, LogEntry]] = names().flatMap { name =>
    try log(name).head().flatMap(_.entry).filter(_.state != IndexState.Deleted).map(Right(_))
    catch {
      case e: AnalysisException if e.getCondition == "BLOOM_INDEX_NEWER_FORMAT" =>
        val version = Option(e.getMessageParameters.get("version")).flatMap(_.toLongOption).getOrElse(-1L)
        Some(Left(IndexRoot.NewerIndex(name, version)))
      case NonFatal(e) =>
        logWarning(s"Bloom index '$name': unreadable log, skipped: ${e.getMessage}")
        None
    }
  }
}

object IndexRoot {
  /** An index whose log has an entry of a newer format (at log `version`): SHOW's state [[NewerState]]. */
  case class NewerIndex(name: String, version: Long)

  val NewerState = "NEWER_FORMAT"

  /** The folder under the root that holds the workload history (bloomindex.history), never an index. */
  val HistoryFolder = "_history"

  def isName(name: String): Boolean = name.matches("[A-Za-z0-9_][A-Za-z0-9_-]{0,127}") && name != HistoryFolder
}
