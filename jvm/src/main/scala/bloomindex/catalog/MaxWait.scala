package bloomindex.catalog

import java.util.concurrent.{CompletableFuture, ConcurrentHashMap, ExecutionException, TimeUnit, TimeoutException}

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.internal.SQLConf

/**
 * How long a query's planning waits for an index (`spark.bloomindex.pruning.maxWait`): the work
 * that reads the index store (its log, its data, the check of the files to skip) runs on a
 * thread of its own while the planning thread waits at most that long. Past it, the planning
 * goes on without the index's answer (the caller plans the scan unpruned: never a wrong answer,
 * only an unpruned one), and the work goes on to its end, so that what it loads is in the
 * cache for a later query. Until it ends, a query on the same `key` does not wait for it again:
 * a store that stalls costs one query the wait, not every query.
 *
 * The work runs with the caller's session active and its SQL conf, so that what it reads of
 * either is what the planning thread would have read; the thread is made by the caller's, so
 * it holds the caller's local properties (the job group, the SQL execution) as Spark copies them
 * to a new thread.
 */
private[bloomindex] object MaxWait {

  /** Work past its wait that has not ended yet, by key. */
  private val overdue = new ConcurrentHashMap[String, CompletableFuture[_]]()

  /**
   * `work`'s answer, or Left(why not) where it did not end within the session's wait or an
   * earlier run for `key` is still overdue; `what` names the work in the reason and the warning.
   * An exception of `work` is thrown here as it was thrown there.
   */
  def within[T](spark: SparkSession, key: String, what: String)(work: => T): Either[String, T] = {
    val waitMs = spark.sessionState.conf.getConf(BloomIndexSQLConf.PRUNING_MAX_WAIT)
    val earlier = overdue.get(key)
    if (earlier != null && !earlier.isDone) {
      return Left(s"$what is still being read for an earlier query that waited " +
        s"${BloomIndexSQLConf.PRUNING_MAX_WAIT.key} (${waitMs} ms) for it; not waiting again")
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
    try Right(done.get(waitMs, TimeUnit.MILLISECONDS)) catch {
      case _: TimeoutException =>
        overdue.put(key, done)
        done.whenComplete((_, _) => overdue.remove(key, done))
        val why = s"$what was not read within ${BloomIndexSQLConf.PRUNING_MAX_WAIT.key} (${waitMs} ms); " +
          "planned without it, the read goes on for later queries"
        IndexCatalog.warnOnce(s"bloomindex: $why")
        Left(why)
      case e: ExecutionException => throw e.getCause
    }
  }
}
