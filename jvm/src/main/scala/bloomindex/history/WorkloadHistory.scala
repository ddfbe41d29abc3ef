package bloomindex.history

import java.util.concurrent.{ConcurrentHashMap, ConcurrentLinkedQueue, TimeUnit}
import java.util.concurrent.locks.LockSupport

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import bloomindex.config.BloomIndexConf
import bloomindex.source.SourceProviders

import org.apache.spark.SparkContext
import org.apache.spark.internal.Logging
import org.apache.spark.scheduler.{SparkListener, SparkListenerApplicationEnd, SparkListenerEvent}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.{BloomIndexSQLConf, ListenerBus}
import org.apache.spark.sql.execution.SQLExecution
import org.apache.spark.sql.execution.ui.{SparkListenerSQLExecutionEnd, SparkListenerSQLExecutionStart}

/**
 * The workload history's recorder: what the pruning rules saw of each scan, with the query's
 * wall time, written under the index root off the query's thread.
 *
 *  - On the planning path ([[add]]): the record is appended to memory, nothing more: to the SQL
 *    execution the planning thread runs in (`spark.sql.execution.id`), once per scan node
 *    (adaptive execution plans parts of a query again). Planned outside an execution: a thread
 *    with job tags (a Spark Connect operation's, which plans its query before it starts the
 *    execution) keeps it until an execution with those tags starts; else (EXPLAIN,
 *    `inputFiles` on a classic session) it goes straight to the write queue.
 *  - A listener of the SparkContext's events ([[Listener]]) joins an execution's records with
 *    its duration (its end event's time minus its start event's) when it ends, and queues them.
 *  - A daemon thread writes the queue every [[FlushIntervalMs]], one file per index root
 *    ([[HistoryFiles]]), and applies the limits. A failure to write drops that batch and logs
 *    one warning per root; no query ever sees it.
 *
 * [[flush]] (the history's readers call it first) lets the events posted so far reach the
 * listener and writes what is queued, in the caller's thread.
 */
object WorkloadHistory extends Logging {

  val FlushIntervalMs = 1000L
  /** Executions whose start time the listener keeps at most (executions running at once). */
  private val MaxRunning = 4096
  /** How long an execution that finished may wait for its end event before it is written without a wall time. */
  private val EndEventWaitMs = 5000L

  /** Where a record goes: the index root and limits of the session that planned the scan. */
  final case class Destination(root: String, maxEntries: Int, maxAgeMs: Long, spark: SparkSession)

  private final case class Entry(record: ScanRecord, to: Destination)

