package bloomindex.actions

import java.util.concurrent.{ConcurrentHashMap, LinkedBlockingQueue, ThreadPoolExecutor, TimeUnit}

import scala.util.control.NonFatal

import bloomindex.catalog.{IndexCatalog, MaxWait}
import bloomindex.config.UnknownKeys
import bloomindex.indexing.WrittenFilters
import bloomindex.errors.ConcurrentBloomIndexUpdateException
import bloomindex.log.{IndexRoot, IndexState, LogEntry, RefreshMode}
import bloomindex.source.{SourceIdentity, SourceProviders}

import org.apache.spark.internal.Logging
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.{Call, CommandResult, LogicalPlan, V2WriteCommand}
import org.apache.spark.sql.execution.{QueryExecution, SparkPlan, SparkStrategy}
import org.apache.spark.sql.catalyst.catalog.BucketSpec
import org.apache.spark.sql.catalyst.expressions.{Attribute, SortOrder}
import org.apache.spark.sql.execution.command.DataWritingCommandExec
import org.apache.spark.sql.execution.datasources.{FileFormat, InsertIntoHadoopFsRelationCommand, V1WriteCommand}
import org.apache.spark.sql.bloomindex.{BloomIndexSQLConf, SessionCopies}
import org.apache.spark.sql.streaming.StreamingQueryListener
import org.apache.spark.sql.util.QueryExecutionListener

/**
 * Keeps indexes current when Spark writes their source (`refresh` = `on_write` or `background`,
 * see [[RefreshMode]]). Hooks where Spark offers them:
 *
 *  - '''File source writes''' (`INSERT INTO` / `INSERT OVERWRITE` of a file source table or
 *    folder, static or dynamic partitions, DataFrameWriter `save` / `insertInto` / `saveAsTable`
 *    in every mode, CTAS and RTAS: all plan an `InsertIntoHadoopFsRelationCommand`) are planned
 *    by [[WriteEvents.Planning]] as [[RefreshAfterWrite]], which runs the write, then, in the
 *    writing thread and before the write returns, an incremental REFRESH of each `on_write`
 *    index over the folder or table written (and queues the `background` ones). Where it can,
 *    the write's own tasks build the new files' filters as they write them ([[WriteTasks]]),
 *    and the refresh writes those instead of reading the files again.
 *  - '''Every other write''' a provider recognises ([[bloomindex.source.SourceProvider.writtenBy]]:
 *    Delta's commands and DataFrame writes, V2 writes such as Iceberg's appends, overwrites and
 *    row-level operations, Iceberg's replaces and TRUNCATE TABLE) is seen by a
 *    `QueryExecutionListener` after it succeeded. Spark calls listeners on its listener bus
 *    thread, after the write returned, so these refreshes are queued to the background
 *    refresher whatever the index's mode.
 *  - '''Stored procedures''' (Iceberg's `CALL <catalog>.system.rewrite_data_files(...)`, ...),
 *    which Spark runs while it analyses the CALL, are seen by the session's check rule on the
 *    analyzed plan ([[afterAnalysis]]), in the calling thread; queued as well.
 *  - '''Structured Streaming sinks''' by their description in each micro-batch's progress
 *    (a `StreamingQueryListener`, [[bloomindex.source.SourceProvider.writtenBySink]]); queued.
 *
 * A refresh never fails the write: a failure logs one warning and is kept for DESCRIBE
 * ([[lastFailure]]); the index stays as it was (files it does not cover are read whole) and the
 * next write or REFRESH catches up. The background refresher is one daemon thread per JVM with
 * a bounded queue of index names: a name already queued is not queued again (several writes,
 * one refresh); a full queue drops the request with a warning (the index is only stale).
 */
object WriteEvents extends Logging {

  private val QueueCapacity = 256

