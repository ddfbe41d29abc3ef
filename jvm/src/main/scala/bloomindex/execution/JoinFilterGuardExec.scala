package bloomindex.execution

import bloomindex.catalog.Coverage
import bloomindex.errors.BloomIndexErrors

import org.apache.hadoop.fs.Path
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, SortOrder}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{BaseSubqueryExec, FileSourceScanExec, InputAdapter, LeafExecNode, LocalTableScanExec, RangeExec, SQLExecution, SparkPlan, UnaryExecNode, WholeStageCodegenExec}
import org.apache.spark.sql.execution.adaptive.QueryStageExec
import org.apache.spark.sql.execution.columnar.InMemoryTableScanExec
import org.apache.spark.sql.execution.datasources.v2.{BatchScanExec, FileScan}
import org.apache.spark.sql.execution.exchange.{BroadcastExchangeLike, Exchange, ReusedExchangeExec, ShuffleExchangeLike}
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Sits above a scan of a join filter's indexed side where the filtered side's rows are kept
 * between runs of the plan and the indexed side's are not: a DataFrame collected twice whose
 * filtered side is broadcast (or shuffled, or a bucketed indexed side needs no exchange) reads
 * the indexed side's files again at the second run, and joins them with the rows the first run
 * filtered. Those rows answer only for the files the filter held then. So before each later run
 * it asks the filter's [[Coverage]] whether the files the scan reads are still those, as they
 * were; where they are not (a file rewritten in place, a listing refreshed before the scan first
 * ran), the run fails with `BLOOM_INDEX_JOIN_FILTER_OUTDATED` instead of answering without the
 * matches of the changed rows. Rows and batches pass through unchanged.
 *
 * Checked at each action's reset of the plan's metrics (`Dataset.withAction`, before any job)
 * and when the node runs.
 */
case class JoinFilterGuardExec(coverages: Seq[Coverage], child: SparkPlan) extends UnaryExecNode {

  override def output: Seq[Attribute] = child.output
  override def outputPartitioning: Partitioning = child.outputPartitioning
  override def outputOrdering: Seq[SortOrder] = child.outputOrdering
  override def supportsColumnar: Boolean = child.supportsColumnar

  // Whether the scan below ran: its file list is then fixed (a file scan lists once per plan),
  // taken from a listing the coverage held (checked here then), and only its files' bytes can
  // change; before, it lists when it first runs.
  @transient @volatile private var ran: Boolean = false

  private def verify(): Unit = {
    val now = sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY)
    coverages.foreach { c =>
      if (c.keptFromAnotherRun(now)) {
        val (holds, what) =
          if (ran) (c.filesUnchanged(now), "files the filter held changed on storage")
          else (c.holds(now), "listing is no longer the one the filter held, or its files changed on storage")
        if (!holds) throw BloomIndexErrors.joinFilterOutdated(c.display, s"its $what")
      }
    }
  }

  override protected def doExecute(): RDD[InternalRow] = {
    verify()
    ran = true
    child.execute()
  }

  override protected def doExecuteColumnar(): RDD[ColumnarBatch] = {
    verify()
    ran = true
    child.executeColumnar()
  }

  override def resetMetrics(): Unit = {
    super.resetMetrics()
    verify()
  }

  override def simpleString(maxFields: Int): String =
    s"JoinFilterGuard [${coverages.map(_.display).distinct.mkString(", ")}]"

  override protected def withNewChildInternal(newChild: SparkPlan): JoinFilterGuardExec = copy(child = newChild)
}

/**
 * After [[PlanBloomFilters]]: `plan` with its join filters below an exchange marked `kept`, and
 * a [[JoinFilterGuardExec]] above each scan that is not below one and may read the indexed side
 * of a kept filter (found in `plan` and in the stages of an adaptive plan it holds). A columnar
 * rule, so it sees an adaptive plan stage by stage: a stage's exchange at its root, the final
 * stage with the stages it reads as leaves.
 */
object GuardJoinFilterSides extends Rule[SparkPlan] {

  override def apply(plan: SparkPlan): SparkPlan = {
    val marked = markKept(plan, kept = false)
    val kept = reachable(marked).flatMap {
      case b: BloomFilterExec if b.kept => b.checks.flatMap(_.coverage)
      case _ => Nil
    }.distinct
    if (kept.isEmpty) marked else guard(marked, kept, below = false)
  }

  private def keeps(p: SparkPlan): Boolean = p match {
    case _: Exchange | _: ShuffleExchangeLike | _: BroadcastExchangeLike | _: BaseSubqueryExec => true
    case _ => false
  }

  private def withChildren(p: SparkPlan, children: Seq[SparkPlan]): SparkPlan =
    if (children.corresponds(p.children)(_ eq _)) p else p.withNewChildren(children)

  private def markKept(p: SparkPlan, kept: Boolean): SparkPlan = {
    val out = withChildren(p, p.children.map(markKept(_, kept || keeps(p))))
    out match {
      case b: BloomFilterExec if b.kept != kept && b.checks.exists(_.coverage.isDefined) => b.copy(kept = kept)
      case other => other
    }
  }

  /** Every node of `plan`, and of the plans of the query stages and reused exchanges in it. */
  private def reachable(plan: SparkPlan): Seq[SparkPlan] = plan.flatMap {
    case s: QueryStageExec => s +: reachable(s.plan)
    case r: ReusedExchangeExec => r +: reachable(r.child)
    case other => Seq(other)
  }

  private def guard(p: SparkPlan, kept: Seq[Coverage], below: Boolean): SparkPlan = p match {
    case g: JoinFilterGuardExec => g // adaptive execution applies columnar rules again
    case s if !below && isScan(s) =>
      val cs = kept.filter(c => mayRead(s, c))
      if (cs.isEmpty) s else JoinFilterGuardExec(cs, s)
    case other => withChildren(other, other.children.map(guard(_, kept, below || keeps(other))))
  }

  /** A node that reads a source's rows itself (a pruned scan's marker holds its scan). */
  private def isScan(p: SparkPlan): Boolean = p match {
    case _: bloomindex.pruning.BloomIndexPrunedScanExec => true
    case _: LeafExecNode => true
    case _ => false
  }

  /**
   * Whether `scan` may read the indexed side of `c`: a file scan whose roots meet the indexed
   * side's; any other scan of a source, where in doubt.
   */
  private def mayRead(scan: SparkPlan, c: Coverage): Boolean = scan match {
    case m: bloomindex.pruning.BloomIndexPrunedScanExec => mayRead(m.child, c)
    case w: WholeStageCodegenExec => mayRead(w.child, c)
    case i: InputAdapter => mayRead(i.child, c)
    case s: FileSourceScanExec => meet(s.relation.location.rootPaths, c.roots)
    case s: BatchScanExec => s.scan match {
      case f: FileScan => meet(f.fileIndex.rootPaths, c.roots)
      case _ => true
    }
    case _: LocalTableScanExec | _: RangeExec | _: InMemoryTableScanExec | _: QueryStageExec | _: ReusedExchangeExec => false
    case _ => true
  }

  private def meet(a: Seq[Path], b: Seq[Path]): Boolean = b.isEmpty || {
    // The path alone: a scan's roots and the filter's may spell the scheme otherwise.
    def norm(p: Path) = Option(p.toUri.getPath).getOrElse(p.toString).stripSuffix("/")
    val bs = b.map(norm)
    a.map(norm).exists(x => bs.exists(y => x == y || x.startsWith(y + "/") || y.startsWith(x + "/")))
  }
}
