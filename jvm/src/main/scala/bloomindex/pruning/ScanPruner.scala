package bloomindex.pruning

import bloomindex.catalog.PruningInfo
import bloomindex.source.SourceProviders

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{And, Expression}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation

/**
 * A source provider's part in pruning: where in planning its scans are narrowed, and how. Each
 * hook makes its decision with `IndexCatalog.decide` and narrows the scan with the wrappers of
 * this package ([[BloomPrunedFileIndex]], [[PrunedScan]]); the rules of this package
 * ([[BloomIndexPruning]], [[BloomIndexPlanning]], [[PlannedScanPruning]]) call the hooks of the
 * provider that owns a scan, and [[PruningReport]] asks the same decision for EXPLAIN.
 */
trait ScanPruner {

  /** Pre-CBO, once the optimizer pushed filters down: `f` (a filter right on one of this provider's leaves), narrowed. */
  def pruneFiltered(spark: SparkSession, f: Filter): Option[LogicalPlan] = None

  /** Planner strategy: `plan` planned with a narrowed scan, when it is a filtered scan of this provider's (Nil: not handled). */
  def planPruned(spark: SparkSession, plan: LogicalPlan): Seq[SparkPlan] = Nil

  /** Physical, before columnar transitions: a planned scan leaf of this provider's, narrowed (None: left alone). */
  def prunePlanned(spark: SparkSession, scan: SparkPlan): Option[SparkPlan] = None

  /**
   * For EXPLAIN BLOOM INDEX and `BloomIndex.explain`: what pruning decides for `node`, a node
   * of `ctx`'s optimized plan, when it is a scan of this provider's (the same decision its hook makes).
   */
  def explain(ctx: ExplainContext, node: LogicalPlan): Option[ScanExplain]
}

object ScanPruner {

  /** The pruning hooks of the provider that owns `leaf`, if it prunes. */
  def of(leaf: LogicalPlan): Option[ScanPruner] = SourceProviders.owner(leaf).collect { case p: ScanPruner => p }

  /** Every provider's pruning hooks, in the providers' order. */
  lazy val all: Seq[ScanPruner] = SourceProviders.all.collect { case p: ScanPruner => p }

  /** The filter conjuncts a decision may use: deterministic, no subquery not run yet. */
  def usable(e: Expression): Boolean =
    e.deterministic && !e.exists(_.isInstanceOf[org.apache.spark.sql.catalyst.expressions.PlanExpression[_]])

  def conjunction(filters: Seq[Expression]): Expression = filters.reduce(And)
}

/**
 * What pruning decided for one scan, for EXPLAIN: `what` names the scan, `info` what the index
 * did (None: nothing pruned), `otherwise` the line shown when nothing was.
 */
final case class ScanExplain(what: String, info: Option[PruningInfo], otherwise: String)

/** A query being explained: its plans, computed once for every scan's report. */
final class ExplainContext(val df: DataFrame) {
  def spark: SparkSession = df.sparkSession
  lazy val optimized: LogicalPlan = df.queryExecution.optimizedPlan
  lazy val planned: SparkPlan = df.queryExecution.sparkPlan

  private lazy val v2Filters: Map[LogicalPlan, Seq[Expression]] = optimized.collect {
    case Filter(condition, s: DataSourceV2ScanRelation) => (s: LogicalPlan) -> bloomindex.compat.SparkShim.conjuncts(condition)
  }.toMap

  /** The filter conjuncts right above V2 scan `scan` in the optimized plan (what a strategy sees). */
  def filtersOn(scan: LogicalPlan): Seq[Expression] = v2Filters.getOrElse(scan, Nil)
}

/** A scan whose file list a Bloom index narrowed: what it did, for EXPLAIN and the UI ([[MarkPrunedScans]]). */
trait PrunedScan {
  def info: PruningInfo
}

/**
 * A pruned file index (or a scan that leaves out files itself, Iceberg's) whose decision a run
 * of the plan in a later execution makes sure of again (`check`: the skipped files against
 * storage, the session's `lower()` folding; [[RecheckedScan]]).
 */
trait CheckedSkips extends PrunedScan {
  def skipped: bloomindex.catalog.SkippedFiles
  def check: Option[bloomindex.catalog.StorageCheck]
  /** The files the index's delegate lists now that it skips. */
  def skippedNow(): IndexedSeq[org.apache.hadoop.fs.FileStatus]
  /** The same index skipping `skipped` instead, described by `info`, checked no more. */
  def skipping(skipped: bloomindex.catalog.SkippedFiles, info: PruningInfo): CheckedSkips
  /**
   * The files this index skips in the listing its delegate holds now, found when asked, even
   * after the delegate lists again: what a later run of a scan whose files were fixed now
   * checks. By default, the delegate's listing when asked ([[skippedNow]]).
   */
  def skippedAsListedNow(): () => IndexedSeq[org.apache.hadoop.fs.FileStatus] = () => skippedNow()
  /** The same index reading only the files at `changed` (normalized paths), described by `info`, checked no more. */
  def only(changed: Set[String], info: PruningInfo): CheckedSkips = skipping(bloomindex.catalog.SkippedFiles.AllBut(changed), info)
  /** A copy of `scan` (a scan that reads an index of this kind) reading this index instead; None for another scan. */
  def inScan(scan: org.apache.spark.sql.execution.SparkPlan): Option[org.apache.spark.sql.execution.SparkPlan]
}

object CheckedSkips {

  /**
   * The files of `delegate`'s listing as it holds it now that `skipped` skips, found when asked
   * (the listing is held, not copied); None for a delegate that holds no listing.
   */
  def inHeldListing(delegate: org.apache.spark.sql.execution.datasources.FileIndex,
      skipped: bloomindex.catalog.SkippedFiles): Option[() => IndexedSeq[org.apache.hadoop.fs.FileStatus]] =
    delegate match {
      case p: org.apache.spark.sql.execution.datasources.PartitioningAwareFileIndex =>
        bloomindex.compat.SparkShim.listingOf(p).collect { case m: scala.collection.Map[_, _] =>
          val listing = m.asInstanceOf[scala.collection.Map[_, Array[org.apache.hadoop.fs.FileStatus]]]
          () => listing.valuesIterator.flatMap(_.iterator).filter(f => skipped.contains(f)).toIndexedSeq
        }
      case _ => None
    }
}