  private val failures = new ConcurrentHashMap[String, String]()
  private val queued = ConcurrentHashMap.newKeySet[String]()
  private lazy val refresher: ThreadPoolExecutor = {
    val pool = new ThreadPoolExecutor(1, 1, 0L, TimeUnit.MILLISECONDS, new LinkedBlockingQueue[Runnable](QueueCapacity),
      (r: Runnable) => { val t = new Thread(r, "bloomindex-refresher"); t.setDaemon(true); t })
    pool
  }

  /** The last automatic refresh failure of index `name` under `root` in this JVM, if the last one failed. */
  def lastFailure(root: String, name: String): Option[String] = Option(failures.get(key(root, name)))

  private def key(root: String, name: String) = s"$root\u0000$name"

  /** The indexes under the session's root whose source is `written` and that follow writes. */
  private def following(spark: SparkSession, written: SourceIdentity): Seq[LogEntry] =
    new IndexRoot(spark).list().filter(e => e.spec.refresh != RefreshMode.Manual && SourceProviders.sameSource(e.spec.source, written))

  /** Whether `written` is an index's own data (written under the root by its builds): no index's source. */
  private def indexData(spark: SparkSession, written: SourceIdentity): Boolean = {
    val (roots, writtenRoots) =
      SourceProviders.comparableRoots(SourceIdentity.of("", None, Seq(new IndexRoot(spark).root.toString)), written)
    val root = roots.head
    writtenRoots.nonEmpty && writtenRoots.forall(r => r == root || r.startsWith(root + "/"))
  }

  /** The indexes that follow writes of `written` (none for a write of an index's own data, or when they cannot be listed). */
  private[actions] def indexesOf(spark: SparkSession, written: SourceIdentity): Seq[LogEntry] =
    if (indexData(spark, written)) Nil else listFollowing(spark, written)

  /** [[following]], or none where they cannot be listed (a warning says so). */
  private def listFollowing(spark: SparkSession, written: SourceIdentity): Seq[LogEntry] = {
    try following(spark, written) catch {
      case NonFatal(e) =>
        logWarning(s"bloomindex: could not list the Bloom indexes to refresh after a write of ${show(written)}: $e")
        Nil
    }
  }

  /**
   * [[indexesOf]] for a file source write about to run, within `spark.bloomindex.pruning.maxWait`
   * ([[MaxWait]]): Left(why) where the index store did not answer in time (or an earlier write's
   * list of them is still past its wait), and the write goes on as if no index followed it
   * ([[afterWriteLater]]). Writes wait apart from queries: a query's slow index load does not
   * make a write leave its refresh to the background, nor a write's slow list a query unpruned.
   */
  private[actions] def indexesWithin(spark: SparkSession, written: SourceIdentity): Either[String, Seq[LogEntry]] =
    if (indexData(spark, written)) Right(Nil)
    else MaxWait.within(spark, "write\u0000" + MaxWait.rootKey(spark), s"the list of the Bloom indexes that follow writes of " +
        s"${show(written)}", without = "written without it, they are refreshed in the background") {
      listFollowing(spark, written)
    }

  /**
   * After a write of `written` committed whose indexes could not be listed in time ([[indexesWithin]],
   * `why`): the background refresher lists them (as long as the store takes; once per source
   * while queued) and refreshes them. Until then a query reads the new files whole (the index
   * does not hold them); where that list fails, a warning says so and the indexes stay behind
   * until the next write, a REFRESH, or a query finding them behind (`refresh.staleShare`).
   */
  def afterWriteLater(spark: SparkSession, written: SourceIdentity, why: String): Unit = {
    logWarning(s"bloomindex: the Bloom indexes that follow ${show(written)} are refreshed in the background after this " +
      s"write, not before it returns: $why")
    queueAfterWrite(spark, written)
  }

