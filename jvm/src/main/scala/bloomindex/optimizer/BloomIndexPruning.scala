package bloomindex.optimizer

import scala.util.control.NonFatal

import bloomindex.BloomIndexConf
import bloomindex.index.{DeltaSource, IndexCache, IndexLog, IndexManager, LoadedIndex, SourceResolver}

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Expression, PredicateHelper, SubqueryExpression}
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
 * decision: their scan node only exists after the pre-CBO batch.
 * A file is skipped only when the index holds a row for it with the same path, size and
 * modification time, for every indexed column; new or changed files are always read.
 * Any problem with the index (missing, damaged, unreadable) means no pruning and one warning,
 * never a failed query.
 */
class BloomIndexPruning(spark: SparkSession) extends Rule[LogicalPlan] with PredicateHelper with Logging {

  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!BloomIndexConf.pruningEnabled(spark)) plan
    else plan.transformWithPruning(_.containsPattern(FILTER)) {
      case f @ Filter(condition, l @ LogicalRelation(rel: HadoopFsRelation, _, _, _, _))
          if !rel.location.isInstanceOf[BloomPrunedFileIndex] && condition.deterministic &&
            // Delta's rules and strategies match its own file index classes (data skipping,
            // deletion vectors): its scans are pruned after planning, by DeltaScanPruning.
            !DeltaSource.isDeltaRelation(rel) =>
        val table = l.catalogTable.map(_.identifier.unquotedString)
        val base = partitionPruned(condition, l, rel)
        val files = base.listFiles(Nil, Nil).flatMap(_.files).map(_.fileStatus)
        BloomIndexPruning.decide(spark, condition, table, base.rootPaths, files).map { d =>
          val idx = new BloomPrunedFileIndex(base, d.skipped, d.info)
          f.copy(child = l.copy(relation = rel.copy(location = idx)(rel.sparkSession)))
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
          splitConjunctivePredicates(condition).filter(f => f.deterministic && !SubqueryExpression.hasSubquery(f))
        val (partitionFilters, _) = DataSourceUtils.getPartitionFiltersAndDataFilters(rel.partitionSchema, filters)
        if (partitionFilters.isEmpty) c else c.filterPartitions(partitionFilters)
      case other => other
    }
}

/** Which files of a scan to skip, and what to say about it. */
final case class Decision(skipped: Set[String], info: PruningInfo)

object BloomIndexPruning extends Logging {

  /** Which of `files` the indexes on the source prove cannot match `condition`. */
  def decide(
      spark: SparkSession,
      condition: Expression,
      table: Option[String],
      rootPaths: Seq[Path],
      files: Seq[FileStatus]): Option[Decision] = {
    val candidates = try indexesFor(spark, table, rootPaths) catch {
      case NonFatal(e) =>
        warnOnce(s"bloomindex: could not look for indexes (${e.getMessage}); not pruning")
        return None
    }
    if (candidates.isEmpty) return None
    val notApplied = Seq.newBuilder[String]
    var best: Option[Decision] = None
    candidates.foreach { index =>
      FilePredicate.translate(condition, index) match {
        case Left(r) => notApplied += s"${index.spec.name}: ${r.reason}"
        case Right(pred) =>
          val skipped = Set.newBuilder[String]
          var skippedBytes = 0L
          var covered = 0
          files.foreach { f =>
            val path = SourceResolver.normalize(f.getPath)
            val entry = index.files.get(path)
            if (entry.exists(e => e.size == f.getLen && e.modificationTime == f.getModificationTime)) {
              covered += 1
              if (!pred.mayMatch(entry.get)) {
                skipped += path
                skippedBytes += f.getLen
              }
            }
          }
          val s = skipped.result()
          if (covered == 0 && files.nonEmpty) notApplied += s"${index.spec.name}: stale beyond use (no current file is indexed)"
          val info = PruningInfo(index.spec.name, index.entry.version, files.size - s.size, files.size, skippedBytes, Nil)
          if (best.forall(_.skipped.size < s.size)) best = Some(Decision(s, info))
      }
    }
    val reasons = notApplied.result()
    best.map(b => b.copy(info = b.info.copy(notApplied = reasons)))
      .orElse(if (reasons.nonEmpty) Some(Decision(Set.empty,
        PruningInfo("none", -1, files.size, files.size, 0L, reasons))) else None)
  }

  def warnOnce(msg: String): Unit = IndexLog.warnOnce(msg)

  /** ACTIVE indexes over the relation's source, loaded (from the session cache when current). */
  def indexesFor(spark: SparkSession, table: Option[String], rootPaths: Seq[Path]): Seq[LoadedIndex] = {
    val manager = new IndexManager(spark)
    val fs = manager.root.getFileSystem(spark.sessionState.newHadoopConf())
    if (!fs.exists(manager.root)) return Seq.empty
    val roots = rootPaths.map(p => normalizeRoot(p.toString)).toSet
    fs.listStatus(manager.root).filter(_.isDirectory).map(_.getPath.getName).toSeq.flatMap { name =>
      try {
        val log = manager.log(name)
        // Warm path: when the newest version is the one already loaded, no entry is re-read.
        val versions = log.versions()
        val current = versions.lastOption.flatMap(v => IndexCache.get(log.indexDir, v)).map(_.entry)
        current.orElse(log.lastActive()).filter { e =>
          val s = e.spec.source
          // A Delta table is one folder however it is named (catalog name or delta.`path`).
          if (s.format == DeltaSource.Format) s.paths.map(normalizeRoot).toSet == roots
          else if (s.table.isDefined) table.contains(s.table.get) || table.exists(t => s.table.get.endsWith("." + t))
          else table.isEmpty && s.paths.map(normalizeRoot).toSet.subsetOf(roots) ||
            s.paths.map(normalizeRoot).toSet == roots
        }.map(e => IndexCache.load(spark, log, e))
      } catch {
        case NonFatal(e) =>
          warnOnce(s"bloomindex: index '$name' is unreadable and is not used for pruning: ${e.getMessage}")
          None
      }
    }
  }

  private def normalizeRoot(p: String): String = new Path(p).toUri.getPath.stripSuffix("/")
}
