package bloomindex.sbbf

/**
 * What a filter's bits say about it, for filters built elsewhere (Parquet footers), whose
 * distinct count is not known.
 *
 *  - [[measuredFpp]]: the false positive rate of this very bitset for a random absent value.
 *    A probe picks a block uniformly and one bit per word, each uniform over the word's 32
 *    bits (the salts are odd, so `x * salt` is a bijection of 32-bit values), and passes when
 *    all eight are set: the mean over blocks of `prod_i popcount(word_i) / 32`.
 *  - [[estimateNdv]]: each distinct value sets one of 32 bits in each of the 8 words of one
 *    of `z` blocks, so a bit stays clear after `n` values with probability
 *    `exp(-n / (32 z))`; with a fraction `f` of the bits set, `n = -32 z ln(1 - f)`.
 */
object SbbfStats {

  def measuredFpp(f: Sbbf): Double = {
    val w = f.words
    var sum = 0.0
    var b = 0
    while (b < w.length) {
      var p = 1.0
      var i = 0
      while (i < 8) { p *= Integer.bitCount(w(b + i)) / 32.0; i += 1 }
      sum += p
      b += 8
    }
    sum / f.numBlocks
  }

  def setBits(f: Sbbf): Long = {
    var n = 0L
    f.words.foreach(x => n += Integer.bitCount(x))
    n
  }

  /** The distinct count the bits suggest; `Long.MaxValue` for a filter with every bit set. */
  def estimateNdv(f: Sbbf): Long = {
    val total = f.numBytes.toLong * 8
    val set = setBits(f)
    if (set >= total) Long.MaxValue
    else math.round(-32.0 * f.numBlocks * math.log1p(-set.toDouble / total))
  }
}
