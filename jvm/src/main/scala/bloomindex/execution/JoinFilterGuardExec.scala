package bloomindex.execution

import bloomindex.catalog.Coverage
import bloomindex.errors.BloomIndexErrors

import org.apache.hadoop.fs.Path
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, SortOrder}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{BaseSubqueryExec, FileSourceScanExec, InputAdapter, LeafExecNode, SQLExecution, SparkPlan, UnaryExecNode, WholeStageCodegenExec}
import org.apache.spark.sql.execution.adaptive.QueryStageExec
import org.apache.spark.sql.execution.datasources.v2.{BatchScanExec, FileScan}
import org.apache.spark.sql.execution.exchange.{Exchange, ReusedExchangeExec}
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Sits above a scan that may read a join filter's indexed side where Spark reads that side again
 * at each run of the plan (no exchange keeps its output). Spark decides a join filter once per
 * plan, at its first run (an operator's RDD is built once), and keeps a broadcast's or a
 * shuffle's output: a DataFrame collected twice joins, at its second run, the rows its first run
 * filtered with the indexed side's files as they are then. Those rows answer only for the files
 * the filter held. So where the filter was applied, the guard asks the filter's [[Coverage]]:
 * at the scan's first run, whether it lists the files the filter held, as they were; after it
 * (its file list is then fixed), before each later action, whether those files that are still
 * there are unchanged, and the JVM's default zone the indexed column is read in is the filter's.
 * Where not (a file rewritten in place, a listing refreshed before the scan first ran, a zone
 * changed by `TimeZone.setDefault`), the action fails with `BLOOM_INDEX_JOIN_FILTER_OUTDATED` instead of answering
 * without the matches of the changed rows. Rows and batches pass through unchanged.
 *
 * Checked at each action's reset of the plan's metrics (`Dataset.withAction`, before any job)
 * and when the node runs (once a plan). A run that resets no metrics (an RDD of the DataFrame
 * kept and run again, `toLocalIterator`, the partitions a cache computes later) is not checked:
 * docs/limitations.md.
 */
case class JoinFilterGuardExec(coverages: Seq[Coverage], child: SparkPlan) extends UnaryExecNode {

  override def output: Seq[Attribute] = child.output
  override def outputPartitioning: Partitioning = child.outputPartitioning
  override def outputOrdering: Seq[SortOrder] = child.outputOrdering
  override def supportsColumnar: Boolean = child.supportsColumnar

  // Whether the scan below ran: its file list is then fixed (a file scan lists once per plan).
  @transient @volatile private var ran: Boolean = false

  private def verify(): Unit = {
    val now = sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY)
    coverages.foreach { c =>
      val problem =
        if (!c.wasApplied) None
        else if (!ran) Some("listing is not the one the filter held, or its files changed on storage").filterNot(_ => c.holds(now))
        else if (c.appliedInAnotherRun(now)) {
          c.zoneChanged.map(why => s"column reads other values now: $why")
            .orElse(Some("files the filter held changed on storage").filterNot(_ => c.filesUnchanged(now)))
        }
        else None
      problem.foreach(what => throw BloomIndexErrors.joinFilterOutdated(c.display, s"its $what"))
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
 * After [[PlanBloomFilters]]: a [[JoinFilterGuardExec]] above each scan of `plan` that is not
 * below an exchange and may read the indexed side of a join filter of the plan (found in `plan`
 * and in the plans of the query stages an adaptive plan holds). A columnar rule, so it sees an
 * adaptive plan stage by stage: a stage's exchange at its root, the final stage with the stages
 * it reads as leaves.
 */
object GuardJoinFilterSides extends Rule[SparkPlan] {

  override def apply(plan: SparkPlan): SparkPlan = {
    val filters = reachable(plan).flatMap {
      case b: BloomFilterExec => b.checks.flatMap(_.coverage)
      case _ => Nil
    }
    // By identity: a coverage records the runs that applied its filter.
    val coverages = filters.foldLeft(Vector.empty[Coverage])((acc, c) => if (acc.exists(_ eq c)) acc else acc :+ c)
    if (coverages.isEmpty) plan else guard(plan, coverages, below = false)
  }

  private def keeps(p: SparkPlan): Boolean = p match {
    // Shuffles and broadcasts (their `...Like` traits extend Exchange), and subqueries' results.
    case _: Exchange | _: BaseSubqueryExec => true
    case _ => false
  }

  /** Every node of `plan`, and of the plans of the query stages and reused exchanges in it. */
  private def reachable(plan: SparkPlan): Seq[SparkPlan] = plan.flatMap {
    case s: QueryStageExec => s +: reachable(s.plan)
    case r: ReusedExchangeExec => r +: reachable(r.child)
    case other => Seq(other)
  }

  private def guard(p: SparkPlan, coverages: Seq[Coverage], below: Boolean): SparkPlan = p match {
    case g: JoinFilterGuardExec => g // adaptive execution applies columnar rules again
    case s if !below && isScan(s) =>
      val cs = coverages.filter(c => mayRead(s, c))
      if (cs.isEmpty) s else JoinFilterGuardExec(cs, s)
    case other =>
      val children = other.children.map(guard(_, coverages, below || keeps(other)))
      if (children.corresponds(other.children)(_ eq _)) other else other.withNewChildren(children)
  }

  /** A node that reads a source's rows itself (a pruned scan's marker holds its scan). */
  private def isScan(p: SparkPlan): Boolean = p match {
    case _: bloomindex.pruning.BloomIndexPrunedScanExec | _: LeafExecNode => true
    case _ => false
  }

  /**
   * Whether `scan` may read the indexed side of `c`: a file scan whose roots meet the indexed
   * side's or whose table has its name, another scan of a table of that name; nothing else
   * reads an indexed source's files (a join filter's indexed side is one of these).
   */
  private def mayRead(scan: SparkPlan, c: Coverage): Boolean = scan match {
    case m: bloomindex.pruning.BloomIndexPrunedScanExec => mayRead(m.child, c)
    case w: WholeStageCodegenExec => mayRead(w.child, c)
    case i: InputAdapter => mayRead(i.child, c)
    case s: FileSourceScanExec =>
      meet(s.relation.location.rootPaths, c.roots) || sameName(s.tableIdentifier.map(_.table), c)
    case s: BatchScanExec => s.scan match {
      case f: FileScan => meet(f.fileIndex.rootPaths, c.roots) || sameName(Option(s.table).map(_.name), c)
      case _ => c.table.isEmpty || sameName(Option(s.table).map(_.name), c)
    }
    case _ => false
  }

  // The last part of the names, case aside: a table is named with or without its catalog and
  // database, quoted or not; a namesake read by mistake only costs a check.
  private def sameName(name: Option[String], c: Coverage): Boolean = {
    def last(n: String) = n.split('.').last.replace("`", "").toLowerCase(java.util.Locale.ROOT)
    name.exists(n => c.table.exists(t => last(t) == last(n)))
  }

  private def meet(a: Seq[Path], b: Seq[Path]): Boolean = b.nonEmpty && {
    // The path alone: a scan's roots and the filter's may spell the scheme otherwise.
    def norm(p: Path) = Option(p.toUri.getPath).getOrElse(p.toString).stripSuffix("/")
    val bs = b.map(norm)
    a.map(norm).exists(x => bs.exists(y => x == y || x.startsWith(y + "/") || y.startsWith(x + "/")))
  }
}
