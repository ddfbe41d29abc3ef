package bloomindex.pruning

import scala.reflect.ClassTag

import bloomindex.catalog.PruningInfo

import org.apache.hadoop.fs.FileStatus
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, SortOrder}
import org.apache.spark.sql.catalyst.plans.physical.{Partitioning, UnknownPartitioning}
import org.apache.spark.sql.execution.{ColumnarToRowExec, SQLExecution, SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Sits right above a file scan that a Bloom index pruned and changes nothing in the data: it
 * names the index in the plan and carries the SQL metrics "files skipped by Bloom index" and
 * "files kept by Bloom index" for the Spark UI (file scans have no room for metrics of ours).
 * Rows or batches pass through as the scan produces them; it is not part of whole-stage code
 * generation, which is a boundary here at no cost (the scan below is the stage's input).
 */
case class BloomIndexPrunedScanExec(info: PruningInfo, child: SparkPlan) extends UnaryExecNode {

  override def output: Seq[Attribute] = child.output
  override def outputPartitioning: Partitioning = child.outputPartitioning
  override def outputOrdering: Seq[SortOrder] = child.outputOrdering
  override def supportsColumnar: Boolean = child.supportsColumnar

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "filesSkipped" -> SQLMetrics.createMetric(sparkContext, "files skipped by Bloom index"),
    "filesKept" -> SQLMetrics.createMetric(sparkContext, "files kept by Bloom index"))

  // A bucketed scan's partition i holds bucket i, an ordered scan's rows come in order: rows read
  // beside either are refused (RoutedScanRDD).
  private def keyed: Boolean = !child.outputPartitioning.isInstanceOf[UnknownPartitioning]
  private def ordered: Boolean = child.outputOrdering.nonEmpty

  // The RDDs this node returned (rows, batches), which each later action on the plan routes;
  // the files their fixed file list skips, as listed when it was fixed (RecheckedScan); whether
  // the node ran (a later action posts its metrics again).
  @transient @volatile private var rowsRun: RoutedScanRDD[InternalRow] = _
  @transient @volatile private var batchesRun: RoutedScanRDD[ColumnarBatch] = _
  @transient @volatile private var skippedAsFixed: Option[() => IndexedSeq[FileStatus]] = None
  @transient @volatile private var ran: Boolean = false
  // Set where the first run found the session's settings decoding the columns otherwise than the
  // decision (RecheckedScan.unprunedAtFirstRun): the node reads every file from then on.
  @transient @volatile private var unprunedRun: Option[PruningInfo] = None

  // A V2 scan whose files were all skipped plans as a scan of rows (it has no partition to read
  // batches from); its copy that reads changed files may read batches: made rows here.
  private def rowsOf(scan: SparkPlan): RDD[InternalRow] = scan match {
    case s if s.supportsColumnar && !child.supportsColumnar => ColumnarToRowExec(s).execute()
    case s => s.execute()
  }

  private def batchesOf(scan: SparkPlan): RDD[ColumnarBatch] =
    if (scan.supportsColumnar) scan.executeColumnar()
    else throw new IllegalStateException(s"bloomindex: ${info.index}: the scan of the skipped files found changed " +
      s"reads rows where the scan as planned reads batches (${scan.nodeName})")

  /**
   * Sets what a run starting now reads beside the scan as planned: the skipped files found
   * changed on storage since the plan was decided in another execution ([[RecheckedScan]]); and
   * posts the run's metrics.
   */
  private def routeRun(): Unit = {
    val executionId = sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY)
    unprunedRun.foreach { run => postMetrics(run, executionId); return }
    val extra = RecheckedScan.extraFor(child, executionId, skippedAsFixed)
    postMetrics(extra.fold(info)(_._2), executionId)
    val (rows, batches) = (rowsRun, batchesRun)
    if (rows != null) rows.route(extra.map(e => rowsOf(e._1)))
    if (batches != null) batches.route(extra.map(e => batchesOf(e._1)))
  }

  private def postMetrics(run: PruningInfo, executionId: String): Unit = {
    metrics("filesSkipped").set((run.filesTotal - run.filesKept).toLong)
    metrics("filesKept").set(run.filesKept.toLong)
    SQLMetrics.postDriverMetricUpdates(sparkContext, executionId, metrics.values.toSeq)
  }

  // Only a decision that a run may have to read past (it checked files against storage, or the
  // session's lower() folding or decoding settings) has its RDD routed (`keep` holds it for later
  // actions); otherwise the scan's own. A first run under settings that decode the decision's
  // columns otherwise reads, for good, a copy of the scan that skips nothing (`of`: its RDD).
  private def firstRun[T: ClassTag](own: RDD[T], of: SparkPlan => RDD[T])(keep: RoutedScanRDD[T] => Unit): RDD[T] = {
    ran = true
    val executionId = sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY)
    lazy val unpruned = RecheckedScan.unprunedAtFirstRun(child)
    if (!RecheckedScan.checkable(child)) { routeRun(); own }
    else if (unpruned.isDefined) {
      val (copy, run, why) = unpruned.get
      bloomindex.catalog.IndexCatalog.warnOnce(s"bloomindex: ${info.index}: $why; the files it skips are read")
      unprunedRun = Some(run)
      postMetrics(run, executionId)
      of(copy)
    } else {
      val rdd = RoutedScanRDD(own, keyed, ordered)
      skippedAsFixed = RecheckedScan.skippedAsListedNow(child)
      keep(rdd)
      routeRun()
      rdd
    }
  }

  override protected def doExecute(): RDD[InternalRow] = firstRun(rowsOf(child), rowsOf)(rowsRun = _)

  override protected def doExecuteColumnar(): RDD[ColumnarBatch] = firstRun(child.executeColumnar(), batchesOf)(batchesRun = _)

  /**
   * Spark builds this node's RDD once and runs it again for each later action on the same plan
   * (a DataFrame collected twice), with the files its first run chose; it resets the plan's
   * metrics before every action (`Dataset.withAction`, also through an adaptive plan to its
   * final stage). So here, once the RDD exists, the run about to start checks the skipped files
   * again as a first run in another execution would, and the RDD is routed for it.
   */
  override def resetMetrics(): Unit = {
    super.resetMetrics()
    if (ran) routeRun()
  }

  override def simpleString(maxFields: Int): String =
    s"BloomIndexPruned [index=${info.index}, version=${info.version}, " +
      s"files kept ${info.filesKept} of ${info.filesTotal}]"

  override protected def withNewChildInternal(newChild: SparkPlan): BloomIndexPrunedScanExec =
    copy(child = newChild)
}
