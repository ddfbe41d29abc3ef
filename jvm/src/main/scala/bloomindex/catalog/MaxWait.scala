package bloomindex.catalog

import java.util.concurrent.{CompletableFuture, ConcurrentHashMap, ExecutionException, TimeUnit, TimeoutException}

import scala.util.control.NonFatal

import bloomindex.log.IndexRoot

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.internal.SQLConf

/**
 * How long a query's planning waits for an index (`spark.bloomindex.pruning.maxWait`): the work
 * that reads the index store (its log, its data, the check of the files to skip) runs on a
 * thread of its own while the planning thread waits at most that long. Past it, the planning
 * goes on without the index's answer (the caller plans the scan unpruned: never a wrong answer,
 * only an unpruned one), and the work goes on to its end, so that what it loads is in the
 * cache for a later query. Until it ends, no work on the same index root waits (another scan of
 * the same query, a join's filter, a later query): a store that stalls costs one wait, not one
 * per scan, join key or query. A planning thread interrupted while it waits (a cancelled
 * query) leaves its work running the same way.
 *
 * A file source write waits the same way for the list of the indexes that follow its writes
 * ([[bloomindex.actions.RefreshAfterWrite]]): past the wait it is written as if none did, and
 * their refresh is queued to the background.
 *
 * The work runs with the caller's session active and its SQL conf, so that what it reads of
 * either is what the planning thread would have read; the thread is made by the caller's, so
 * it holds the caller's local properties (the job group, the SQL execution) as Spark copies them
 * to a new thread.
 */
private[bloomindex] object MaxWait {

  /** The key of the session's index root, as the reads of one store are grouped (a root not set right: its reads fail later, caught). */
  def rootKey(spark: SparkSession): String = try new IndexRoot(spark).root.toString catch { case NonFatal(_) => "" }

  /** Work past its wait (or whose query was cancelled while waiting) that has not ended yet, with its index root. */
  private val overdue = ConcurrentHashMap.newKeySet[(String, CompletableFuture[_])]()

  /** Whether work on index root `root` ([[rootKey]]) is past its wait and still running. */
  def overdueOn(root: String): Boolean = overdue.stream().anyMatch(e => e._1 == root && !e._2.isDone)

  /**
   * `work`'s answer, or Left(why not) where it did not end within the session's wait or work on
   * index root `root` is still overdue; `what` names the work in the reason and the warning,
   * `without` what the caller does without it. An exception of `work` is thrown here as it was
   * thrown there.
   */
  def within[T](spark: SparkSession, root: String, what: String,
      without: String = "planned without it, the read goes on for later queries")(work: => T): Either[String, T] = {
    val waitMs = spark.sessionState.conf.getConf(BloomIndexSQLConf.PRUNING_MAX_WAIT)
    if (overdueOn(root)) {
      return Left(s"$what: a read of the index store that an earlier wait of " +
        s"${BloomIndexSQLConf.PRUNING_MAX_WAIT.key} (${waitMs} ms) gave up on is still running; not waiting again")
    }
    val conf = SQLConf.get
    val done = new CompletableFuture[T]()
    val t = new Thread(() => {
      SparkSession.setActiveSession(spark)
      try done.complete(SQLConf.withExistingConf(conf)(work))
      catch { case e: Throwable => done.completeExceptionally(e) }
      finally SparkSession.clearActiveSession()
    }, "bloomindex-index-read")
    t.setDaemon(true)
    t.start()
    def leave(): Unit = {
      val entry: (String, CompletableFuture[_]) = (root, done)
      overdue.add(entry)
      done.whenComplete((_, _) => overdue.remove(entry))
    }
    try Right(done.get(waitMs, TimeUnit.MILLISECONDS)) catch {
      case _: TimeoutException =>
        leave()
        val why = s"$what was not read within ${BloomIndexSQLConf.PRUNING_MAX_WAIT.key} (${waitMs} ms); $without"
        IndexCatalog.warnOnce(s"bloomindex: $why")
        Left(why)
      case e: InterruptedException =>
        // A cancelled query: the read is not interrupted (Hadoop's streams do not all survive it).
        leave()
        throw e
      case e: ExecutionException => throw e.getCause
    }
  }
}
