package bloomindex.optimizer

import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import bloomindex.BloomIndexConf
import bloomindex.index.{IndexCache, IndexManager, IndexState, LoadedIndex, SourceResolver}

import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Expression, PredicateHelper}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.FILTER
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}

/**
 * Skips the files of a scan whose Bloom filters prove the scan's filter cannot match.
 *
 * Runs as a pre-CBO rule: after Spark has pushed filters down to the relation and pruned
 * partitions, so it sees `Filter(condition, LogicalRelation(HadoopFsRelation))` with the
 * partition-pruned file index, and replaces that file index by a [[BloomPrunedFileIndex]].
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
          if !rel.location.isInstanceOf[BloomPrunedFileIndex] && condition.deterministic =>
        prune(condition, l, rel).map(idx => f.copy(child = l.copy(relation = rel.copy(location = idx)(rel.sparkSession))))
          .getOrElse(f)
    }

  private def prune(condition: Expression, l: LogicalRelation, rel: HadoopFsRelation): Option[BloomPrunedFileIndex] = {
    val candidates = try BloomIndexPruning.indexesFor(spark, l, rel) catch {
      case NonFatal(e) =>
        BloomIndexPruning.warnOnce(s"bloomindex: could not look for indexes (${e.getMessage}); not pruning")
        return None
    }
    if (candidates.isEmpty) return None
    val notApplied = Seq.newBuilder[String]
    val files = rel.location.listFiles(Nil, Nil).flatMap(_.files)
    var best: Option[BloomPrunedFileIndex] = None
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
          if (best.forall(_.skipped.size < s.size)) best = Some(new BloomPrunedFileIndex(rel.location, s, info))
      }
    }
    val reasons = notApplied.result()
    best.map(b => new BloomPrunedFileIndex(b.delegate, b.skipped, b.info.copy(notApplied = reasons)))
      .orElse(if (reasons.nonEmpty) Some(new BloomPrunedFileIndex(rel.location, Set.empty,
        PruningInfo("none", -1, files.size, files.size, 0L, reasons))) else None)
  }
}

object BloomIndexPruning extends Logging {

  private val warned = ConcurrentHashMap.newKeySet[String]()

  def warnOnce(msg: String): Unit = if (warned.add(msg)) logWarning(msg)

  /** ACTIVE indexes over the relation's source, loaded (from the session cache when current). */
  def indexesFor(spark: SparkSession, l: LogicalRelation, rel: HadoopFsRelation): Seq[LoadedIndex] = {
    val manager = new IndexManager(spark)
    val fs = manager.root.getFileSystem(spark.sessionState.newHadoopConf())
    if (!fs.exists(manager.root)) return Seq.empty
    val table = l.catalogTable.map(_.identifier.unquotedString)
    val roots = rel.location.rootPaths.map(p => normalizeRoot(p.toString)).toSet
    fs.listStatus(manager.root).filter(_.isDirectory).map(_.getPath.getName).toSeq.flatMap { name =>
      try {
        val log = manager.log(name)
        log.lastActive().filter { e =>
          val s = e.spec.source
          if (s.table.isDefined) table.contains(s.table.get) || table.exists(t => s.table.get.endsWith("." + t))
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