  /**
   * Queues [[afterWrite]] of `written` (the list of its indexes, then their refreshes) to the
   * background refresher: once per source while queued. For the listeners, which Spark calls on
   * its listener bus: a store slow to list the index root holds the refresher's thread, not the
   * bus (and every other listener of its queue).
   */
  private def queueAfterWrite(spark: SparkSession, written: SourceIdentity): Unit = {
    val source = written.table.getOrElse(written.comparable.toSeq.sorted.mkString(", "))
    queue(key(MaxWait.rootKey(spark), "\u0001" + source), s"the refresh of the Bloom indexes of ${show(written)}", spark) { copy =>
      try afterWrite(copy, written, inThread = false) catch {
        case NonFatal(e) => logWarning(s"bloomindex: could not refresh the Bloom indexes of ${show(written)} after a write: $e")
      }
    }
  }

  /**
   * After a write of `written` committed: refreshes the `on_write` indexes now when `inThread`
   * (else queues them), and queues the `background` ones. `listed`: the indexes, when the caller
   * listed them already; `built`: the new files' filters the write's tasks built
   * ([[WriteTasks]]), which the in-thread refreshes take instead of reading those files.
   */
  def afterWrite(spark: SparkSession, written: SourceIdentity, inThread: Boolean,
      listed: Option[Seq[LogEntry]] = None, built: Option[WrittenFilters] = None): Unit = {
    val indexes = listed.getOrElse(indexesOf(spark, written))
    indexes.foreach { e =>
      if (inThread && e.spec.refresh == RefreshMode.OnWrite) refreshNow(spark, e.spec.name, built)
      else enqueue(spark, e.spec.name)
    }
  }

  private val fromWrite = new ConcurrentHashMap[String, Integer]()

  /**
   * How many files' filters the last automatic refresh of `name` in this JVM took from the write
   * that wrote them instead of reading them (for tests and logs).
   */
  def filesFromWriteTasks(spark: SparkSession, name: String): Int =
    Option(fromWrite.get(key(new IndexRoot(spark).root.toString, name))).map(_.intValue).getOrElse(0)

  private val writtenSchema = ConcurrentHashMap.newKeySet[String]()

  /**
   * Whether the last automatic refresh of `name` in this JVM listed the source with the schema
   * its write wrote instead of inferring the source's (for tests and logs).
   */
  def listedWithWrittenSchema(spark: SparkSession, name: String): Boolean =
    writtenSchema.contains(key(new IndexRoot(spark).root.toString, name))

  private def show(w: SourceIdentity): String = w.table.getOrElse(w.roots.mkString(", "))

  private val locks = new ConcurrentHashMap[String, Object]()
  private val Attempts = 5
  /** How long an automatic refresh waits for another process's operation on the index to end. */
  private val YieldMs = 30000L
  /** A transient entry older than this is taken for a dead operation, not waited for. */
  private val StaleMs = 120000L

  /**
   * Waits (up to [[YieldMs]]) while the index's newest entry is another operation's transient
   * one, younger than [[StaleMs]]: two writers' refreshes that each committed past the other's
   * would knock each other out in turn; the one that waits starts from the other's result
   * instead (and finds nothing to do when that one saw its files).
   */
  private def awaitOthers(spark: SparkSession, name: String): Unit = {
    val log = new IndexRoot(spark).log(name)
    val deadline = System.currentTimeMillis() + YieldMs
    def busy: Boolean = try log.head().exists(_.entry.exists(e => !IndexState.isStable(e.state) &&
      !IndexAction.endedHere(e.operationId) && System.currentTimeMillis() - e.timestamp < StaleMs))
      catch { case NonFatal(_) => false }
    while (busy && System.currentTimeMillis() < deadline) Thread.sleep(200)
  }

