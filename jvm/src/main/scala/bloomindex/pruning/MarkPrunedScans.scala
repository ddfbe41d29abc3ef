package bloomindex.pruning

import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.datasources.v2.{BatchScanExec, FileScan}

/**
 * Before columnar transitions are inserted (so for every plan, with or without adaptive
 * execution): puts a [[BloomIndexPrunedScanExec]] above every scan whose file list a Bloom
 * index pruned (its file index or its scan is a [[PrunedScan]]), so EXPLAIN names the index and
 * the UI counts the skipped files.
 */
object MarkPrunedScans extends Rule[SparkPlan] {

  override def apply(plan: SparkPlan): SparkPlan = {
    // Adaptive execution applies columnar rules again to plans that hold marked scans.
    val marked = plan.collect { case w: BloomIndexPrunedScanExec => w.child }
    def isMarked(s: SparkPlan): Boolean = marked.exists(_ eq s)
    def mark(s: SparkPlan, pruned: Any): SparkPlan = pruned match {
      case p: PrunedScan if p.info.index != "none" => BloomIndexPrunedScanExec(p.info, s)
      case _ => s
    }
    plan.transformUp {
      case s: FileSourceScanExec if !isMarked(s) => mark(s, s.relation.location)
      case s: BatchScanExec if !isMarked(s) => s.scan match {
        case f: FileScan => mark(s, f.fileIndex)
        case other => mark(s, other)
      }
    }
  }
}
