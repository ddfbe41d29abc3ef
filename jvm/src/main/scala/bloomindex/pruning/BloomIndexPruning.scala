package bloomindex.pruning

import bloomindex.catalog.IndexCatalog
import bloomindex.compat.SparkShim
import bloomindex.source.{DeltaSource, FileRelationProvider}

import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf
import org.apache.spark.sql.catalyst.expressions.{Expression, SubqueryExpression}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.FILTER
import org.apache.spark.sql.execution.datasources.{CatalogFileIndex, DataSourceUtils, FileIndex, HadoopFsRelation, LogicalRelation}

/**
 * Skips the files of a scan whose Bloom filters prove the scan's filter cannot match.
 *
 * Runs as a pre-CBO rule, once, after the operator optimizations have pushed filters down to
 * `Filter(condition, LogicalRelation(HadoopFsRelation))`, and replaces the relation's file
 * index by a [[BloomPrunedFileIndex]]. A catalog table's index is first narrowed to the
 * partitions the condition selects (as Spark would do right after), and the scan's partition
 * filters still reach it through the wrapper.
 * V2 file scans are pruned by the planner strategy [[BloomIndexV2Pruning]], with the same
 * decision: their scan node only exists after the pre-CBO batch. Which index applies, to which
 * columns and files, is the [[IndexCatalog]]'s decision.
 */
class BloomIndexPruning(spark: SparkSession) extends Rule[LogicalPlan] with Logging {

  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!spark.sessionState.conf.getConf(BloomIndexSQLConf.PRUNING_ENABLED)) plan
    else plan.transformWithPruning(_.containsPattern(FILTER)) {
      case f @ Filter(condition, l @ LogicalRelation(rel: HadoopFsRelation, _, _, _, _))
          if !rel.location.isInstanceOf[BloomPrunedFileIndex] && condition.deterministic &&
            // Delta's rules and strategies match its own file index classes (data skipping,
            // deletion vectors): its scans are pruned after planning, by DeltaScanPruning.
            !DeltaSource.isDeltaRelation(rel) =>
        val base = partitionPruned(condition, l, rel)
        val files = base.listFiles(Nil, Nil).flatMap(_.files).map(_.fileStatus)
        val scan = FileRelationProvider.of(rel, l.catalogTable)
        new IndexCatalog(spark).decide(condition, scan, files).map { d =>
          val idx = new BloomPrunedFileIndex(base, d.skipped, d.info)
          f.copy(child = SparkShim.withRelation(l, rel.copy(location = idx)(rel.sparkSession)))
        }.getOrElse(f)
    }

  /**
   * A catalog table's file index, narrowed to the partitions the condition selects, as Spark's
   * PruneFileSourcePartitions (which runs after this rule) would: so that only those
   * partitions are listed and probed. Other file indexes are returned as they are.
   */
  private def partitionPruned(condition: Expression, l: LogicalRelation, rel: HadoopFsRelation): FileIndex =
    rel.location match {
      case c: CatalogFileIndex if rel.partitionSchema.nonEmpty =>
        // The condition sits right on the relation: its attributes are the relation's own.
        val filters =
          SparkShim.conjuncts(condition).filter(f => f.deterministic && !SubqueryExpression.hasSubquery(f))
        val (partitionFilters, _) = DataSourceUtils.getPartitionFiltersAndDataFilters(rel.partitionSchema, filters)
        if (partitionFilters.isEmpty) c else c.filterPartitions(partitionFilters)
      case other => other
    }
}

