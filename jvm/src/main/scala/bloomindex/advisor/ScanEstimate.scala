package bloomindex.advisor

/** Files a scan keeps: the expected count and a range (about two standard deviations either side). */
final case class Kept(expected: Double, low: Double, high: Double)

/**
 * How many of one scan's listed files an index on some columns (column -> its fpp) would keep.
 * A file is kept when the filter condition, each indexed column's lookup answered by the
 * file's filter ("maybe" for a file holding a value, and for the others with probability
 * 1 - (1 - fpp)^values), may be true of it; lookups of columns without a filter, and anything
 * else in the condition, keep every file.
 */
sealed trait ScanEstimate {
  def listed: Double
  def kept(indexed: Map[String, Double]): Kept
  def skipped(indexed: Map[String, Double]): Double = math.max(0.0, listed - kept(indexed).expected)
}

object ScanEstimate {
  private[advisor] def falsePositive(fpp: Double, values: Int): Double = 1 - math.pow(1 - fpp, math.max(1, values))

  private[advisor] def combine(c: Cond, leaf: Lookup => Double): Double = c match {
    case l: Lookup => leaf(l)
    case AllOf(cs) => cs.map(combine(_, leaf)).product
    case AnyOf(cs) => 1 - cs.map(x => 1 - combine(x, leaf)).product
    case Opaque => 1.0
  }

  private def range(expected: Double, sd: Double, listed: Double): Kept =
    Kept(expected, math.max(0.0, expected - 2 * sd), math.min(listed, expected + 2 * sd))

  /**
   * A scan known by its columns and value counts only (the history): the values looked up are
   * taken as drawn from the column's distinct values, each held by [[ColumnProfile.holdFraction]]
   * of the source's files, the columns independent of each other.
   */
  final case class FromProfile(listed: Double, cond: Cond, profiles: Map[String, ColumnProfile]) extends ScanEstimate {
    def holdShare(l: Lookup): Double = profiles.get(l.column) match {
      case Some(p) if listed > 0 =>
        math.min(1.0, p.files * (1 - math.pow(1 - p.holdFraction, math.max(1, l.count))) / listed)
      case _ => 1.0
    }

    def kept(indexed: Map[String, Double]): Kept = {
      val share = combine(cond, l => indexed.get(l.column) match {
        case Some(fpp) if profiles.contains(l.column) =>
          val h = holdShare(l)
          h + (1 - h) * falsePositive(fpp, l.count)
        case _ => 1.0
      })
      val e = listed * share
      range(e, math.sqrt(listed * share * (1 - share)), listed)
    }
  }

  /**
   * A scan with its literal values (a query): for each sampled file the scan lists, whether it
   * holds one of each lookup's values, measured; the sample's expectation is scaled to the
   * files listed. The range adds the false positives' spread and, for a sample, the sampling
   * error (finite population).
   */
  final case class FromFiles(listed: Double, cond: Cond, leaves: Seq[Lookup], files: Seq[Array[Boolean]]) extends ScanEstimate {
    private val leafIndex: Map[Lookup, Int] = leaves.zipWithIndex.toMap

    def perFile(indexed: Map[String, Double]): Seq[Double] = files.map { holds =>
      combine(cond, l => indexed.get(l.column) match {
        case Some(fpp) => leafIndex.get(l).map(i => if (holds(i)) 1.0 else falsePositive(fpp, l.count)).getOrElse(1.0)
        case None => 1.0
      })
    }

    /** Files holding a value of every indexed lookup the condition needs (no false positive). */
    def holding(indexed: Map[String, Double]): Double = {
      if (files.isEmpty) return 0.0
      val exact = perFile(indexed.map { case (c, _) => c -> 0.0 })
      exact.sum * listed / files.size
    }

    def kept(indexed: Map[String, Double]): Kept = {
      if (files.isEmpty) return Kept(listed, listed, listed)
      val ps = perFile(indexed)
      val n = ps.size.toDouble
      val scale = listed / n
      val e = ps.sum * scale
      val bernoulli = ps.map(p => p * (1 - p)).sum * scale
      val sampling = if (n >= listed) 0.0 else {
        val mean = ps.sum / n
        val v = if (n > 1) ps.map(p => (p - mean) * (p - mean)).sum / (n - 1) else 0.25
        listed * listed * v / n * (1 - n / listed)
      }
      range(e, math.sqrt(bernoulli + sampling), listed)
    }
  }
}
