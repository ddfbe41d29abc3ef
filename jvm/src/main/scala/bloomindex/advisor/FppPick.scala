package bloomindex.advisor

import bloomindex.sbbf.SbbfSizing.Sizing

/**
 * The fpp the advisor gives a column: [[FppModel]]'s (the cost model of `fpp = 'auto'`), with
 * the workload's lookups of the column as the lookups one build serves, rounded down to two
 * significant digits so that the statement reads well (a smaller rate: never more false
 * positives than the model allows).
 */
object FppPick {

  def choose(files: Long, ndvPerFile: Double, avgFileBytes: Double, lookupValuesPerQuery: Double,
      budgetBytes: Option[Long], lookups: Long): FppChoice = {
    val c = FppModel.choose(math.max(1L, files), math.max(0.0, ndvPerFile), math.max(0.0, avgFileBytes),
      lookupValuesPerQuery, budgetBytes, Sizing.Exact, lookupsPerBuild = math.max(1L, lookups).toDouble)
    c.copy(fpp = roundDown(c.fpp))
  }

  /** `p` rounded down to two significant digits (0.0023713 -> 0.0023). */
  def roundDown(p: Double): Double = {
    if (!(p > 0)) return p
    val bd = java.math.BigDecimal.valueOf(p) // the shortest decimal that reads back as p (1e-6, not 9.99...e-7)
    val scale = 2 - (bd.precision - bd.scale) // precision - scale: the digits before the point (negative below 0.1)
    val r = bd.setScale(scale, java.math.RoundingMode.DOWN).doubleValue
    if (r > 0) r else p
  }
}
