package bloomindex.pruning

import bloomindex.catalog.PruningInfo

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.bloomindex.BloomIndexSQLConf

/**
 * What Bloom indexes do to each scan of a query, in the words of EXPLAIN BLOOM INDEX and
 * `BloomIndex.explain`: each scan's provider reports the decision its pruning hook makes
 * ([[ScanPruner.explain]]), so there is no second copy of the per-format logic.
 */
object PruningReport {

  /** One entry per scan of `df`'s optimized plan: a line, then a line per index that did not apply and why. */
  def scanLines(df: DataFrame): Seq[String] = {
    val ctx = new ExplainContext(df)
    ctx.optimized.collect { case node => node }.flatMap { node =>
      ScanPruner.of(node).flatMap(_.explain(ctx, node))
    }.map(describe(_, ctx.spark.sessionState.conf.getConf(BloomIndexSQLConf.PRUNING_ENABLED)))
  }

  private def describe(e: ScanExplain, pruning: Boolean): String = e.info match {
    case None if !pruning => s"scan of ${e.what}: not pruned: pruning is off (${BloomIndexSQLConf.PRUNING_ENABLED.key})"
    case None => e.otherwise
    case Some(i) =>
      val applied =
        if (i.index == "none") s"scan of ${e.what}: no index applied; files kept ${i.filesKept}/${i.filesTotal}"
        else s"scan of ${e.what}: index ${i.index} (log version ${i.version}) kept ${i.filesKept}/${i.filesTotal} " +
          s"files, skipped ${i.filesTotal - i.filesKept} files (${i.bytesSkipped} bytes)"
      (applied +: (i.notes.map(n => s"  $n") ++ i.notApplied.map(r => s"  not applied: $r"))).mkString("\n")
  }
}
