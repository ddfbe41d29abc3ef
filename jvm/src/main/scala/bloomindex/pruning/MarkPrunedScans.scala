package bloomindex.pruning


import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.datasources.v2.{BatchScanExec, FileScan}

/**
 * Before columnar transitions are inserted (so for every plan, with or without adaptive
 * execution): puts a [[BloomIndexPrunedScanExec]] above every file scan whose file list a
 * Bloom index pruned, so EXPLAIN names the index and the UI counts the skipped files.
 */
object MarkPrunedScans extends Rule[SparkPlan] {

  override def apply(plan: SparkPlan): SparkPlan = {
    // Adaptive execution applies columnar rules again to plans that hold marked scans.
    val marked = plan.collect { case w: BloomIndexPrunedScanExec => w.child }
    def isMarked(s: SparkPlan): Boolean = marked.exists(_ eq s)
    plan.transformUp {
      case s: FileSourceScanExec if !isMarked(s) =>
        s.relation.location match {
          case b: BloomPrunedFileIndex if b.info.index != "none" => BloomIndexPrunedScanExec(b.info, s)
          case _ => s
        }
      case s: BatchScanExec if !isMarked(s) =>
        s.scan match {
          case i: PrunedIcebergScan => BloomIndexPrunedScanExec(i.info, s)
          case f: FileScan => f.fileIndex match {
            case b: BloomPrunedV2FileIndex => BloomIndexPrunedScanExec(b.info, s)
            case _ => s
          }
          case _ => s
        }
    }
  }
}