  /**
   * An incremental REFRESH of `name`; a failure is logged and kept, never thrown. The automatic
   * refreshes of one index in this JVM run one at a time (a write's and the background one); one
   * waits for another process's operation in progress ([[awaitOthers]]), and a race lost anyway
   * is retried (up to four times, after a growing, jittered pause), the later attempt finding
   * what is left.
   */
  def refreshNow(spark: SparkSession, name: String, built: Option[WrittenFilters] = None): Unit = {
    val root = new IndexRoot(spark).root.toString
    val k = key(root, name)
    try locks.computeIfAbsent(k, _ => new Object).synchronized {
      var attempt = 1
      var done = false
      while (!done) {
        try {
          awaitOthers(spark, name)
          StepClock.mark("awaitOthers")
          val action = new RefreshAction(ActionContext.writing(spark, name), full = false, written = built)
          try action.run() finally {
            // Also when the refresh failed (its checks refused the source as it is now).
            fromWrite.put(k, action.filesFromWrite)
            if (action.listedWithWrittenSchema) writtenSchema.add(k) else writtenSchema.remove(k)
          }
          StepClock.mark("committed")
          done = true
        } catch {
          case e: ConcurrentBloomIndexUpdateException if attempt < Attempts =>
            logInfo(s"bloomindex: automatic refresh of '$name' lost a race (${e.getMessage}); retrying")
            attempt += 1
            Thread.sleep(100L * attempt + scala.util.Random.nextInt(200))
        }
      }
      failures.remove(k)
    } catch {
      case NonFatal(e) =>
        val why = Option(e.getMessage).getOrElse(e.toString)
        failures.put(k, s"${new java.sql.Timestamp(System.currentTimeMillis())}: $why")
        logWarning(s"bloomindex: the automatic refresh of Bloom index '$name' after a write failed; the index " +
          s"is as it was (files it does not cover are read whole) until the next write or REFRESH BLOOM INDEX: $why")
    }
  }

  /** Queues a refresh of `name` to the background refresher, unless one is already queued. */
  def enqueue(spark: SparkSession, name: String): Unit =
    queue(key(new IndexRoot(spark).root.toString, name), s"background refresh of Bloom index '$name'", spark) {
      copy => refreshNow(copy, name)
    }

  /**
   * Queues `task` (`what`) to the background refresher under `k`, unless a task of `k` is queued
   * and has not started. The task runs on the refresher's copy of `spark` with the settings
   * `spark` has now ([[SessionCopies.runAs]]), whatever SET follows before or while it runs: a
   * refresh reads the settings at several moments (the check of the decoding context against the
   * base version's, the context it records, the planning of its jobs), and on the session itself
   * the user's next statement after a write (a SET of the time zone) reached a refresh between
   * them: filters built under one context, recorded under another, wrong answers. The copy is the
   * thread's active session, and the thread has none of the job group, tags or pool it inherited
   * from the thread that first queued a task. (An `on_write` refresh runs in the writing thread,
   * on the session, before the write returns.)
   */
  private def queue(k: String, what: String, spark: SparkSession)(task: SparkSession => Unit): Unit =
    if (queued.add(k)) {
      try {
        val settings = SessionCopies.settings(spark)
        refresher.execute { () =>
          queued.remove(k)
          try {
            SessionCopies.clearLocalProperties(spark.sparkContext)
            // A copy's listeners are the session's (copied with it): none is added for it, nor are its unknown keys warned of again.
            val copy = SessionCopies.runAs(spark, settings) { c =>
              registered.synchronized(registered.add(c))
              UnknownKeys.warnedFor(c)
            }
            SessionCopies.withActive(copy)(task(copy))
          } catch {
            case NonFatal(e) => logWarning(s"bloomindex: $what failed; it stays stale until the next write or REFRESH: $e")
          }
        }
      } catch {
        case NonFatal(e) =>
          queued.remove(k)
          logWarning(s"bloomindex: $what not queued ($e); it stays stale until the next write or REFRESH")
      }
    }

  /** Waits until the background refresher has nothing queued or running (tests, and a driver about to stop). */
  def awaitIdle(timeoutMs: Long): Boolean = {
    val deadline = System.currentTimeMillis() + timeoutMs
    while (System.currentTimeMillis() < deadline) {
      if (queued.isEmpty && refresher.getActiveCount == 0 && refresher.getQueue.isEmpty) return true
      Thread.sleep(20)
    }
    false
  }

