package bloomindex.sbbf


import java.nio.{ByteBuffer, ByteOrder}

/**
 * A bitset in Parquet's layout (little-endian 32-bit words, eight per 32-byte block), read
 * where it lies: what its bits say about a filter built elsewhere (a Parquet footer's), whose
 * distinct count is not known, and how to halve it.
 *
 *  - [[measuredFpp]]: the false positive rate of this very bitset for a random absent value.
 *    A probe picks a block uniformly and one bit per word, each uniform over the word's 32
 *    bits (the salts are odd, so `x * salt` is a bijection of 32-bit values), and passes when
 *    all eight are set: the mean over blocks of `prod_i popcount(word_i) / 32`.
 *  - [[estimateNdv]]: each distinct value sets one of 32 bits in each of the 8 words of one
 *    of `z` blocks, so a bit stays clear after `n` values with probability
 *    `exp(-n / (32 z))`; with a fraction `f` of the bits set, `n = -32 z ln(1 - f)`.
 *  - [[fold]]: a value's block is `((h >>> 32) * z) >>> 32`; for an even `z` that is twice
 *    its block at `z / 2` plus 0 or 1, and the bits inside a block do not depend on `z`. So
 *    OR-ing blocks `2j` and `2j + 1` into block `j` gives exactly the filter the same values
 *    would have built at half the size.
 */
object SbbfBits {

  /** [[measuredFpp]] and [[setBits]] in one pass. */
  def stats(bitset: Array[Byte], offset: Int, numBytes: Int): (Double, Long) = {
    SbbfSizing.checkNumBytes(numBytes)
    val b = ByteBuffer.wrap(bitset, offset, numBytes).order(ByteOrder.LITTLE_ENDIAN)
    // Per block, the product of the eight popcounts (at most 32^8 = 2^40) in integers.
    var sum = 0.0
    var set = 0L
    var block = offset
    val end = offset + numBytes
    while (block < end) {
      var p = 1L
      var i = 0
      while (i < 4) {
        val w = b.getLong(block + 8 * i)
        val lo = Integer.bitCount(w.toInt)
        val hi = Integer.bitCount((w >>> 32).toInt)
        p *= lo * hi
        set += lo + hi
        i += 1
      }
      sum += p.toDouble
      block += 32
    }
    (sum / (1L << 40) / (numBytes / 32), set)
  }

  def measuredFpp(bitset: Array[Byte], offset: Int, numBytes: Int): Double = stats(bitset, offset, numBytes)._1

  def setBits(bitset: Array[Byte], offset: Int, numBytes: Int): Long = stats(bitset, offset, numBytes)._2

  /** The distinct count the bits suggest; `Long.MaxValue` for a filter with every bit set. */
  def estimateNdv(bitset: Array[Byte], offset: Int, numBytes: Int): Long =
    ndvFromSetBits(setBits(bitset, offset, numBytes), numBytes)

  def ndvFromSetBits(set: Long, numBytes: Int): Long = {
    val total = numBytes.toLong * 8
    if (set >= total) Long.MaxValue
    else math.round(-32.0 * (numBytes / 32) * math.log1p(-set.toDouble / total))
  }

  /** The same filter at half the size (see above); `numBytes / 32` must be even. */
  def fold(bitset: Array[Byte], offset: Int, numBytes: Int): Array[Byte] = {
    require(numBytes % 64 == 0, s"numBytes: an even number of blocks is needed to fold, got $numBytes bytes")
    val out = new Array[Byte](numBytes / 2)
    // OR is the same in any byte order: 8 bytes at a time.
    val in = ByteBuffer.wrap(bitset)
    val to = ByteBuffer.wrap(out)
    var j = 0
    while (j < out.length) {
      val from = offset + 2 * (j - j % 32) + j % 32 // byte j % 32 of block j / 32 <- blocks 2(j / 32), +1
      to.putLong(j, in.getLong(from) | in.getLong(from + 32))
      j += 8
    }
    out
  }


}
