package bloomindex.advisor

import bloomindex.filter.FilterAlgorithm
import bloomindex.sbbf.SbbfSizing.Sizing

/**
 * The fpp the advisor gives a recommended column, behind one call so that the cost model of
 * `fpp = 'auto'` (FppModel, when this branch has it) is the one place it is decided.
 * Until then: of a grid of rates, the one with the least bytes read per query, counting the
 * false positive files' bytes and the column's filters (read once per query when not cached),
 * within the budget when one is given.
 */
object FppPick {

  final case class Pick(fpp: Double, bytesPerFile: Double, expectedFalsePositiveFiles: Double)

  val Grid: Seq[Double] = Seq(0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0005, 0.0001)

  def choose(files: Long, ndvPerFile: Double, avgFileBytes: Double, lookupValuesPerQuery: Double,
      budgetBytes: Option[Long], sizing: Sizing = Sizing.Exact): Pick = {
    val ndv = math.max(1L, math.round(ndvPerFile))
    val m = math.max(1.0, lookupValuesPerQuery)
    val picks = Grid.map { f =>
      val perFile = FilterAlgorithm.Default.numBytes(ndv, f, sizing).toDouble
      val fpFiles = files * (1 - math.pow(1 - f, m))
      Pick(f, perFile, fpFiles)
    }
    val fits = budgetBytes match {
      case Some(b) => picks.filter(_.bytesPerFile * files <= b)
      case None => picks
    }
    val from = if (fits.nonEmpty) fits else Seq(picks.head)
    from.minBy(p => p.expectedFalsePositiveFiles * avgFileBytes + p.bytesPerFile * files)
  }
}
