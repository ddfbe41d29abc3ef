package bloomindex.pruning

import scala.util.control.NonFatal

import bloomindex.catalog.IndexCatalog
import bloomindex.compat.SparkShim
import bloomindex.source.{DeltaProvider, DeltaSource}

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.expressions.{And, Expression, PlanExpression}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}

/**
 * Bloom index pruning for Delta Lake scans, on the physical plan.
 *
 * Delta plans its scans with its own rules and strategies, which match its own file index
 * classes: data skipping (`PrepareDeltaScan`, pre-CBO) replaces the table's
 * `TahoeLogFileIndex` by a prepared index of the files its statistics keep, and the deletion
 * vector strategy recognises a scan by its `TahoeFileIndex` to add the filter that drops deleted
 * rows. Wrapping the index in the logical plan (as [[BloomIndexPruning]] does for plain file
 * sources) would hide it from both, and a hidden deletion vector is a wrong answer. So Delta
 * scans are pruned here, once Delta has planned them: the scan's (already data-skipped) file
 * index is wrapped in a [[BloomPrunedFileIndex]], which lists what Delta lists minus the files
 * the Bloom index proves cannot match the scan's data filters. The files it keeps are Delta's
 * own objects, with the deletion vector descriptors Delta attached to them.
 *
 * The decision is the one plain sources use: a file is skipped only when the index holds it with
 * the same path, size and modification time (for Delta, as its log records them), so files of a
 * time-travelled snapshot that the index holds are pruned and files it does not hold are read.
 * Any problem means no pruning, never a failed query.
 */
class DeltaScanPruning(spark: SparkSession) extends Rule[SparkPlan] {

  override def apply(plan: SparkPlan): SparkPlan =
    plan.transformUp {
      case s: FileSourceScanExec if DeltaSource.isDeltaIndex(s.relation.location) => prune(s)
    }

  private def prune(s: FileSourceScanExec): SparkPlan =
    DeltaScanPruning.prunedIndex(spark, s).map { idx =>
      SparkShim.withRelation(s, s.relation.copy(location = idx)(s.relation.sparkSession))
    }.getOrElse(s)
}

object DeltaScanPruning {

  private def usable(e: Expression): Boolean =
    e.deterministic && !e.exists(_.isInstanceOf[PlanExpression[_]])

  /** The pruned file index for a planned Delta scan, or None when no index applies. */
  def prunedIndex(spark: SparkSession, s: FileSourceScanExec): Option[BloomPrunedFileIndex] = {
    val dataFilters = s.dataFilters.filter(usable)
    if (dataFilters.isEmpty || !spark.sessionState.conf.getConf(BloomIndexSQLConf.PRUNING_ENABLED)) return None
    try {
      val location = s.relation.location
      // Dynamic partition pruning filters hold subqueries not run yet: list without them.
      val files = location.listFiles(s.partitionFilters.filter(usable), dataFilters)
        .flatMap(_.files).map(_.fileStatus)
      new IndexCatalog(spark).decide(dataFilters.reduce(And), DeltaProvider.ofScan(s), files)
        .map(d => new BloomPrunedFileIndex(location, d.skipped, d.info))
    } catch {
      case NonFatal(e) =>
        IndexCatalog.warnOnce(s"bloomindex: Delta scan not pruned (${e.getMessage})")
        None
    }
  }
}
