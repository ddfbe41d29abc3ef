package bloomindex.advisor

import bloomindex.filter.FilterAlgorithm
import bloomindex.sbbf.SbbfSizing
import bloomindex.sbbf.SbbfSizing.Sizing

/**
 * What `fpp = 'auto'` chose for one column, and why.
 *
 * @param fpp                        the false positive rate the column's filters are sized for
 * @param bytesPerFile               one file's filter at that rate (for `ndvPerFile` values)
 * @param expectedFalsePositiveFiles files a lookup reads although they hold none of its values
 *                                   (`fpp x values x files`)
 * @param expectedCostBytes          the model's cost of one lookup at that rate (see [[FppModel]])
 * @param limitedBy                  what decided: `cost` (the cost's minimum), `false positives`
 *                                   (the cap on expected false positive files), `budget` (the
 *                                   size budget), `range` (a bound of [[FppModel.MinFpp]] ..
 *                                   [[FppModel.MaxFpp]] that the other rules would have passed)
 */
final case class FppChoice(
    fpp: Double,
    bytesPerFile: Long,
    expectedFalsePositiveFiles: Double,
    expectedCostBytes: Double,
    limitedBy: String) {

  /** The filters of `files` files at this rate. */
  def totalBytes(files: Long): Long = bytesPerFile * files
}

/**
 * The cost model behind `fpp = 'auto'` (issue 31), free of Spark: the false positive rate
 * that makes a point lookup cheapest, in bytes read, for one indexed column.
 *
 * A lookup of `v` values (`lookupValuesPerQuery`: 1 for `=`, n for `IN` of n) on an index over
 * `files` files, each of `avgFileBytes` holding `ndvPerFile` distinct values, with every
 * file's filter sized for rate `p` (`B(p)` bytes, the design's and sizing's own rule):
 *
 * {{{
 *   cost(p) = v * files * probe(p)          index bytes a lookup reads: per value, one 32-byte
 *                                           block per file for the split block designs (the
 *                                           block row of the probes layout), the whole filter
 *                                           for the classic design
 *           + files * B(p) / lookupsPerBuild the filters written by a build and loaded into
 *                                           memory once (footers, caches), shared by the
 *                                           lookups one build serves
 *           + p * v * files * avgFileBytes  the files a false positive makes the scan read
 * }}}
 *
 * minimised over `p` in [[MinFpp]] .. [[MaxFpp]] (a log grid, 24 points a decade, and the two
 * bounds below), subject to
 *
 *  - expected false positive files `p * v * files <= maxFalsePositiveFiles` (default 0.1: a
 *    lookup reads at most about a tenth of a file more than the files holding its values;
 *    issue 31's goal is 1.2x the time of reading only those), so a bigger table gets a smaller
 *    rate: a fixed 0.01 over 1,000 files is 10 false positive files per lookup;
 *  - the size budget: `files * B(p) <= budgetBytes`, which wins over the cap (then the
 *    smallest rate within the budget), but not over [[MaxFpp]] (a budget too small even for
 *    it gets [[MaxFpp]], `limitedBy = budget`).
 *
 * Files cancel out of the cost's trade-off (every term grows with them): the cost alone picks
 * the same rate for 10 files as for 10,000; the cap on false positive files is what makes
 * the rate fall as the table grows. With many lookups per build (a recorded workload) the
 * load term shrinks and the cost's minimum falls below the cap: then the cost decides.
 */
object FppModel {

  /** The smallest rate `auto` chooses: below it a filter grows (~4.8 bits a value a decade) for nothing measurable. */
  val MinFpp: Double = 1e-6
  /**
   * The largest rate `auto` chooses: 0.01, the fixed default it replaced, so that `auto` never
   * makes a lookup read more files than that default would; where a size budget cannot afford
   * even 0.01 (small files of many distinct values), the filters outgrow the budget instead.
   */
  val MaxFpp: Double = 0.01
  /** Expected false positive files per lookup `auto` allows, unless the budget says otherwise. */
  val DefaultMaxFalsePositiveFiles: Double = 0.1
  /**
   * Lookups one build serves, without a recorded workload: an index is built for repeated
   * lookups; 100 makes loading the whole index once count as much as 1% of it per lookup.
   */
  val DefaultLookupsPerBuild: Double = 100.0
  /** Bytes a split block filter's probe reads in one file's filter: one block. */
  val BlockBytes: Int = 32

  private val PointsPerDecade = 24

