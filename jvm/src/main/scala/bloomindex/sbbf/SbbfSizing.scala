package bloomindex.sbbf

/**
 * How many bytes a split block Bloom filter needs for `ndv` distinct values at a false
 * positive probability `fpp`. The spec's estimate: `m = -8 ndv / ln(1 - fpp^(1/8))` bits.
 *
 * Two rules:
 *  - [[Sizing.PowerOfTwo]], for filters a Parquet reader may see: Arrow C++'s rule (the
 *    bits rounded up to the next power of two, clamped to 32 bytes .. 128 MiB). parquet-java
 *    rounds the bits to a block first with an off-by-one mask, so just below a power of two
 *    it can pick twice the size Arrow picks; we follow Arrow (see SbbfSizingSuite).
 *  - [[Sizing.Exact]], for the index's own files: the smallest multiple of 32 bytes whose
 *    false positive rate, computed for a split block filter ([[blockedFpp]]), meets the
 *    target. The spec's formula above is a classic Bloom filter's and undershoots a blocked
 *    one (9.7 bits per value for 1% where the spec measures 10.5), so it is not used here.
 */
object SbbfSizing {

  sealed trait Sizing { def name: String }
  object Sizing {
    case object PowerOfTwo extends Sizing { val name = "power-of-two" }
    case object Exact extends Sizing { val name = "exact" }

    def fromName(name: String): Sizing = name.toLowerCase(java.util.Locale.ROOT) match {
      case "power-of-two" | "power_of_two" | "pow2" | "parquet" => PowerOfTwo
      case "exact" => Exact
      case other => throw new IllegalArgumentException(
        s"sizing: unknown sizing '$other' (expected 'exact' or 'power-of-two')")
    }
  }

  val MinBytes: Int = 32
  val MaxBytes: Int = 128 * 1024 * 1024

  /** The spec's bit count for `ndv` values at `fpp`, before any rounding. */
  def optimalBits(ndv: Long, fpp: Double): Double = {
    checkNdv(ndv)
    checkFpp(fpp)
    -8.0 * ndv / math.log(1 - math.pow(fpp, 1.0 / 8))
  }

  def numBytes(ndv: Long, fpp: Double, sizing: Sizing): Int = sizing match {
    case Sizing.PowerOfTwo => powerOfTwoBytes(ndv, fpp)
    case Sizing.Exact => exactBytes(ndv, fpp)
  }

  def powerOfTwoBytes(ndv: Long, fpp: Double): Int = {
    val m = optimalBits(ndv, fpp)
    val maxBits = MaxBytes.toLong * 8
    // Truncating the estimate, as Arrow does, before rounding up to a power of two.
    // An fpp so small that 1 - fpp^(1/8) rounds to 1 divides by log(1) = 0: the largest filter.
    var bits = if (m.isNaN || m.isInfinite || m > maxBits) maxBits else m.toLong
    bits = math.max(bits, MinBytes.toLong * 8)
    if ((bits & (bits - 1)) != 0) bits = java.lang.Long.highestOneBit(bits) << 1
    (math.min(bits, maxBits) / 8).toInt
  }

  def exactBytes(ndv: Long, fpp: Double): Int = {
    checkNdv(ndv)
    checkFpp(fpp)
    val key = ExactKey(ndv, fpp)
    val known = exactKnown.get(key)
    if (known != null) return known.intValue
    val bytes = searchExactBytes(ndv, fpp)
    if (exactKnown.size >= ExactKnownMax) exactKnown.clear()
    exactKnown.put(key, Integer.valueOf(bytes))
    bytes
  }

  /**
   * [[exactBytes]] already found, by (ndv, fpp): its search evaluates [[blockedFpp]] about 22
   * times (about 90 microseconds), and a build asks once per file and column, mostly for few
   * distinct pairs (the synthetic index of a million files of bench/scale_million.py spent about 90 s in it). Forgotten all at once past
   * [[ExactKnownMax]] pairs.
   */
  private final case class ExactKey(ndv: Long, fpp: Double)
  private val exactKnown = new java.util.concurrent.ConcurrentHashMap[ExactKey, Integer]()
  private val ExactKnownMax = 1 << 16

  private def searchExactBytes(ndv: Long, fpp: Double): Int = {
    // blockedFpp falls as blocks grow: binary search the smallest count meeting the target.
    var lo = 1
    var hi = MaxBytes / 32
    if (blockedFpp(hi, ndv) > fpp) return MaxBytes
    while (lo < hi) {
      val mid = lo + (hi - lo) / 2
      if (blockedFpp(mid, ndv) <= fpp) hi = mid else lo = mid + 1
    }
    lo * 32
  }

  /**
   * False positive rate of a split block filter of `numBlocks` blocks holding `ndv` distinct
   * hashes: a probe lands in a block holding `i` values with Poisson probability
   * (mean `ndv / numBlocks`), and passes when each of the 8 words has its bit set, each word
   * having had `i` random bits out of 32 set: `sum_i P(i) (1 - (31/32)^i)^8`.
   */
  private val SaturatedLoad = 2000.0

  def blockedFpp(numBlocks: Int, ndv: Long): Double = {
    require(numBlocks > 0, s"numBlocks: must be > 0, got $numBlocks")
    checkNdv(ndv)
    if (ndv == 0) return 0.0
    val lambda = ndv.toDouble / numBlocks
    // Past ~1500 values a block has every bit of every word set but for a chance under e^-40:
    // the rate is 1 to double precision (and the sum below would take ~lambda steps).
    if (lambda > SaturatedLoad) return 1.0
    val lo = math.max(0, (lambda - 12 * math.sqrt(lambda) - 20).toInt)
    val hi = (lambda + 12 * math.sqrt(lambda) + 40).toInt
    val logLambda = math.log(lambda)
    val logMiss = math.log(31.0 / 32.0)
    var logFact = (1 until lo).map(i => math.log(i.toDouble)).sum // log((i - 1)!) entering the loop at i = lo
    var sum = 0.0
    var i = lo
    while (i <= hi) {
      if (i > 0) logFact += math.log(i.toDouble)
      val p = math.exp(i * logLambda - lambda - logFact)
      sum += p * math.pow(-math.expm1(i * logMiss), 8)
      i += 1
    }
    math.min(1.0, sum)
  }

  /** The expected false positive rate of a filter of `numBytes` holding `ndv` values. */
  def expectedFpp(numBytes: Int, ndv: Long): Double = {
    checkNumBytes(numBytes)
    blockedFpp(numBytes / 32, ndv)
  }

  def checkFpp(fpp: Double): Unit =
    if (!(fpp > 0.0 && fpp < 1.0)) {
      throw new IllegalArgumentException(s"fpp: must be in (0, 1), got $fpp")
    }

  def checkNdv(ndv: Long): Unit =
    if (ndv < 0) throw new IllegalArgumentException(s"ndv: must be >= 0, got $ndv")

  def checkNumBytes(numBytes: Int): Unit =
    if (numBytes < MinBytes || numBytes > MaxBytes || numBytes % 32 != 0) {
      throw new IllegalArgumentException(
        s"numBytes: must be a multiple of 32 between $MinBytes and $MaxBytes, got $numBytes")
    }
}
