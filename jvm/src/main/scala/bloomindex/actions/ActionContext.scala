package bloomindex.actions

import scala.util.control.NonFatal

import bloomindex.log.{IndexLog, IndexRoot}

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession

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
   * Removes data folders no committed entry needs: leftovers of failed or dead builds. Run by
   * the command that committed log version `version`, keeping `keep` and the folders of
   * commands that committed after it (listed first, then the log read: a command commits its
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

  /** Runs `f` in the index's Spark job group (the UI groups a build's jobs; Python polls it). */
  def inJobGroup[T](description: String)(f: => T): T = {
    val sc = spark.sparkContext
    val previous = Option(sc.getLocalProperty("spark.jobGroup.id"))
    sc.setJobGroup(ActionContext.jobGroup(name), description, interruptOnCancel = true)
    bloomindex.indexing.BuildProgress.clear(ActionContext.jobGroup(name))
    try f finally {
      previous match {
        case Some(g) => sc.setJobGroup(g, Option(sc.getLocalProperty("spark.job.description")).getOrElse(""))
        case None => sc.clearJobGroup()
      }
    }
  }
}

object ActionContext {

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