  /**
   * The rate for one column (see the class comment for the model).
   *
   * @param files                 files the index holds (> 0)
   * @param ndvPerFile            distinct values per file (the mean; >= 0)
   * @param avgFileBytes          bytes per file (the mean; >= 0)
   * @param lookupValuesPerQuery  values a lookup probes (>= 1 counts; below 1 is taken as 1)
   * @param budgetBytes           the column's filters at most (all files), if bounded
   * @param sizing                how filters are sized ([[Sizing.Exact]] for index files)
   * @param algorithm             the filter design
   * @param lookupsPerBuild       lookups one build serves (> 0)
   * @param maxFalsePositiveFiles expected false positive files per lookup allowed (> 0)
   */
  def choose(
      files: Long,
      ndvPerFile: Double,
      avgFileBytes: Double,
      lookupValuesPerQuery: Double,
      budgetBytes: Option[Long],
      sizing: Sizing,
      algorithm: FilterAlgorithm = FilterAlgorithm.Default,
      lookupsPerBuild: Double = DefaultLookupsPerBuild,
      maxFalsePositiveFiles: Double = DefaultMaxFalsePositiveFiles): FppChoice = {
    require(files > 0, s"files: must be > 0, got $files")
    require(ndvPerFile >= 0 && !ndvPerFile.isNaN && !ndvPerFile.isInfinite, s"ndvPerFile: must be >= 0, got $ndvPerFile")
    require(avgFileBytes >= 0 && !avgFileBytes.isNaN && !avgFileBytes.isInfinite, s"avgFileBytes: must be >= 0, got $avgFileBytes")
    require(!lookupValuesPerQuery.isNaN && !lookupValuesPerQuery.isInfinite, s"lookupValuesPerQuery: not a number: $lookupValuesPerQuery")
    require(lookupsPerBuild > 0 && !lookupsPerBuild.isInfinite, s"lookupsPerBuild: must be > 0, got $lookupsPerBuild")
    require(maxFalsePositiveFiles > 0, s"maxFalsePositiveFiles: must be > 0, got $maxFalsePositiveFiles")
    budgetBytes.foreach(b => require(b >= 0, s"budgetBytes: must be >= 0, got $b"))
    val v = math.max(1.0, lookupValuesPerQuery)
    val ndv = math.max(1L, math.ceil(ndvPerFile).toLong)
    val cap = maxFalsePositiveFiles / (v * files)

    def at(target: Double): FppChoice = {
      val bytes = algorithm.numBytes(ndv, target, sizing).toLong
      // A rate even the largest filter misses is not reached: the largest filter's own rate.
      val p = if (bytes < SbbfSizing.MaxBytes) target else math.max(target, algorithm.expectedFpp(bytes.toInt, ndv, target))
      val probe = if (algorithm == FilterAlgorithm.Classic) bytes.toDouble else BlockBytes.toDouble
      val cost = v * files * probe + files * bytes / lookupsPerBuild + p * v * files * avgFileBytes
      FppChoice(p, bytes, p * v * files, cost, "cost")
    }

    val extra = Seq(cap) ++ budgetRate(files, ndv, budgetBytes, sizing, algorithm)
    val grid = (candidates() ++ extra.filter(p => p >= MinFpp && p <= MaxFpp)).distinct.sorted.map(at(_))
    def withinBudget(c: FppChoice) = budgetBytes.forall(b => c.totalBytes(files) <= b)
    // The cheapest; on a tie (sizes are steps), the larger rate: the same bytes, fewer surprises.
    def cheapest(cs: Seq[FppChoice]) = cs.minBy(c => (c.expectedCostBytes, -c.fpp))
    val inBudget = grid.filter(withinBudget)
    val feasible = inBudget.filter(_.fpp <= cap * (1 + 1e-12))
    val chosen =
      if (feasible.nonEmpty) cheapest(feasible)
      // The cap is out of reach (below MinFpp, or the budget forbids it): the smallest rate allowed.
      else if (inBudget.nonEmpty) inBudget.minBy(_.fpp)
      else return at(MaxFpp).copy(limitedBy = "budget")
    val free = cheapest(grid)
    val why =
      if (chosen.fpp < free.fpp) { if (cap < MinFpp && chosen.fpp <= MinFpp) "range" else "false positives" }
      else if (chosen.fpp > free.fpp) "budget"
      else if (chosen.fpp <= MinFpp) "range"
      else "cost"
    chosen.copy(limitedBy = why)
  }

  /** The model's cost of one lookup at rate `fpp` (for reports and tests; [[choose]] minimises it). */
  def cost(files: Long, ndvPerFile: Double, avgFileBytes: Double, lookupValuesPerQuery: Double, fpp: Double,
      sizing: Sizing, algorithm: FilterAlgorithm = FilterAlgorithm.Default,
      lookupsPerBuild: Double = DefaultLookupsPerBuild): Double = {
    val v = math.max(1.0, lookupValuesPerQuery)
    val bytes = algorithm.numBytes(math.max(1L, math.ceil(ndvPerFile).toLong), fpp, sizing).toDouble
    val probe = if (algorithm == FilterAlgorithm.Classic) bytes else BlockBytes.toDouble
    v * files * probe + files * bytes / lookupsPerBuild + fpp * v * files * avgFileBytes
  }

  /** MinFpp .. MaxFpp, [[PointsPerDecade]] a decade. */
  private def candidates(): Seq[Double] = {
    val lo = math.log10(MinFpp)
    val hi = math.log10(MaxFpp)
    val n = math.round((hi - lo) * PointsPerDecade).toInt
    (0 to n).map(i => math.pow(10, lo + (hi - lo) * i / n)).map(p => math.min(MaxFpp, math.max(MinFpp, p)))
  }

  /**
   * The smallest grid-free rate whose filters fit `budget` (bisection on the rate's log; the
   * size falls as the rate grows), if any rate in range fits: a candidate exactly at the budget.
   */
  private def budgetRate(files: Long, ndv: Long, budget: Option[Long], sizing: Sizing,
      algorithm: FilterAlgorithm): Option[Double] = budget.flatMap { b =>
    def fits(p: Double) = algorithm.numBytes(ndv, p, sizing).toLong * files <= b
    if (fits(MinFpp)) None
    else if (!fits(MaxFpp)) None
    else {
      var lo = math.log(MinFpp) // does not fit
      var hi = math.log(MaxFpp) // fits
      var i = 0
      while (i < 50) {
        val mid = (lo + hi) / 2
        if (fits(math.exp(mid))) hi = mid else lo = mid
        i += 1
      }
      Some(math.exp(hi))
    }
  }
}