  /** Plans file source writes as [[RefreshAfterWrite]] (a planner strategy, tried before Spark's). */
  final class Planning(spark: SparkSession) extends SparkStrategy {
    override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
      case i: InsertIntoHadoopFsRelationCommand =>
        SourceProviders.all.flatMap(_.writtenBy(spark, i)).headOption.toSeq.map { written =>
          DataWritingCommandExec(RefreshAfterWrite(i, written), planLater(i.query))
        }
      case _ => Nil
    }
  }

  private val registered = java.util.Collections.newSetFromMap(new java.util.WeakHashMap[AnyRef, java.lang.Boolean]())

  /**
   * Adds the write listener to `spark`'s listener manager, once per session, and has the index
   * catalog queue the indexes a query finds behind its source (writes this session did not see).
   */
  def register(spark: SparkSession): Unit = {
    IndexCatalog.onBehind = (s, name) => enqueue(s, name)
    if (registered.synchronized(registered.add(spark))) {
      spark.listenerManager.register(new Listener(spark))
      spark.streams.addListener(new StreamListener(spark))
    }
  }

  /**
   * Structured Streaming sinks: after each micro-batch that wrote rows (or every
   * `spark.bloomindex.refresh.streamingBatches` of them), the sink's indexes are queued, by the
   * sink's description in the query's progress ([[bloomindex.source.SourceProvider.writtenBySink]]).
   */
  private final class StreamListener(spark: SparkSession) extends StreamingQueryListener {
    private val batches = new ConcurrentHashMap[String, java.lang.Long]()

    override def onQueryStarted(event: StreamingQueryListener.QueryStartedEvent): Unit = ()

    override def onQueryProgress(event: StreamingQueryListener.QueryProgressEvent): Unit = try {
      val p = event.progress
      if (p.sink != null && p.sink.numOutputRows != 0) {
        SourceProviders.all.iterator.flatMap(_.writtenBySink(spark, p.sink.description)).take(1).foreach { written =>
          val every = spark.sessionState.conf.getConf(BloomIndexSQLConf.REFRESH_STREAMING_BATCHES)
          val n: Long = batches.merge(p.id.toString + "\u0000" + p.sink.description, 1L, (a, b) => a + b)
          if (n % every == 0) queueAfterWrite(spark, written)
        }
      }
    } catch {
      case NonFatal(e) => logWarning(s"bloomindex: could not tell which source a streaming batch wrote: $e")
    }

    override def onQueryTerminated(event: StreamingQueryListener.QueryTerminatedEvent): Unit = {
      val prefix = event.id.toString + "\u0000"
      batches.keySet().removeIf(_.startsWith(prefix))
    }
  }

  /**
   * A stored procedure's writes (`CALL <catalog>.system.rewrite_data_files(...)`, ...), seen by
   * the session's check rule on the analyzed plan. Spark runs a procedure while it analyses the
   * CALL (its `InvokeProcedures` rule) and puts the result in its place, a `CommandResult`
   * holding the `Call`: no command is executed afterwards, so the query execution listener
   * hears of it only if the result is collected. Here, in the thread that ran the CALL, right
   * after the procedure returned: the source the provider tells from the call's arguments
   * ([[bloomindex.source.SourceProvider.writtenBy]]) has its indexes queued. Only a plan that is
   * that result itself counts (a DataFrame made from it later, `show()`, is another plan over it).
   */
  def afterAnalysis(spark: SparkSession, plan: LogicalPlan): Unit = plan match {
    case r: CommandResult => r.commandLogicalPlan match {
      case call: Call if call.execute =>
        try {
          SourceProviders.all.iterator.flatMap(_.writtenBy(spark, call)).take(1).foreach(w => afterWrite(spark, w, inThread = false))
        } catch {
          case NonFatal(e) => logWarning(s"bloomindex: could not tell which source a procedure wrote: $e")
        }
      case _ =>
    }
    case _ =>
  }

  /** Writes other than file source writes, after they succeeded: their indexes are queued. */
  private final class Listener(spark: SparkSession) extends QueryExecutionListener {
    override def onSuccess(funcName: String, qe: QueryExecution, durationNs: Long): Unit = try {
      val written = writes(spark, qe.analyzed)
      written.foreach(w => queueAfterWrite(spark, w))
    } catch {
      case NonFatal(e) => logWarning(s"bloomindex: could not tell which source a write wrote: $e")
    }

    override def onFailure(funcName: String, qe: QueryExecution, exception: Exception): Unit = ()
  }

  /** The sources a plan's write commands wrote, other than file source writes (refreshed in the writing thread). */
  private[actions] def writes(spark: SparkSession, plan: LogicalPlan): Seq[SourceIdentity] = {
    val out = Seq.newBuilder[SourceIdentity]
    plan.foreach {
      case _: InsertIntoHadoopFsRelationCommand =>
      case node =>
        SourceProviders.all.iterator.flatMap(_.writtenBy(spark, node)).take(1).toSeq.headOption.orElse(node match {
          case w: V2WriteCommand => SourceProviders.describe(w.table).map(_.identity)
          case _ => None
        }).foreach(out += _)
    }
    out.result().distinct
  }
}

