package bloomindex.advisor

import bloomindex.filter.FilterAlgorithm
import bloomindex.sbbf.SbbfSizing.Sizing

/**
 * The fpp the advisor gives a column: [[FppModel]]'s (the cost model of `fpp = 'auto'`), with
 * the workload's lookups of the column as the lookups one build serves, rounded down to two
 * significant digits so that the statement reads well (a smaller rate: never more false
 * positives than the model allows), or up where the rate rounded down would make the filters
 * exceed the budget that chose it (larger filters: the rate the model chose is the smallest
 * that fits).
 */
object FppPick {

  def choose(files: Long, ndvPerFile: Double, avgFileBytes: Double, lookupValuesPerQuery: Double,
      budgetBytes: Option[Long], lookups: Long): FppChoice = {
    val n = math.max(1L, files)
    val c = FppModel.choose(n, math.max(0.0, ndvPerFile), math.max(0.0, avgFileBytes),
      lookupValuesPerQuery, budgetBytes, Sizing.Exact, lookupsPerBuild = math.max(1L, lookups).toDouble)
    val ndv = math.max(1L, math.ceil(math.max(0.0, ndvPerFile)).toLong)
    def fits(p: Double) = budgetBytes.forall(b => n * FilterAlgorithm.Default.numBytes(ndv, p, Sizing.Exact).toLong <= b)
    val down = roundDown(c.fpp)
    // The model's own rate over the budget (none fits): rounded down as ever.
    c.copy(fpp = if (fits(down) || budgetBytes.exists(c.totalBytes(n) > _)) down else roundUp(c.fpp))
  }

  /** `p` rounded up to two significant digits (0.0054612 -> 0.0055). */
  def roundUp(p: Double): Double = round(p, java.math.RoundingMode.UP)

  /** `p` rounded down to two significant digits (0.0023713 -> 0.0023). */
  def roundDown(p: Double): Double = round(p, java.math.RoundingMode.DOWN)

  private def round(p: Double, mode: java.math.RoundingMode): Double = {
    if (!(p > 0)) return p
    val bd = java.math.BigDecimal.valueOf(p) // the shortest decimal that reads back as p (1e-6, not 9.99...e-7)
    val scale = 2 - (bd.precision - bd.scale) // precision - scale: the digits before the point (negative below 0.1)
    val r = bd.setScale(scale, mode).doubleValue
    if (r > 0) r else p
  }
}