  /** An execution's records, by scan node (identity), until its end event. */
  private final class Pending {
    val keys: java.util.Set[AnyRef] = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap[AnyRef, java.lang.Boolean]())
    val entries = mutable.ArrayBuffer.empty[Entry]
    @volatile var finishedSeenMs: Long = -1L
  }

  private val pending = new ConcurrentHashMap[java.lang.Long, Pending]()

  /** A record planned outside an execution by a thread with job tags, until an execution with those tags starts. */
  private final case class Unattached(tags: Set[String], key: AnyRef, entry: Entry, sinceMs: Long)
  private val unattached = new ConcurrentLinkedQueue[Unattached]()
  private val queue = new ConcurrentLinkedQueue[Entry]()
  private val writeLock = new Object

  private val paused = new ThreadLocal[java.lang.Boolean] { override def initialValue(): java.lang.Boolean = false }

  /**
   * Runs `body` with the scans this thread plans recorded nowhere: the advisor's own planning
   * of the query it estimates, and its Spark jobs over the sources, are not the workload.
   */
  def unrecorded[T](body: => T): T = {
    val before = paused.get
    paused.set(true)
    try body finally paused.set(before)
  }

  /** Whether `spark` records scans (`spark.bloomindex.history.enabled`), on this thread now. */
  def enabled(spark: SparkSession): Boolean =
    !paused.get && spark.sessionState.conf.getConf(BloomIndexSQLConf.HISTORY_ENABLED)

  /**
   * Where `spark`'s records go, or None when the scan of `roots` is not recorded: a root under
   * the index root on its store (index data; where either names no store, by path), or a hidden
   * folder (a name starting with `_` or `.`: a table format's log, `_history` itself), or a blank
   * index root (refused by the commands; the query's pruning already warns of it).
   */
  def destination(spark: SparkSession, roots: Seq[String]): Option[Destination] = {
    val root = try BloomIndexConf.root(spark) catch { case NonFatal(_) => return None }
    def below(p: String, top: String) = p == top || p.startsWith(top + "/")
    val (index, indexPath) = (SourceProviders.qualifiedRoot(root), SourceProviders.normalizeRoot(root))
    val hidden = roots.exists { r =>
      val path = SourceProviders.normalizeRoot(r)
      val name = path.split('/').lastOption.getOrElse("")
      name.startsWith("_") || name.startsWith(".") || ((SourceProviders.qualifiedRoot(r), index) match {
        case (Some(stored), Some(top)) => below(stored, top)
        case _ => below(path, indexPath)
      })
    }
    if (hidden) None
    else {
      val conf = spark.sessionState.conf
      Some(Destination(root, conf.getConf(BloomIndexSQLConf.HISTORY_MAX_ENTRIES), conf.getConf(BloomIndexSQLConf.HISTORY_MAX_AGE), spark))
    }
  }

  /**
   * Keeps `record`, a scan `key` (its plan node) planned by `spark` (the planning path: memory
   * only). A node planned again in the same execution is kept once.
   */
  def add(spark: SparkSession, key: AnyRef, record: ScanRecord, to: Destination): Unit = {
    startWriter()
    val sc = spark.sparkContext
    val id = sc.getLocalProperty(SQLExecution.EXECUTION_ID_KEY)
    if (id != null) attach(id.toLong, key, Entry(record, to))
    else {
      val tags = sc.getJobTags()
      if (tags.isEmpty) queue.add(Entry(record, to))
      else unattached.add(Unattached(tags, key, Entry(record, to), record.timeMs))
    }
  }

  /** Adds `entry` to execution `executionId`'s records, unless its scan `key` is there already. */
  private def attach(executionId: Long, key: AnyRef, entry: Entry): Unit = {
    val p = pending.computeIfAbsent(executionId, _ => new Pending)
    p.synchronized {
      if (p.keys.add(key)) p.entries += entry.copy(record = entry.record.copy(executionId = Some(executionId)))
    }
  }

  /** Queues execution `id`'s records with its wall time (`wall`, when known), if it has any. */
  private def complete(id: Long, wall: Option[Long]): Unit = {
    val p = pending.remove(id)
    if (p != null) {
      p.synchronized(p.entries.foreach(e => queue.add(e.copy(record = e.record.copy(wallTimeMs = wall)))))
    }
  }

  // ---------------------------------------------------------------- the SparkContext's events

  private val registered = java.util.Collections.newSetFromMap(new java.util.WeakHashMap[SparkContext, java.lang.Boolean]())

  /** Adds the listener to `spark`'s SparkContext, once per context. */
  def register(spark: SparkSession): Unit = {
    val sc = spark.sparkContext
    if (registered.synchronized(registered.add(sc))) sc.addSparkListener(new Listener)
  }

  /**
   * Joins executions' records with their wall time; writes everything when the application
   * ends. The start times of the executions running are kept (the newest [[MaxRunning]]): an
   * adaptive query plans some of its scans only after its start event.
   */
  private final class Listener extends SparkListener {
    // Events reach a listener one at a time, in one thread.
    private val starts = new java.util.LinkedHashMap[java.lang.Long, java.lang.Long]() {
      override def removeEldestEntry(e: java.util.Map.Entry[java.lang.Long, java.lang.Long]): Boolean = size() > MaxRunning
    }

    override def onOtherEvent(event: SparkListenerEvent): Unit = event match {
      case s: SparkListenerSQLExecutionStart =>
        starts.put(s.executionId, s.time)
        if (!unattached.isEmpty && s.jobTags.nonEmpty) unattached.removeIf { u =>
          val mine = u.tags.subsetOf(s.jobTags)
          if (mine) attach(s.executionId, u.key, u.entry)
          mine
        }
      case e: SparkListenerSQLExecutionEnd =>
        val start = Option(starts.remove(e.executionId))
        complete(e.executionId, start.map(e.time - _.longValue))
      case _ => ()
    }

    override def onApplicationEnd(end: SparkListenerApplicationEnd): Unit = {
      pending.keySet().asScala.toSeq.foreach(id => complete(id, None))
      unattached.removeIf { u => queue.add(u.entry); true }
      writeQueued()
    }
  }

  // ---------------------------------------------------------------- writing

  @volatile private var writer: Thread = _

  private def startWriter(): Unit = if (writer == null) synchronized {
    if (writer == null) {
      val t = new Thread(() => {
        while (true) {
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(FlushIntervalMs))
          try {
            sweep(System.currentTimeMillis())
            writeQueued()
          } catch { case NonFatal(e) => logWarning(s"bloomindex: workload history writer: $e") }
        }
      }, "bloomindex-history-writer")
      t.setDaemon(true)
      t.start()
      writer = t
    }
  }

  /**
   * Executions that finished without their end event reaching the listener, and records whose
   * thread's tags no execution took: written without a wall time, after a wait.
   */
  private def sweep(now: Long): Unit = {
    pending.asScala.foreach { case (id, p) =>
      if (SQLExecution.getQueryExecution(id) == null) {
        if (p.finishedSeenMs < 0) p.finishedSeenMs = now
        else if (now - p.finishedSeenMs > EndEventWaitMs) complete(id, None)
      }
    }
    unattached.removeIf { u =>
      val old = now - u.sinceMs > EndEventWaitMs
      if (old) queue.add(u.entry)
      old
    }
  }

  private val warned = ConcurrentHashMap.newKeySet[String]()

  /** Writes every queued record, one file per index root. */
  private def writeQueued(): Unit = writeLock.synchronized {
    val batch = Iterator.continually(queue.poll()).takeWhile(_ != null).toVector
    batch.groupBy(_.to.root).foreach { case (root, entries) =>
      val to = entries.last.to
      try HistoryFiles.append(to.spark.sessionState.newHadoopConf(), root, entries.map(_.record), to.maxEntries, to.maxAgeMs)
      catch {
        case NonFatal(e) =>
          if (warned.add(root)) logWarning(s"bloomindex: could not write the workload history under $root " +
            s"(${entries.size} scans dropped; further failures there are not logged): $e")
      }
    }
  }

  /**
   * Writes what is recorded so far, in this thread: the events `spark`'s SparkContext posted
   * so far are first let reach the listener (for up to `waitMs`), so the executions that
   * finished are joined with their wall time (those whose end event still did not arrive are
   * written without one); executions still running stay in memory.
   */
  def flush(spark: SparkSession, waitMs: Long = 3000L): Unit = {
    ListenerBus.drain(spark.sparkContext, waitMs)
    pending.keySet().asScala.filter(id => SQLExecution.getQueryExecution(id) == null).toSeq.foreach(complete(_, None))
    writeQueued()
  }

  /**
   * `spark`'s history without waiting for anything: the records on storage (files read once per
   * JVM, [[HistoryFiles.read]]) and those this JVM has queued for its root and not written yet;
   * not the scans of executions whose end has not reached the listener (the next read has them).
   * For the fpp 'auto' choice of a refresh in a writing thread, which must not wait for Spark's
   * listener bus to drain the write's own events (docs/decisions.md).
   */
  def readNow(spark: SparkSession): Seq[ScanRecord] = {
    val conf = spark.sessionState.conf
    val root = BloomIndexConf.root(spark)
    val (maxEntries, maxAgeMs) = (conf.getConf(BloomIndexSQLConf.HISTORY_MAX_ENTRIES), conf.getConf(BloomIndexSQLConf.HISTORY_MAX_AGE))
    val stored = HistoryFiles.read(spark.sessionState.newHadoopConf(), root, maxEntries, maxAgeMs)
    val queued = queue.iterator().asScala.filter(_.to.root == root).map(_.record).toVector
    if (queued.isEmpty) stored
    // A record written between the read and the look at the queue would count twice: distinct.
    else HistoryFiles.within((stored ++ queued).distinct, maxEntries, maxAgeMs, System.currentTimeMillis())
  }

  /** `spark`'s history (its index root and limits), oldest first, after a [[flush]]. */
  def read(spark: SparkSession): Seq[ScanRecord] = {
    flush(spark)
    val conf = spark.sessionState.conf
    HistoryFiles.read(spark.sessionState.newHadoopConf(), BloomIndexConf.root(spark),
      conf.getConf(BloomIndexSQLConf.HISTORY_MAX_ENTRIES), conf.getConf(BloomIndexSQLConf.HISTORY_MAX_AGE))
  }
}