/**
 * A file source write followed by the refresh of the indexes that follow its source's writes
 * ([[WriteEvents.afterWrite]]), in the writing thread, after the write's own commit (which
 * includes its catalog updates and the refresh of the table's cached listing).
 */
case class RefreshAfterWrite(write: InsertIntoHadoopFsRelationCommand, written: SourceIdentity) extends V1WriteCommand {

  override def query: LogicalPlan = write.query

  // A V1 write as the one it wraps: Spark's planned writes (V1Writes, and adaptive execution
  // inserted below the WriteFiles node, not above it) treat it as they treat the write itself.
  override def fileFormat: FileFormat = write.fileFormat
  override def partitionColumns: Seq[Attribute] = write.partitionColumns
  override def staticPartitions: Map[String, String] = write.staticPartitions
  override def bucketSpec: Option[BucketSpec] = write.bucketSpec
  override def options: Map[String, String] = write.options
  override def requiredOrdering: Seq[SortOrder] = write.requiredOrdering

  override def outputColumnNames: Seq[String] = write.outputColumnNames

  override lazy val metrics = write.metrics

  override def run(sparkSession: org.apache.spark.sql.classic.SparkSession, child: SparkPlan): Seq[Row] = {
    StepClock.timed(s"bloomindex: write of ${written.table.getOrElse(written.roots.mkString(", "))} and its refresh") {
      // Within maxWait: a stalled index store does not hold a write (indexed or not) from starting.
      val indexes = WriteEvents.indexesWithin(sparkSession, written)
      StepClock.mark("indexes listed")
      // The write's tasks build the new files' filters where they can (WriteTasks): the refresh then reads no data.
      val known = indexes.getOrElse(Nil)
      val inTasks = if (known.isEmpty) None else WriteTasks.prepare(sparkSession, write, child, known)
      val rows = write.run(sparkSession, inTasks.map(_.plan).getOrElse(child))
      StepClock.mark("write")
      indexes match {
        case Right(listed) =>
          WriteEvents.afterWrite(sparkSession, written, inThread = true, listed = Some(listed), built = inTasks.flatMap(_.result()))
        case Left(why) => WriteEvents.afterWriteLater(sparkSession, written, why)
      }
      rows
    }
  }

  override protected def withNewChildInternal(newChild: LogicalPlan): RefreshAfterWrite =
    copy(write = write.withNewChildren(Seq(newChild)).asInstanceOf[InsertIntoHadoopFsRelationCommand])
}
